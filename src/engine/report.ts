/**
 * What a daemon cycle reports besides its result, computed from the plan: the managed counts,
 * the plan by resource (for per-resource status and events) and the sensitive values that mask
 * them. At 10,000 managed edges a cycle after one file save changes one entry of these: each
 * entry is kept per plan change (the planner hands back the same change objects for edges it
 * found up to date before), masked once per list of values, so the report costs what changed.
 */
import type { LiveSnapshot } from '../api/index.js';
import { compareCodeUnits } from '../compare.js';
import { replacedAt } from '../in-place.js';
import { Interned } from '../intern.js';
import { KINDS, type KindDefinition, type LiveRecord } from '../kinds/index.js';
import type { DesiredSet } from '../manifest/schema.js';
import { maskTree, secretSources } from '../manifest/secrets.js';
import type { Blocked, Plan, ResourceChange } from '../plan/index.js';
import {
  lowerBound,
  outlineOf,
  type PlanPatch,
  patchesSince,
  samePlaces,
} from '../plan/outline.js';
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

/** What `resourcesOf` made last: the next plan, patched from that one, shares most changes. */
interface Made {
  readonly changes: readonly ResourceChange[];
  /**
   * Each change's entry (readiness added), at the change's index: this record's own, moved in
   * place by the next patch (`patchedEntries`), which spends this record.
   */
  readonly entries: (ChangeEntry | NoopEntry)[];
  /** The entries that are not no-ops, and those that are (what `resourcesOf` returned). */
  readonly changed: readonly ChangeEntry[];
  readonly noop: readonly NoopEntry[];
  readonly kinds: readonly KindDefinition[];
  /** The live records readiness was read from, by kind (only the kinds that read one). */
  readonly readFrom: readonly (readonly LiveRecord[] | undefined)[];
  /** The no-op entries of the kinds whose definition reads readiness (`readableOf`). */
  readonly readable: readonly NoopEntry[];
}

/** By the values they were masked with (a daemon keeps the same array while they do not change). */
const lastMade = new WeakMap<readonly string[], Made>();

/**
 * The plan's differences by resource, for per-resource status and events (no values). With the
 * live snapshot, each live resource of a kind whose definition reads readiness has it too.
 *
 * A plan patched from the last one shares its change objects, in the same (address) order: the
 * entry of a change that is the same object as one of the plan this made last, with the same
 * values and the same live records to read readiness from, is that plan's entry, found by
 * walking both plans side by side (a comparison of references, not a lookup per change).
 */
export function resourcesOf(
  plan: Plan,
  values: readonly string[],
  live?: Pick<LiveSnapshot, 'resources'>,
  kinds: readonly KindDefinition[] = KINDS,
): PlanResources {
  const readFrom = kinds.flatMap((k) => (k.readiness ? [live?.resources?.[k.kind]] : []));
  const last = lastMade.get(values);
  let before =
    last !== undefined &&
    last.kinds === kinds &&
    last.readFrom.length === readFrom.length &&
    last.readFrom.every((r, i) => r === readFrom[i])
      ? last
      : undefined;
  const ready = readinessOf(live, kinds, values);
  const reads = readingKinds(kinds);
  const steps = before === undefined ? undefined : patchesSince(plan, before.changes);
  // Whatever comes of the patch, `before` is spent (its entries moved in place) once tried.
  if (steps !== undefined) lastMade.delete(values);
  const made =
    before !== undefined && steps !== undefined
      ? patchedEntries(before, steps, (c) => ready(c, entryFor(c, values)), reads)
      : undefined;
  if (made !== undefined) {
    lastMade.set(values, { ...made, changes: plan.changes, kinds, readFrom });
    readableNoops.set(made.noop, made.readable);
    return { changes: made.changed, blocked: blockedOf(plan, values), noop: made.noop };
  }
  // A patch that gave up left `before`'s entries half moved: every entry is walked afresh.
  if (steps !== undefined) before = undefined;
  const changes: ChangeEntry[] = [];
  const noop: NoopEntry[] = [];
  const readable: NoopEntry[] = [];
  const entries: (ChangeEntry | NoopEntry)[] = [];
  let i = 0;
  for (const c of plan.changes) {
    let entry: ChangeEntry | NoopEntry | undefined;
    if (before !== undefined) {
      const prior = before.changes;
      while (
        i < prior.length &&
        prior[i] !== c &&
        compareCodeUnits(addressAt(prior, i), c.address) <= 0
      )
        i++;
      if (prior[i] === c) entry = before.entries[i++];
    }
    entry ??= ready(c, entryFor(c, values));
    entries.push(entry);
    if (c.action === 'noop') {
      noop.push(entry as NoopEntry);
      if (reads.has(c.kind)) readable.push(entry as NoopEntry);
    } else changes.push(entry as ChangeEntry);
  }
  lastMade.set(values, {
    changes: plan.changes,
    entries,
    changed: changes,
    noop,
    kinds,
    readFrom,
    readable,
  });
  readableNoops.set(noop, readable);
  return { changes, blocked: blockedOf(plan, values), noop };
}

