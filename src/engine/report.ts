/**
 * What a daemon cycle reports besides its result, computed from the plan: the managed counts,
 * the plan by resource (for per-resource status and events) and the sensitive values that mask
 * them. At 10,000 managed edges a cycle after one file save changes one entry of these: each
 * entry is kept per plan change (the planner hands back the same change objects for edges it
 * found up to date before), masked once per list of values, so the report costs what changed.
 */
import type { LiveSnapshot } from '../api/index.js';
import { KINDS, type KindDefinition, type LiveRecord } from '../kinds/index.js';
import type { DesiredSet } from '../manifest/schema.js';
import { maskTree, secretValues } from '../manifest/secrets.js';
import type { Blocked, Plan, ResourceChange } from '../plan/index.js';
import { outlineOf } from '../plan/outline.js';
import { MANAGED_KINDS, type ManagedCounts, type PlanResources } from './contract.js';

/** Resources this controller manages once the plan is done: everything it keeps or creates. */
export function managedCounts(plan: Plan): ManagedCounts {
  const counts: Record<string, number> = Object.fromEntries(MANAGED_KINDS.map((k) => [k, 0]));
  // Counted once per plan (or from the last plan's counts: `outlineOf`).
  for (const [kind, n] of Object.entries(outlineOf(plan).managed)) counts[kind] = n;
  return counts;
}

type ChangeEntry = PlanResources['changes'][number];
type NoopEntry = PlanResources['noop'][number];
type BlockedEntry = PlanResources['blocked'][number];

/** Each change's entry, masked with the value list it was last asked for. */
const entries = new WeakMap<
  object,
  { readonly values: readonly string[]; readonly entry: ChangeEntry | NoopEntry | BlockedEntry }
>();

function entryOf<E extends ChangeEntry | NoopEntry | BlockedEntry>(
  key: ResourceChange | Blocked,
  values: readonly string[],
  make: () => E,
): E {
  const known = entries.get(key);
  if (known !== undefined && known.values === values) return known.entry as E;
  // A name read from env is a value too: masked in every entry.
  const entry = maskTree(make(), values);
  entries.set(key, { values, entry });
  return entry;
}

/**
 * The plan's differences by resource, for per-resource status and events (no values). With the
 * live snapshot, each live resource of a kind whose definition reads readiness has it too.
 */
export function resourcesOf(
  plan: Plan,
  values: readonly string[],
  live?: Pick<LiveSnapshot, 'resources'>,
  kinds: readonly KindDefinition[] = KINDS,
): PlanResources {
  const changes: ChangeEntry[] = [];
  const noop: NoopEntry[] = [];
  const ready = readinessOf(live, kinds, values);
  for (const c of plan.changes) {
    if (c.action === 'noop') {
      noop.push(
        ready(
          c,
          entryOf(c, values, () => ({
            address: c.address,
            kind: c.kind,
            ...(c.id === undefined ? {} : { id: c.id }),
          })),
        ),
      );
    } else {
      changes.push(
        ready(
          c,
          entryOf(c, values, () => ({
            address: c.address,
            kind: c.kind,
            action: c.action,
            reason: c.reason,
            ...(c.id === undefined ? {} : { id: c.id }),
            fields: c.fields.map((f) => f.path),
          })),
        ),
      );
    }
  }
  const blocked = plan.blocked.map((b) =>
    entryOf(b, values, () => ({ address: b.address, kind: b.kind, reason: b.reason })),
  );
  return { changes, blocked, noop };
}

/**
 * Adds a resource's readiness to its entry, read by its kind's definition from its live record
 * (found by ID); the entry as it is for a kind without `readiness`, or no live record. Outside
 * the kept entries: the same change may meet a resource that became ready since.
 */
function readinessOf(
  live: Pick<LiveSnapshot, 'resources'> | undefined,
  kinds: readonly KindDefinition[],
  values: readonly string[],
): <E extends ChangeEntry | NoopEntry>(c: ResourceChange, entry: E) => E {
  const byKind = new Map<string, Map<string, LiveRecord> | undefined>();
  const readers = new Map(kinds.flatMap((k) => (k.readiness ? [[k.kind, k] as const] : [])));
  return (c, entry) => {
    const kind = readers.get(c.kind);
    if (kind?.readiness === undefined || c.id === undefined) return entry;
    if (!byKind.has(c.kind)) {
      const records = live?.resources?.[c.kind];
      byKind.set(c.kind, records && new Map(records.map((r) => [r.id, r])));
    }
    const record = byKind.get(c.kind)?.get(c.id);
    if (record === undefined) return entry;
    return { ...entry, readiness: maskTree(kind.readiness(record), values) };
  };
}

/**
 * The resources of a cycle that wrote, with the live ID of each one it created: the plan made
 * before the apply has none for them, the plan of the check after it has. Without this, /status
 * showed a new resource without its ID until the next cycle.
 */
export function withLiveIds(resources: PlanResources, after: Plan): PlanResources {
  const missing = resources.changes.filter((c) => c.id === undefined);
  if (missing.length === 0) return resources;
  const ids = new Map<string, string>();
  for (const c of after.changes) if (c.id !== undefined) ids.set(c.address, c.id);
  const changes = resources.changes.map((c) => {
    const id = c.id ?? ids.get(c.address);
    return id === undefined || id === c.id ? c : { ...c, id };
  });
  return { ...resources, changes };
}

/**
 * The secret values of the set and of the live account (`secretValues`), as the same array as
 * `previous` when they did not change: the maskers (of log lines and of report entries) are
 * built once per array.
 */
export function stableValues(
  set: DesiredSet,
  live: LiveSnapshot,
  previous: readonly string[],
): readonly string[] {
  const fresh = secretValues(set, live);
  if (fresh.length === previous.length && fresh.every((v, i) => v === previous[i])) {
    return previous;
  }
  return fresh;
}
