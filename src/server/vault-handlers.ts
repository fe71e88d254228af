/**
 * The vault operations (`/vaults`, `vault_`) and their secrets' (`/vault_secrets`, `secret_`,
 * listed account-wide, and per vault under `/vaults/{id}/secrets`), with the rules of
 * account-resources.md section 3: names (23000-23002, 24000-24002), unique names (23004 per
 * account, 24005 per vault), values (24003 empty, 24004 over 16 KiB), the vault a secret goes in
 * (24006, 24008, 24009; never changed by an update), the limits (23005, 24007) and a vault that
 * still holds secrets (23003). A secret's value is sealed the moment it arrives
 * (./secret-seal.ts) and no operation returns it.
 */
import { z } from 'zod';
import { ERROR_CODE, ID_PREFIX, utf8Bytes } from '../hosted/edge-api.js';
import {
  ACCOUNT_ID_PREFIX,
  ACCOUNT_LIMITS,
  type AccountErrorCode,
  VAULT_ERROR_CODE as CODE,
} from './account-codes.js';
import {
  checkFixedFields,
  checkNotEmpty,
  describedCel,
  describedFields,
  describedJson,
  describedWrite,
  JsonCache,
  lookup,
  updatedAt,
} from './account-common.js';
import { RequestError } from './errors.js';
import {
  type Call,
  type HandlerDeps,
  json,
  list,
  noContent,
  type Reply,
} from './handler-common.js';
import { filteredList } from './list-filter.js';
import { rfc3339Seconds, type SecretRec, type VaultRec } from './model.js';
import type { Renderer } from './render.js';
import { obj } from './schema-blocks.js';
import type { AccountState } from './store.js';
import { parseBody } from './validate.js';

const NAME_PATTERN = /^[A-Za-z0-9_/.]+$/;

const VAULT_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'created_at',
  'updated_at',
  'name',
  'description',
  'metadata',
]);
const SECRET_FIELDS: ReadonlySet<string> = new Set([...VAULT_FIELDS, 'vault_id']);

// Names and values are checked in the handlers, each rule with its own code.
const vaultWriteSchema = obj({ name: z.string().optional(), ...describedFields });
const secretUpdateSchema = obj({
  name: z.string().optional(),
  value: z.string().optional(),
  ...describedFields,
});
const secretCreateSchema = secretUpdateSchema.extend({
  vault_id: z.string().optional(),
  vault_name: z.string().optional(),
});

type NameCodes = {
  readonly empty: AccountErrorCode;
  readonly long: AccountErrorCode;
  readonly chars: AccountErrorCode;
};
const VAULT_NAME: NameCodes = {
  empty: CODE.vaultNameEmpty,
  long: CODE.vaultNameTooLong,
  chars: CODE.vaultNameChars,
};
const SECRET_NAME: NameCodes = {
  empty: CODE.secretNameEmpty,
  long: CODE.secretNameTooLong,
  chars: CODE.secretNameChars,
};

/** A vault's or a secret's name: non-empty, at most 64 characters of `a-zA-Z0-9_/.`. */
function checkName(name: string | undefined, what: string, codes: NameCodes): string {
  if (name === undefined || name === '') {
    throw new RequestError(400, codes.empty, `${what} name must not be empty`);
  }
  if ([...name].length > ACCOUNT_LIMITS.nameChars) {
    throw new RequestError(
      400,
      codes.long,
      `${what} name must be at most ${ACCOUNT_LIMITS.nameChars} characters`,
    );
  }
  if (!NAME_PATTERN.test(name)) {
    throw new RequestError(
      400,
      codes.chars,
      `${what} name may only hold letters, digits, "_", "/" and "."`,
    );
  }
  return name;
}

/** A secret's value: not empty (24003), at most 16 KiB (24004). Never quoted in a message. */
function checkValue(value: string | undefined): string {
  if (value === undefined || value === '') {
    throw new RequestError(400, CODE.emptyValue, 'value must not be empty');
  }
  if (utf8Bytes(value) > ACCOUNT_LIMITS.secretValueBytes) {
    throw new RequestError(
      400,
      CODE.valueTooLarge,
      `value must be at most ${ACCOUNT_LIMITS.secretValueBytes} bytes`,
    );
  }
  return value;
}

function checkVaultNameFree(account: AccountState, name: string, selfId?: string): void {
  for (const vault of account.vaults.values()) {
    if (vault.name === name && vault.id !== selfId) {
      throw new RequestError(
        400,
        CODE.vaultNameTaken,
        `a vault named ${name} already exists (${vault.id})`,
      );
    }
  }
}

function checkSecretNameFree(
  account: AccountState,
  vault: VaultRec,
  name: string,
  selfId?: string,
) {
  for (const secret of account.secretsOf(vault.id)) {
    if (secret.name === name && secret.id !== selfId) {
      throw new RequestError(
        400,
        CODE.secretNameTaken,
        `vault ${vault.name} already has a secret named ${name} (${secret.id})`,
      );
    }
  }
}