/** The kinds of `kinds` whose definition reads readiness, by name. */
function readingKinds(kinds: readonly KindDefinition[]): ReadonlySet<string> {
  let known = readingKindsOf.get(kinds);
  if (known === undefined) {
    known = new Set(kinds.flatMap((k) => (k.readiness ? [k.kind] : [])));
    readingKindsOf.set(kinds, known);
  }
  return known;
}

const readingKindsOf = new WeakMap<readonly KindDefinition[], ReadonlySet<string>>();

/**
 * The no-op entries of a list `resourcesOf` returned whose kind's definition reads readiness,
 * in the list's order; undefined for a list made elsewhere. Only those can carry readiness (the
 * others never have it), so the daemon's readiness events read these, not the whole set.
 */
export function readableOf(noop: readonly NoopEntry[]): readonly NoopEntry[] | undefined {
  return readableNoops.get(noop);
}

const readableNoops = new WeakMap<readonly NoopEntry[], readonly NoopEntry[]>();

function blockedOf(plan: Plan, values: readonly string[]): BlockedEntry[] {
  return plan.blocked.map((b) =>
    entryOf(b, values, () => ({
      address: b.address,
      kind: b.kind,
      reason: b.reason,
      ...(b.waiting_for === undefined ? {} : { waiting_for: b.waiting_for }),
    })),
  );
}

/**
 * The entries of a plan patched from the one `before` was made for: `before`'s, with those of
 * the dropped changes taken out and those of the added ones put in, as the patch did to the
 * changes (./../plan/outline.ts `PlanPatch`): the few entries that changed, found by binary
 * search, not a walk of the set.
 */
function patchedEntries(
  before: Made,
  steps: readonly PlanPatch[],
  entryOfChange: (c: ResourceChange) => ChangeEntry | NoopEntry,
  reads: ReadonlySet<string>,
): Pick<Made, 'entries' | 'changed' | 'noop' | 'readable'> | undefined {
  // The entries are this module's own (only `lastMade` holds them): moved in place, not copied
  // (50,000 at 50,000 resources); the two lists are handed out, and made anew.
  const { entries } = before;
  const changed = new Moved(before.changed);
  const noop = new Moved(before.noop);
  const noopSteps: NoopStep[] = [];
  for (const patch of steps) {
    const step = patchedStep(entries, changed, noop, patch, entryOfChange);
    if (step === undefined) return undefined;
    noopSteps.push(step);
  }
  // A patch that moves an entry of a kind that reads readiness (none does today: only edges
  // are patched) is left to the walk, which lists them afresh.
  const reading = (e: NoopEntry) => reads.has(e.kind);
  if (noopSteps.some((s) => s.removed.some(reading) || s.added.some(reading))) return undefined;
  const noopList = noop.list();
  noopPatches.set(noopList, { before: before.noop, steps: noopSteps });
  return { entries, changed: changed.list(), noop: noopList, readable: before.readable };
}

/**
 * A list handed out anew, made from `from` by a few moves: copied by the first move, and exactly
 * to size (`toSpliced`): an edit's one move at 50,000 resources makes one copy, where a copy
 * then a move into it made a second, grown one.
 */
class Moved<T> {
  readonly #from: readonly T[];
  #list: readonly T[];

  constructor(from: readonly T[]) {
    this.#from = from;
    this.#list = from;
  }

  get current(): readonly T[] {
    return this.#list;
  }

