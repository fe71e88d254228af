/**
 * The registry of kinds: every kind edgesync manages, in dependency order (what others refer to
 * first). The observer lists each of them, the loader accepts their documents, the planner plans
 * them, and import, status, metrics, the JSON Schema and the manifest reference enumerate them
 * from here. A kind is added by adding its definition to `KINDS` (see ./definition.ts).
 */
import type { Declared, KindDefinition, LiveRecord } from './definition.js';
import { OWN_PLANNER_KINDS } from './own-planners.js';
import { SECRET } from './secret.js';
import { VAULT } from './vault.js';

export type {
  Declared,
  FieldRule,
  ImportedNames,
  KindDefinition,
  LiveRecord,
  Readiness,
  Reference,
  ResolveReference,
} from './definition.js';
export { addressOf } from './definition.js';

/** Every registered kind, in dependency order (`order`). */
export const KINDS: readonly KindDefinition[] = [...OWN_PLANNER_KINDS, VAULT, SECRET].sort(
  (a, b) => a.order - b.order,
);

const BY_MANIFEST_KIND = new Map(KINDS.flatMap((k) => k.manifestKinds.map((m) => [m, k] as const)));

/** The definition of a manifest `kind:` value (`ReservedDomain`, `BotUser`), if registered. */
export function kindOfManifest(manifestKind: string): KindDefinition | undefined {
  return BY_MANIFEST_KIND.get(manifestKind);
}

/** The kinds the generic planner plans from their fields (every kind without its own planner). */
export const GENERIC_KINDS: readonly KindDefinition<Declared, LiveRecord>[] = KINDS.filter(
  (k) => k.planner === undefined,
);
