/**
 * The registry of kinds: every kind edgesync manages, in dependency order (what others refer to
 * first). The observer lists each of them, the loader accepts their documents, the planner plans
 * them, and import, status, metrics, the JSON Schema and the manifest reference enumerate them
 * from here. A kind is added by adding its definition to `KINDS` (see ./definition.ts).
 */
import { EdgesyncError } from '../errors.js';
import { CERTIFICATE_AUTHORITY } from './certificate-authority.js';
import type { ChildCollection, Declared, KindDefinition, LiveRecord } from './definition.js';
import { IP_POLICY } from './ip-policy.js';
import { OWN_PLANNER_KINDS } from './own-planners.js';
import { RESERVED_DOMAIN } from './reserved-domain.js';
import { SECRET } from './secret.js';
import { VAULT } from './vault.js';

export type {
  ChildCollection,
  Declared,
  DeclaredChild,
  FieldRule,
  ImportedNames,
  KindApi,
  KindDefinition,
  LiveRecord,
  Readiness,
  Reference,
} from './definition.js';
export { addressOf } from './definition.js';

/** Every registered kind, in dependency order (`order`). */
export const KINDS: readonly KindDefinition[] = [
  ...OWN_PLANNER_KINDS,
  RESERVED_DOMAIN as unknown as KindDefinition,
  IP_POLICY,
  CERTIFICATE_AUTHORITY,
  VAULT,
  SECRET,
].sort((a, b) => a.order - b.order);

const BY_KIND = new Map(KINDS.map((k) => [k.kind, k]));

/** The definition of a plan kind (`reserved_domain`); throws for an unknown one (a bug). */
export function kindNamed(kind: string): KindDefinition {
  const found = BY_KIND.get(kind);
  if (found === undefined) throw new EdgesyncError('ES_INTERNAL', `unknown kind ${kind}`);
  return found;
}

const BY_MANIFEST_KIND = new Map(KINDS.flatMap((k) => k.manifestKinds.map((m) => [m, k] as const)));

/** The definition of a manifest `kind:` value (`ReservedDomain`, `BotUser`), if registered. */
export function kindOfManifest(manifestKind: string): KindDefinition | undefined {
  return BY_MANIFEST_KIND.get(manifestKind);
}

/** The kinds the generic planner plans from their fields (every kind without its own planner). */
export const GENERIC_KINDS: readonly KindDefinition<Declared, LiveRecord>[] = KINDS.filter(
  (k) => k.planner === undefined,
);

/** Every child collection of a registered kind (IP rules), with its parent kind. */
export const CHILD_COLLECTIONS: readonly {
  readonly parent: KindDefinition;
  readonly children: ChildCollection;
}[] = KINDS.flatMap((k) => (k.children === undefined ? [] : [{ parent: k, children: k.children }]));