/** The vault a new secret goes in: by ID (24006) or by name (24009), one of them given (24008). */
function vaultFor(
  account: AccountState,
  b: { vault_id?: string | undefined; vault_name?: string | undefined },
): VaultRec {
  if (b.vault_id === undefined && b.vault_name === undefined) {
    throw new RequestError(
      400,
      CODE.noVault,
      'give the vault of the secret: vault_id or vault_name',
    );
  }
  let vault: VaultRec | undefined;
  if (b.vault_id !== undefined) {
    vault = account.vaults.get(b.vault_id);
    if (vault === undefined) {
      throw new RequestError(
        400,
        CODE.unknownVaultId,
        `vault_id ${b.vault_id}: no such vault on this account`,
      );
    }
  }
  if (b.vault_name !== undefined) {
    const named = [...account.vaults.values()].find((v) => v.name === b.vault_name);
    if (named === undefined) {
      throw new RequestError(
        400,
        CODE.unknownVaultName,
        `vault_name ${b.vault_name}: no such vault on this account`,
      );
    }
    if (vault !== undefined && vault.id !== named.id) {
      throw new RequestError(
        400,
        ERROR_CODE.invalidValue,
        `vault_id ${vault.id} and vault_name ${b.vault_name} name different vaults`,
      );
    }
    vault = named;
  }
  return vault as VaultRec;
}

const vaultOf = (call: Call): VaultRec =>
  lookup(call, 'vault', (id) => call.account.vaults.get(id));
const secretOf = (call: Call): SecretRec =>
  lookup(call, 'secret', (id) => call.account.secrets.get(id));

/** Read shapes, cached by record identity. A secret's shape has no value, sealed or not. */
class VaultRenderer {
  readonly #render: Renderer;
  readonly #cache = new JsonCache();
  /** A secret's JSON holds its vault's name, which a rename changes: kept with the name. */
  readonly #secrets = new WeakMap<SecretRec, { vaultName: string; json: string }>();

  constructor(render: Renderer) {
    this.#render = render;
  }

  vaultRef(id: string) {
    return this.#render.ref(`vaults/${id}`, id);
  }

  /** An actor: a service user (`bot_`) under its own collection, the account's owner a user. */
  principalRef(id: string) {
    const collection = id.startsWith(ID_PREFIX.botUser) ? 'service_users' : 'users';
    return this.#render.ref(`${collection}/${id}`, id);
  }

  vault(rec: VaultRec): string {
    return this.#cache.of(rec, () => ({
      id: rec.id,
      uri: this.vaultRef(rec.id).uri,
      created_at: rec.created_at,
      updated_at: rec.updated_at,
      name: rec.name,
      ...describedJson(rec),
      created_by: rec.created_by,
      last_updated_by: rec.last_updated_by,
    }));
  }

  /** `vaultName`: the secret's vault's name now (a renamed vault renames it in every secret). */
  secret(rec: SecretRec, vaultName: string): string {
    const cached = this.#secrets.get(rec);
    if (cached?.vaultName === vaultName) return cached.json;
    const json = JSON.stringify({
      id: rec.id,
      uri: this.#render.ref(`vault_secrets/${rec.id}`, rec.id).uri,
      created_at: rec.created_at,
      updated_at: rec.updated_at,
      name: rec.name,
      ...describedJson(rec),
      created_by: this.principalRef(rec.created_by),
      last_updated_by: this.principalRef(rec.last_updated_by),
      vault: this.vaultRef(rec.vault_id),
      vault_name: vaultName,
    });
    this.#secrets.set(rec, { vaultName, json });
    return json;
  }
}

