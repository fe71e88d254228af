/**
 * Secrets (`/vault_secrets`, `secret_`; account-resources.md section 3): a value in a vault that
 * a traffic policy reads by name, `${secrets.get('vault', 'name')}`. Planned generically
 * (src/plan/generic.ts), owned through the owner mark in `metadata`, pruned like endpoints.
 *
 * - The manifest `name` is the secret's name in its vault. The service keeps names unique only
 *   within a vault, but a manifest name is unique per kind in a directory: two secrets of one
 *   name in two vaults cannot both be declared in one directory (a located "duplicate" error).
 *   The address is `secret.<name>`.
 * - `vault:` names a Vault (declared, or live by its name): its ID is sent as `vault_id`, the
 *   placeholder of its create when the plan creates it. A secret never moves to another vault in
 *   place: a new `vault:` replaces it (delete, then create).
 * - `value` comes only from `{ env }` or `{ file }` (an inline value is a located error) and is
 *   never read back: it is a write-only field, compared through the keyed digest the loader
 *   computes under the controller's key and the planner keeps in `metadata` (`edgesync/digest`).
 * - A value written outside Git shows as a `last_updated_by` (`writer`) other than the actor
 *   kept beside the digest (`edgesync/by`, bound into it): drift, rewritten in enforce mode.
 */
import { z } from 'zod';
import { describedText, labels, refable } from '../manifest/modules.js';
import type { Declared, KindDefinition, LiveRecord, Reference } from './definition.js';
import { ensureField, liveText, serviceName, suspendField } from './vault.js';

const DESCRIPTION =
  "A secret in a vault, read by policies as ${secrets.get('vault', 'name')}; its value only from { env } or { file }, compared through a keyed digest. A new vault replaces it.";

export const SecretSchema = z
  .strictObject({
    kind: z.literal('Secret'),
    name: serviceName('secret').meta({
      description: "The secret's name in its vault (unique among the directory's secrets).",
    }),
    vault: serviceName('vault').meta({
      description: 'The name of the Vault holding it (declared, or live). A new vault replaces it.',
    }),
    value: refable(
      z
        .string()
        .min(1, { error: 'must not be empty' })
        .refine((v) => Buffer.byteLength(v, 'utf8') <= 16 * 1024, {
          error: 'must be at most 16 KiB',
        })
        .meta({
          description:
            'The value, from { env: NAME } or { file: PATH } only (never inline); never read back, compared through a keyed digest. Required unless ensure: absent.',
        }),
    ).optional(),
    description: describedText().optional(),
    metadata: labels(),
    ensure: ensureField(),
    suspend: suspendField(),
  })
  .meta({ description: DESCRIPTION });

type SecretDeclared = Declared & z.output<typeof SecretSchema>;

/** The reference a secret makes to its vault. */
function vaultReference(d: Declared): Reference {
  return { kind: 'vault', name: (d as SecretDeclared).vault, path: ['vault'], liveSatisfies: true };
}

/** The ID of the vault a live secret is in. */
function liveVaultId(l: LiveRecord): string {
  const vault = l.vault as { id?: unknown } | undefined;
  return typeof vault?.id === 'string' ? vault.id : '';
}

/** Who last wrote a live secret: `last_updated_by.id` (a `{id, uri}` reference). */
function lastWriter(l: LiveRecord): string | undefined {
  const by = l.last_updated_by as { id?: unknown } | null | undefined;
  return typeof by?.id === 'string' && by.id !== '' ? by.id : undefined;
}

export const SECRET: KindDefinition = {
  kind: 'secret',
  plural: 'secrets',
  manifestKinds: ['Secret'],
  description: DESCRIPTION,
  schema: SecretSchema,
  api: {
    list: 'listSecrets',
    create: 'createVaultSecret',
    update: 'updateVaultSecret',
    delete: 'deleteVaultSecret',
  },
  ownership: { by: 'metadata' },
  fields: [
    { name: 'name', desired: (d) => d.name, live: (l) => liveText(l, 'name') },
    {
      name: 'vault_id',
      desired: (d, resolve) => resolve(vaultReference(d)),
      live: liveVaultId,
      replace: true,
      createOnly: true,
    },
    {
      name: 'value',
      desired: (d) => (d as SecretDeclared).value,
      live: () => undefined,
      writeOnly: true,
      sensitive: true,
    },
    {
      name: 'description',
      desired: (d) => (d as SecretDeclared).description ?? '',
      live: (l) => liveText(l, 'description'),
    },
  ],
  writer: lastWriter,
  refersTo: ['vault'],
  references: (d) => [vaultReference(d)],
  // The vault by the name import gave it (else its name on the service); the value, never read
  // back, as an empty string import makes an `{ env }` reference to fill in.
  toManifest: (l, names) => {
    const description = liveText(l, 'description');
    return {
      vault: names('vault', liveVaultId(l)) ?? liveText(l, 'vault_name'),
      value: '',
      ...(description === '' ? {} : { description }),
    };
  },
  prune: true,
  order: 31,
};
