/**
 * Vaults (`/vaults`, `vault_`; account-resources.md section 3): the named holders of the secrets
 * a traffic policy reads with `${secrets.get('vault', 'name')}`. Planned generically
 * (src/plan/generic.ts).
 *
 * - The manifest `name` is the vault's name on the service, which keeps it unique per account:
 *   ownership is by that key (a vault made by hand of the same name is this manifest's; `id:`
 *   adopts one explicitly). Nothing marks a vault ours that a name alone could find, so orphans
 *   are never looked for: a vault leaves the account only through `ensure: absent`.
 * - The service refuses to delete a vault that still holds secrets (23003): its delete waits for
 *   the deletes of the secrets in the same plan (SECRET's `refersTo` names `vault`).
 */
import { z } from 'zod';
import { describedText, idPattern, labels, refable } from '../manifest/modules.js';
import type { Declared, KindDefinition, LiveRecord } from './definition.js';

/** The ID prefix of a vault. */
const VAULT_ID_PREFIX = 'vault_';

/**
 * A vault's or a secret's name: a manifest name (lowercase, the key of addresses and owner
 * marks) the service also accepts (`a-zA-Z0-9_/.`: no "-").
 */
export const SERVICE_NAME_PATTERN = /^[a-z0-9]([a-z0-9._]{0,61}[a-z0-9])?$/;

/** The manifest name of a vault or a secret, which is its name on the service too. */
export const serviceName = (what: string) =>
  z.string().regex(SERVICE_NAME_PATTERN, {
    error: `${what} names are 1-63 characters of a-z, 0-9, "." and "_" (the service refuses "-"), starting and ending with a letter or digit`,
  });

/** `ensure:` of the kinds planned generically. */
export const ensureField = () =>
  refable(z.enum(['present', 'absent']).meta({ description: 'absent: delete it.' })).default(
    'present',
  );

/** `suspend:` of the kinds planned generically. */
export const suspendField = () =>
  z.boolean().optional().meta({
    description:
      'true: edgesync leaves this resource exactly as it is live (no create, update or delete) until it is false again.',
  });

const DESCRIPTION =
  'A vault, keyed by its name on the service (unique per account); never pruned: ensure: absent deletes it, after its secrets. id adopts an existing one.';

export const VaultSchema = z
  .strictObject({
    kind: z.literal('Vault'),
    name: serviceName('vault').meta({ description: "The vault's name on the service." }),
    id: z
      .string()
      .regex(idPattern(VAULT_ID_PREFIX), { error: `must be a vault ID (${VAULT_ID_PREFIX}...)` })
      .meta({ description: 'Adopt this existing vault rather than create one.' })
      .optional(),
    description: describedText().optional(),
    metadata: labels(),
    ensure: ensureField(),
    suspend: suspendField(),
  })
  .meta({ description: DESCRIPTION });

type VaultDeclared = Declared & z.output<typeof VaultSchema>;

/** A live record's text field, absent read as empty. */
export function liveText(l: LiveRecord, field: string): string {
  const v = l[field];
  return typeof v === 'string' ? v : '';
}

export const VAULT: KindDefinition = {
  kind: 'vault',
  plural: 'vaults',
  manifestKinds: ['Vault'],
  description: DESCRIPTION,
  schema: VaultSchema,
  api: {
    list: 'listVaults',
    create: 'createVault',
    update: 'updateVault',
    delete: 'deleteVault',
  },
  ownership: { by: 'key', key: (l) => liveText(l, 'name'), declared: (d) => d.name },
  fields: [
    { name: 'name', desired: (d) => d.name, live: (l) => liveText(l, 'name') },
    {
      name: 'description',
      desired: (d) => (d as VaultDeclared).description ?? '',
      live: (l) => liveText(l, 'description'),
    },
  ],
  toManifest: (l) => {
    const description = liveText(l, 'description');
    return description === '' ? {} : { description };
  },
  prune: false,
  order: 30,
};