// Long on purpose: a table of one short handler per operation, over shared deps.
export function vaultHandlers({ store, render, ids, now, sealer }: HandlerDeps) {
  const view = new VaultRenderer(render);
  const vaultJson = (rec: VaultRec) => view.vault(rec);
  const secretJson = (account: AccountState) => (rec: SecretRec) =>
    view.secret(rec, account.vaults.get(rec.vault_id)?.name ?? '');
  return {
    createVault(call: Call): Reply {
      const b = parseBody(vaultWriteSchema, call.body);
      const name = checkName(b.name, 'vault', VAULT_NAME);
      checkVaultNameFree(call.account, name);
      if (call.account.vaults.size >= ACCOUNT_LIMITS.vaultsPerAccount) {
        throw new RequestError(
          400,
          CODE.tooManyVaults,
          `this account has the most vaults it may have (${ACCOUNT_LIMITS.vaultsPerAccount})`,
        );
      }
      const at = now();
      const actor = call.actor;
      const rec: VaultRec = {
        id: ids.next(ACCOUNT_ID_PREFIX.vault),
        created_at: rfc3339Seconds(at),
        updated_at: updatedAt(undefined, at),
        name,
        ...describedWrite(b),
        created_by: actor,
        last_updated_by: actor,
      };
      const durable = store.commit({ t: 'put', k: 'vault', a: call.accountId, r: rec });
      return json(201, vaultJson(rec), durable);
    },
    getVault: (call: Call): Reply => json(200, vaultJson(vaultOf(call))),
    listVaults: (call: Call): Promise<Reply> =>
      filteredList(render, call, {
        collection: call.account.vaults,
        key: 'vaults',
        path: '/vaults',
        one: vaultJson,
        fields: VAULT_FIELDS,
        cel: (rec) => ({
          id: rec.id,
          created_at: rec.created_at,
          updated_at: rec.updated_at,
          name: rec.name,
          ...describedCel(rec),
        }),
      }),
    updateVault(call: Call): Reply {
      const vault = vaultOf(call);
      const b = parseBody(vaultWriteSchema, call.body);
      checkNotEmpty(b);
      const name = b.name === undefined ? vault.name : checkName(b.name, 'vault', VAULT_NAME);
      checkVaultNameFree(call.account, name, vault.id);
      const rec: VaultRec = {
        ...vault,
        name,
        ...describedWrite(b, vault),
        updated_at: updatedAt(vault.updated_at, now()),
        last_updated_by: call.actor,
      };
      const durable = store.commit({ t: 'put', k: 'vault', a: call.accountId, r: rec });
      return json(200, vaultJson(rec), durable);
    },
    deleteVault(call: Call): Reply {
      const vault = vaultOf(call);
      const held = call.account.secretsOf(vault.id).length;
      if (held > 0) {
        throw new RequestError(
          400,
          CODE.vaultNotEmpty,
          `vault ${vault.name} still holds ${held} secret(s): delete them first`,
        );
      }
      return noContent(store.commit({ t: 'del', k: 'vault', a: call.accountId, id: vault.id }));
    },
    listVaultSecrets(call: Call): Reply {
      // Paged only: the service takes no filter here.
      const vault = vaultOf(call);
      const page = call.page ?? { beforeId: undefined, limit: 100 };
      const found = call.account.secrets.page(
        page.beforeId,
        page.limit,
        (s) => s.vault_id === vault.id,
      );
      const path = `/vaults/${vault.id}/secrets`;
      return list(render, call, call.account.secrets, 'secrets', path, secretJson(call.account), {
        found,
        query: '',
      });
    },

    createVaultSecret(call: Call): Reply {
      const b = parseBody(secretCreateSchema, call.body);
      const name = checkName(b.name, 'secret', SECRET_NAME);
      const value = checkValue(b.value);
      const vault = vaultFor(call.account, b);
      if (call.account.secretsOf(vault.id).length >= ACCOUNT_LIMITS.secretsPerVault) {
        throw new RequestError(
          400,
          CODE.tooManySecrets,
          `vault ${vault.name} holds the most secrets a vault may hold (${ACCOUNT_LIMITS.secretsPerVault})`,
        );
      }
      checkSecretNameFree(call.account, vault, name);
      const at = now();
      const actor = call.actor;
      const id = ids.next(ACCOUNT_ID_PREFIX.secret);
      const rec: SecretRec = {
        id,
        created_at: rfc3339Seconds(at),
        updated_at: updatedAt(undefined, at),
        vault_id: vault.id,
        name,
        ...describedWrite(b),
        created_by: actor,
        last_updated_by: actor,
        sealed_value: sealer.seal(id, value),
      };
      const durable = store.commit({ t: 'put', k: 'secret', a: call.accountId, r: rec });
      return json(201, secretJson(call.account)(rec), durable);
    },
    getVaultSecret: (call: Call): Reply => json(200, secretJson(call.account)(secretOf(call))),
    listSecrets(call: Call): Promise<Reply> {
      return filteredList(render, call, {
        collection: call.account.secrets,
        key: 'secrets',
        path: '/vault_secrets',
        one: secretJson(call.account),
        fields: SECRET_FIELDS,
        cel: (rec) => ({
          id: rec.id,
          created_at: rec.created_at,
          updated_at: rec.updated_at,
          name: rec.name,
          ...describedCel(rec),
          vault_id: rec.vault_id,
        }),
      });
    },
    updateVaultSecret(call: Call): Reply {
      const secret = secretOf(call);
      const body = call.body;
      checkFixedFields(
        body,
        ['vault_id', 'vault_name'],
        (field) =>
          `${field}: a secret cannot move to another vault; delete it and create it in the other`,
      );
      const b = parseBody(secretUpdateSchema, body);
      checkNotEmpty(b);
      const vault = call.account.vaults.get(secret.vault_id) as VaultRec;
      const name = b.name === undefined ? secret.name : checkName(b.name, 'secret', SECRET_NAME);
      const value = b.value === undefined ? undefined : checkValue(b.value);
      checkSecretNameFree(call.account, vault, name, secret.id);
      const rec: SecretRec = {
        ...secret,
        name,
        ...describedWrite(b, secret),
        updated_at: updatedAt(secret.updated_at, now()),
        last_updated_by: call.actor,
        sealed_value: value === undefined ? secret.sealed_value : sealer.seal(secret.id, value),
      };
      const durable = store.commit({ t: 'put', k: 'secret', a: call.accountId, r: rec });
      return json(200, secretJson(call.account)(rec), durable);
    },
    deleteVaultSecret(call: Call): Reply {
      const secret = secretOf(call);
      return noContent(store.commit({ t: 'del', k: 'secret', a: call.accountId, id: secret.id }));
    },
  };
}