  splice(at: number, remove: number, ...items: T[]): void {
    if (this.#list === this.#from) this.#list = this.#list.toSpliced(at, remove, ...items);
    else (this.#list as T[]).splice(at, remove, ...items);
  }

  /** The list made: a new array, moved or not. */
  list(): T[] {
    return (this.#list === this.#from ? this.#from.slice() : this.#list) as T[];
  }
}

/** One patch's moves on the entries (parallel to `patch.before`, in place) and the two lists. */
function patchedStep(
  entries: (ChangeEntry | NoopEntry)[],
  changed: Moved<ChangeEntry>,
  noop: Moved<NoopEntry>,
  patch: PlanPatch,
  entryOfChange: (c: ResourceChange) => ChangeEntry | NoopEntry,
): NoopStep | undefined {
  const drop = patch.dropped.map((c) => indexOf(patch.before, c)).sort((a, b) => a - b);
  // Not found where its address says (a plan out of order): the caller walks the plan.
  if (drop[0] === -1) return undefined;
  const removed: NoopEntry[] = [];
  const added: NoopEntry[] = [];
  const made = patch.added.map(entryOfChange);
  // The patch put its changes in the places of those it dropped (an edited edge): so do the
  // entries, with no move of the others.
  const inPlace = samePlaces(patch.before, drop, patch.added);
  for (let k = drop.length - 1; k >= 0; k--) {
    const i = drop[k] as number;
    const entry = entries[i] as ChangeEntry | NoopEntry;
    if (inPlace) entries[i] = made[k] as ChangeEntry | NoopEntry;
    else entries.splice(i, 1);
    const isNoop = (patch.before[i] as ResourceChange).action === 'noop';
    const list: Moved<ChangeEntry | NoopEntry> = isNoop ? noop : changed;
    const at = indexOf(list.current, entry);
    if (at === -1) return undefined;
    list.splice(at, 1);
    if (isNoop) removed.push(entry as NoopEntry);
  }
  patch.added.forEach((c, k) => {
    const entry = made[k] as ChangeEntry | NoopEntry;
    if (!inPlace) entries.splice(lowerBound(entries, c.address), 0, entry);
    // Before every entry of the same address, in its list as in the entries.
    if (c.action === 'noop') {
      noop.splice(lowerBound(noop.current, c.address), 0, entry as NoopEntry);
      added.push(entry as NoopEntry);
    } else changed.splice(lowerBound(changed.current, c.address), 0, entry as ChangeEntry);
  });
  return { removed, added };
}

/**
 * How a list of no-op entries was made from the last one: `before`, then per step less its
 * `removed`, with each of its `added` put in turn before the first entry not before its address. The daemon's status makes
 * its in-sync statuses the same way.
 */
export interface NoopPatch {
  readonly before: readonly NoopEntry[];
  /** Applied in turn: each step's entries removed, then its entries added. */
  readonly steps: readonly NoopStep[];
}

interface NoopStep {
  readonly removed: readonly NoopEntry[];
  readonly added: readonly NoopEntry[];
}

const noopPatches = new WeakMap<readonly NoopEntry[], NoopPatch>();

/** How `noop` (a list `resourcesOf` returned) was made from the last one, or undefined. */
export function noopPatchOf(noop: readonly NoopEntry[]): NoopPatch | undefined {
  return noopPatches.get(noop);
}

/** The index of `item` in `list` (in address order), by binary search on its address; or -1. */
function indexOf<T extends { readonly address: string }>(list: readonly T[], item: T): number {
  for (let i = lowerBound(list, item.address); i < list.length; i++) {
    const at = list[i] as T;
    if (at === item) return i;
    if (at.address !== item.address) break;
  }
  return -1;
}

function addressAt(changes: readonly ResourceChange[], i: number): string {
  return (changes[i] as ResourceChange).address;
}

/** A change's entry, masked (without readiness). */
function entryFor(c: ResourceChange, values: readonly string[]): ChangeEntry | NoopEntry {
  if (c.action === 'noop') {
    return entryOf(c, values, () => ({
      address: c.address,
      kind: c.kind,
      ...(c.id === undefined ? {} : { id: c.id }),
    }));
  }
  return entryOf(c, values, () => ({
    address: c.address,
    kind: c.kind,
    action: c.action,
    reason: c.reason,
    ...(c.id === undefined ? {} : { id: c.id }),
    fields: fieldPaths(c.fields),
  }));
}

/**
 * One list per distinct list of field paths: the changes of a kind list the same fields (a
 * start-up cycle creating 25,000 resources has a few dozen distinct lists), and the daemon keeps
 * the entries until its next cycle. Bounded like the paths themselves (src/plan/diff.ts).
 */
const pathLists = new Interned<readonly string[]>(10_000);

function fieldPaths(fields: readonly { readonly path: string }[]): readonly string[] {
  const paths = fields.map((f) => f.path);
  return pathLists.of(paths.join('\n'), paths);
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
 * built once per array. When `previous` was made here, only the objects that are not the same
 * as last time are gathered again (`secretSources`), each value counted by the objects that
 * hold it: a saved file costs its own resources, not the set's.
 */
export function stableValues(
  set: DesiredSet,
  live: LiveSnapshot,
  previous: readonly string[],
): readonly string[] {
  const last = gathered.get(previous);
  // Forgotten while counting: a gathering that throws leaves no half-counted record behind.
  gathered.delete(previous);
  const counts = last?.counts ?? new Map<string, number>();
  // Each value counted in or out, with whether it was held before.
  const touched = new Map<string, boolean>();
  const count = (values: readonly string[], by: 1 | -1) => {
    for (const v of values) {
      const n = counts.get(v) ?? 0;
      if (!touched.has(v)) touched.set(v, n > 0);
      if (n + by === 0) counts.delete(v);
      else counts.set(v, n + by);
    }
  };
  const { desired: d, live: l } = secretSources;
  const before = last ?? { set: undefined, live: undefined };
  swap(before.set?.tlsEdges, set.tlsEdges, d.tlsEdges, count);
  swap(before.set?.httpsEdges, set.httpsEdges, d.httpsEdges, count);
  swap(before.set?.botUsers, set.botUsers, d.botUsers, count);
  swap(before.set?.cloudEndpoints, set.cloudEndpoints, d.cloudEndpoints, count);
  swap(before.live?.httpsEdges, live.httpsEdges, l.httpsEdges, count);
  swap(before.live?.cloudEndpoints, live.cloudEndpoints, l.cloudEndpoints, count);
  const moved = [...touched].some(([v, held]) => counts.has(v) !== held);
  const values = moved || last === undefined ? sameOrNew(previous, [...counts.keys()]) : previous;
  gathered.set(values, { set, live, counts });
  return values;
}

/**
 * Forgets what the report kept of the last cycle masked with `values` (its plan's entries, the
 * objects its values were gathered from). A full listing makes every record new: nothing kept
 * would be reused, and keeping it would hold the old account through the new listing.
 */
export function forgetLastCycle(values: readonly string[]): void {
  lastMade.delete(values);
  gathered.delete(values);
}

/** What `stableValues` gathered its result from: the objects, and each value's holders. */
const gathered = new WeakMap<
  readonly string[],
  { readonly set: DesiredSet; readonly live: LiveSnapshot; readonly counts: Map<string, number> }
>();

/** Counts out the values of the objects of `before` that are not in the same place in `now`, and in those of `now`. */
function swap<T>(
  before: readonly T[] | undefined,
  now: readonly T[],
  valuesOf: (item: T) => readonly string[],
  count: (values: readonly string[], by: 1 | -1) => void,
): void {
  if (before === now) return;
  const old = before ?? [];
  // Only the places the loader or the read-back replaced, when they say (`replacedAt`).
  const at = replacedAt(old, now);
  if (at !== undefined) {
    for (const i of at) {
      if (old[i] === now[i]) continue;
      count(valuesOf(old[i] as T), -1);
      count(valuesOf(now[i] as T), 1);
    }
    return;
  }
  for (let i = 0; i < Math.max(old.length, now.length); i++) {
    if (i < old.length && i < now.length && old[i] === now[i]) continue;
    if (i < old.length) count(valuesOf(old[i] as T), -1);
    if (i < now.length) count(valuesOf(now[i] as T), 1);
  }
}

/** `previous` when it holds the same values, else `fresh`. */
function sameOrNew(previous: readonly string[], fresh: readonly string[]): readonly string[] {
  if (fresh.length !== previous.length) return fresh;
  const had = new Set(previous);
  return fresh.every((v) => had.has(v)) ? previous : fresh;
}
