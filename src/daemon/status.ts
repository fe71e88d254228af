/**
 * The daemon's status as a reducer: each recorded cycle folds into a `StatusState`, and
 * `renderStatus` turns the state (with the loop's snapshot) into the `/status` document, with
 * the managed resources counted; `resourcePage` answers `/status/resources` a page at a time
 * (`parseResourceQuery` reads its query). The counts are made once per cycle, so a request costs
 * the size of what it returns, not the account's. No clock, no I/O: the daemon passes times in,
 * and the unit tests drive it directly. One exception to folding into new values: the in-sync
 * statuses are lists of the state's own, moved in place by the next cycle's patch (a state is
 * folded once, by the daemon, and the state before is dropped), so an edit at 50,000 resources
 * copies no list of 50,000.
 */
import path from 'node:path';
import { type NoopPatch, noopPatchOf } from '../engine/report.js';
import type { Readiness } from '../kinds/index.js';
import { invalidSetLine } from '../manifest/diagnostics.js';
import type { LoopSnapshot } from './loop.js';
import {
  type DaemonStatus,
  type LeadershipStatus,
  RESOURCE_STATES,
  type ReconcileReport,
  type ResourceCounts,
  type ResourcePage,
  type ResourceState,
  type ResourceStatus,
  type StatusDiagnostic,
  SUCCESS_RESULTS,
  type TriggerReason,
} from './types.js';

interface LastCycle {
  readonly result: ReconcileReport['result'];
  readonly reason: TriggerReason;
  readonly revision: string | undefined;
  readonly at: number;
  readonly durationMs: number;
  readonly summary: ReconcileReport['summary'];
  readonly writes: number;
  readonly outOfSync: number | undefined;
}

/** What the manifest path resolved to. */
export interface Resolution {
  readonly realDir: string;
  readonly revision: string | undefined;
}

export interface StatusState {
  /** True after the first successful cycle (sticky). */
  readonly everReady: boolean;
  readonly resolved: Resolution | undefined;
  readonly last: LastCycle | undefined;
  readonly lastSuccessAt: number | undefined;
  readonly lastError: { readonly message: string; readonly at: number } | undefined;
  readonly diagnostics: Readonly<Record<string, StatusDiagnostic[]>>;
  readonly warnings: readonly string[];
  /** By address. */
  readonly resources: readonly ResourceStatus[];
  /** `resources` counted, once per cycle. */
  readonly resourceCounts: ResourceCounts;
  /** The in-sync part of `resources`, from which the next cycle's is made. */
  readonly inSync?: InSync | undefined;
}

/**
 * The resources a cycle found in sync (the plan's no-op entries, in its address order), their
 * statuses and counts: a cycle after one saved file shares all but a few entries (the same
 * objects, `resourcesOf`), so its statuses are these with those few swapped.
 */
interface InSync {
  /** The report's list (the next cycle's patch says which list it was made from). */
  readonly entries: readonly NoopEntry[];
  /**
   * The same entries in a list of this record's own, and their statuses: the next cycle's
   * patch moves both in place (one status record folds each cycle once, and the lists are its
   * alone), so an edit at 50,000 resources copies no list of 50,000.
   */
  readonly own: NoopEntry[];
  readonly statuses: ResourceStatus[];
  readonly counts: ResourceCounts;
  /** The entries are in address order (a plan the planner made; one written by hand may not be). */
  readonly ordered: boolean;
}

type NoopEntry = NonNullable<ReconcileReport['resources']>['noop'][number];

const NO_RESOURCES: ResourceCounts = { total: 0, by_state: {}, by_kind: {} };

export const INITIAL_STATUS: StatusState = {
  resources: [],
  resourceCounts: NO_RESOURCES,
  everReady: false,
  resolved: undefined,
  last: undefined,
  lastSuccessAt: undefined,
  lastError: undefined,
  diagnostics: {},
  warnings: [],
};

/** One finished cycle, as the daemon records it. */
export interface CycleRecord {
  readonly report: ReconcileReport;
  readonly reason: TriggerReason;
  readonly startedAt: number;
  readonly at: number;
  /** Undefined when the cycle could not resolve the manifest path. */
  readonly resolved: Resolution | undefined;
  /** A newer revision replaced the one this cycle read. */
  readonly superseded: boolean;
}

/** The diagnostics of a report grouped by file, relative to the checkout. */
export function groupDiagnostics(
  report: ReconcileReport,
  realDir: string,
): Record<string, StatusDiagnostic[]> {
  const byFile: Record<string, StatusDiagnostic[]> = {};
  for (const d of report.diagnostics ?? []) {
    // Relative to the checkout, so the same file keeps its key across revisions.
    const rel = path.isAbsolute(d.file) ? path.relative(realDir, d.file) : d.file;
    const file = rel.startsWith('..') || rel === '' ? d.file : rel;
    const list = byFile[file] ?? [];
    list.push({
      line: d.line,
      column: d.column,
      path: d.path,
      message: d.message,
      severity: d.severity,
    });
    byFile[file] = list;
  }
  return byFile;
}

export function errorCount(report: ReconcileReport): number {
  return report.diagnostics?.filter((d) => d.severity === 'error').length ?? 0;
}

/** Folds one cycle into the status. */
export function reduceStatus(state: StatusState, rec: CycleRecord): StatusState {
  const { report, at } = rec;
  const success = SUCCESS_RESULTS.has(report.result);
  let { everReady, lastSuccessAt, lastError, diagnostics, warnings } = state;
  if (success) {
    everReady = true;
    lastSuccessAt = at;
    lastError = undefined;
  } else if (report.result !== 'superseded') {
    lastError = {
      message:
        report.error ??
        (report.result === 'invalid'
          ? invalidSetLine(report.diagnostics ?? [])
          : 'reconcile failed'),
      at,
    };
  }
  // Diagnostics describe the set the cycle read; a cycle that read nothing (or read a worktree
  // git-sync was replacing) leaves them as they were.
  if (rec.resolved && !rec.superseded) diagnostics = groupDiagnostics(report, rec.resolved.realDir);
  if (report.warnings !== undefined) warnings = report.warnings;
  let resources = state.resources;
  let resourceCounts = state.resourceCounts;
  let inSync = state.inSync;
  if (report.resources !== undefined && report.result !== 'superseded') {
    ({ resources, counts: resourceCounts, inSync } = resourceStates(report, state.inSync));
  } else if (report.result === 'invalid' || report.result === 'error') {
    // The last known state of each resource, marked: this cycle could not tell.
    resources = state.resources.map((r) =>
      r.state === 'in_sync'
        ? r
        : { ...r, state: 'error' as const, reason: report.error ?? r.reason },
    );
    resourceCounts = countResources(resources);
  }
  return {
    resources,
    resourceCounts,
    inSync,
    everReady,
    resolved: rec.resolved ?? state.resolved,
    last: {
      result: report.result,
      reason: rec.reason,
      revision: rec.resolved?.revision,
      at,
      durationMs: Math.max(0, at - rec.startedAt),
      summary: report.summary,
      writes: report.writes,
      outOfSync: report.outOfSync,
    },
    lastSuccessAt,
    lastError,
    diagnostics,
    warnings,
  };
}

/**
 * Each resource's state from a cycle's plan, by address, and their counts. The in-sync ones are
 * made from the last cycle's (`InSync`): an entry that is the same object as one of those, found
 * by walking both lists side by side, keeps its status, and the counts change by the entries
 * that came and went; the few others are put in place by binary search.
 */
function resourceStates(
  report: ReconcileReport,
  before: InSync | undefined,
): { resources: readonly ResourceStatus[]; counts: ResourceCounts; inSync: InSync | undefined } {
  const r = report.resources;
  if (r === undefined) return { resources: [], counts: NO_RESOURCES, inSync: undefined };
  const inSync = inSyncStates(r.noop, before);
  const kindOf = (address: string) => address.slice(0, address.indexOf('.'));
  const applied = report.result === 'changed' || (report.writes > 0 && report.observed !== true);
  const others: ResourceStatus[] = [];
  for (const c of r.changes) {
    others.push({
      kind: c.kind,
      address: c.address,
      id: c.id ?? null,
      state: applied && report.result === 'changed' ? 'in_sync' : 'out_of_sync',
      reason: applied && report.result === 'changed' ? null : `${c.action}: ${c.reason}`,
      fields: applied && report.result === 'changed' ? [] : c.fields,
      ...readinessOf(c),
    });
  }
  for (const b of r.blocked) {
    others.push({
      kind: kindOf(b.address),
      address: b.address,
      id: null,
      state: b.kind === 'guard' ? 'blocked' : b.kind,
      reason: b.reason,
      fields: [],
    });
  }
  const tally = new Tally(inSync.counts);
  for (const o of others) tally.add(o, 1);
  const resources = inSync.ordered
    ? placed(inSync.statuses, others)
    : [...inSync.statuses, ...others].sort(byAddress);
  return { resources, counts: tally.counts(), inSync };
}

/** The in-sync statuses of `entries`, from `before`'s where an entry is the same object. */
function inSyncStates(entries: readonly NoopEntry[], before: InSync | undefined): InSync {
  const patch = noopPatchOf(entries);
  if (before?.ordered !== true || patch?.before !== before.entries) {
    return walkedStates(entries, before);
  }
  // A patch that gave up may have moved part of `before`'s lists: all made afresh.
  return patchedStates(entries, before, patch) ?? walkedStates(entries, undefined);
}

function inSyncStatus(n: NoopEntry): ResourceStatus {
  return {
    kind: n.kind,
    address: n.address,
    id: n.id ?? null,
    state: 'in_sync',
    reason: null,
    fields: [],
    ...readinessOf(n),
  };
}

/**
 * The statuses of entries made from `before`'s by a few removed and added (`NoopPatch`): the
 * same moves on its lists, in place, found by binary search, not a walk of the set. Undefined
 * when an entry removed is not where its address says (`before` is then spent: the caller
 * makes every status afresh).
 */
function patchedStates(
  entries: readonly NoopEntry[],
  before: InSync,
  patch: NoopPatch,
): InSync | undefined {
  const { own: list, statuses } = before;
  const tally = new Tally(before.counts);
  for (const step of patch.steps) {
    for (const e of step.removed) {
      let at = lowerBound(list, e.address);
      while (at < list.length && list[at] !== e && (list[at] as NoopEntry).address === e.address)
        at++;
      if (list[at] !== e) return undefined;
      list.splice(at, 1);
      const [gone] = statuses.splice(at, 1);
      tally.add(gone as ResourceStatus, -1);
    }
    for (const e of step.added) {
      const at = lowerBound(list, e.address);
      list.splice(at, 0, e);
      const made = inSyncStatus(e);
      statuses.splice(at, 0, made);
      tally.add(made, 1);
    }
  }
  return { entries, own: list, statuses, counts: tally.counts(), ordered: true };
}

/** The first index of `list` (in address order) whose address is not before `address`. */
function lowerBound(list: readonly { readonly address: string }[], address: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as { address: string }).address < address) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function walkedStates(entries: readonly NoopEntry[], before: InSync | undefined): InSync {
  const statuses: ResourceStatus[] = [];
  const tally = new Tally(before?.counts ?? NO_RESOURCES);
  const prior = before?.entries ?? [];
  const priorStatuses = before?.statuses ?? [];
  let i = 0;
  let ordered = true;
  let last = '';
  for (const n of entries) {
    if (n.address < last) ordered = false;
    last = n.address;
    // Entries of the last cycle before this one's address are gone.
    while (i < prior.length && prior[i] !== n && (prior[i] as NoopEntry).address <= n.address) {
      tally.add(priorStatuses[i] as ResourceStatus, -1);
      i++;
    }
    if (prior[i] === n) {
      statuses.push(priorStatuses[i++] as ResourceStatus);
      continue;
    }
    const made = inSyncStatus(n);
    tally.add(made, 1);
    statuses.push(made);
  }
  for (; i < prior.length; i++) tally.add(priorStatuses[i] as ResourceStatus, -1);
  return { entries, own: entries.slice(), statuses, counts: tally.counts(), ordered };
}

/**
 * `sorted` (by address) with `others` (each group in address order) put in place: after the
 * entries of the same address, as a stable sort of all of them would. Many others: one sort.
 */
function placed(
  sorted: readonly ResourceStatus[],
  others: readonly ResourceStatus[],
): readonly ResourceStatus[] {
  if (others.length === 0) return sorted;
  if (others.length > MAX_PLACED) return [...sorted, ...others].sort(byAddress);
  // One (an edit's change): a copy made to size with it in place, not a copy grown by a move.
  if (others.length === 1) {
    const o = others[0] as ResourceStatus;
    return sorted.toSpliced(upperBound(sorted, o.address), 0, o);
  }
  const out = sorted.slice();
  for (const o of others) out.splice(upperBound(out, o.address), 0, o);
  return out;
}

/** The first index of `list` (in address order) whose address is after `address`. */
function upperBound(list: readonly ResourceStatus[], address: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as ResourceStatus).address <= address) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function byAddress(a: ResourceStatus, b: ResourceStatus): number {
  return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
}

/** Above this many statuses to place, one sort of the whole list costs less. */
const MAX_PLACED = 256;

/** Counts by state and by kind and state, changed one resource at a time. */
class Tally {
  readonly #byState: Partial<Record<ResourceState, number>>;
  readonly #byKind: Record<string, Partial<Record<ResourceState, number>>>;
  #total: number;

  constructor(from: ResourceCounts) {
    this.#total = from.total;
    this.#byState = { ...from.by_state };
    this.#byKind = Object.fromEntries(
      Object.entries(from.by_kind).map(([kind, states]) => [kind, { ...states }]),
    );
  }

  add(r: ResourceStatus, by: 1 | -1): void {
    this.#total += by;
    this.#byState[r.state] = (this.#byState[r.state] ?? 0) + by;
    const kind = this.#byKind[r.kind] ?? {};
    kind[r.state] = (kind[r.state] ?? 0) + by;
    this.#byKind[r.kind] = kind;
  }

  /** The counts, without the states and kinds counted down to none (as a count of the list). */
  counts(): ResourceCounts {
    const nonZero = <T extends Partial<Record<ResourceState, number>>>(o: T) =>
      Object.fromEntries(Object.entries(o).filter(([, n]) => n !== 0)) as T;
    const byKind: Record<string, Partial<Record<ResourceState, number>>> = {};
    for (const [kind, states] of Object.entries(this.#byKind)) {
      const kept = nonZero(states);
      if (Object.keys(kept).length > 0) byKind[kind] = kept;
    }
    return { total: this.#total, by_state: nonZero(this.#byState), by_kind: byKind };
  }
}

/** A resource's readiness, when its kind reads one. */
function readinessOf(entry: { readonly readiness?: Readiness }): { readiness?: Readiness } {
  return entry.readiness === undefined ? {} : { readiness: entry.readiness };
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/** The `/status` document. */
export function renderStatus(
  state: StatusState,
  dir: string,
  snap: LoopSnapshot,
  leadership: LeadershipStatus | null = null,
  resyncIntervalMs = 0,
  extra: { readonly suspended: boolean; readonly mode: 'enforce' | 'observe' } = {
    suspended: false,
    mode: 'enforce',
  },
): DaemonStatus {
  const { last, lastError } = state;
  return {
    format_version: 2,
    dir,
    resolved_dir: state.resolved?.realDir ?? null,
    revision: state.resolved?.revision ?? null,
    ready: state.everReady,
    in_flight: snap.inFlight !== undefined,
    last_reconcile: last
      ? {
          result: last.result,
          reason: last.reason,
          revision: last.revision ?? null,
          at: new Date(last.at).toISOString(),
          duration_ms: last.durationMs,
          summary: last.summary,
          writes: last.writes,
          out_of_sync: last.outOfSync ?? null,
        }
      : null,
    last_success_at: iso(state.lastSuccessAt),
    last_error: lastError ? { message: lastError.message, at: iso(lastError.at) as string } : null,
    diagnostics_by_file: state.diagnostics,
    warnings: state.warnings,
    next_resync_at: iso(snap.nextAt),
    backoff_ms: snap.backoffMs,
    consecutive_failures: snap.failures,
    resync_interval_ms: resyncIntervalMs,
    suspended: extra.suspended,
    mode: extra.mode,
    resource_counts: extra.suspended ? countResources(state.resources, true) : state.resourceCounts,
    leader_election: leadership,
  };
}

/** A resource as shown: out of sync reads `suspended` while writes are stopped. */
function shownState(r: ResourceStatus, suspended: boolean): ResourceState {
  return suspended && r.state === 'out_of_sync' ? 'suspended' : r.state;
}

/** Resources counted by state, and by kind and state. */
export function countResources(
  resources: readonly ResourceStatus[],
  suspended = false,
): ResourceCounts {
  const byState: Partial<Record<ResourceState, number>> = {};
  const byKind: Record<string, Partial<Record<ResourceState, number>>> = {};
  for (const r of resources) {
    const state = shownState(r, suspended);
    byState[state] = (byState[state] ?? 0) + 1;
    const kind = byKind[r.kind] ?? {};
    kind[state] = (kind[state] ?? 0) + 1;
    byKind[r.kind] = kind;
  }
  return { total: resources.length, by_state: byState, by_kind: byKind };
}

/** What `/status/resources` is asked for: filters (each a set; empty: any) and the page. */
export interface ResourceQuery {
  readonly states: ReadonlySet<ResourceState>;
  readonly kinds: ReadonlySet<string>;
  readonly address: string | undefined;
  readonly offset: number;
  readonly limit: number;
}

export const RESOURCE_PAGE = { defaultLimit: 100, maxLimit: 1000 } as const;

const QUERY_KEYS = new Set(['state', 'kind', 'address', 'offset', 'limit']);

/**
 * `/status/resources`'s query: `state` and `kind` (comma-separated; any of them), `address`
 * (exact), `offset` (default 0) and `limit` (default 100, at most 1000). A message naming the
 * first problem when it is not one.
 */
export function parseResourceQuery(params: URLSearchParams): ResourceQuery | { error: string } {
  for (const key of params.keys()) {
    if (!QUERY_KEYS.has(key)) {
      return { error: `unknown parameter "${key}"; known: ${[...QUERY_KEYS].join(', ')}` };
    }
  }
  const list = (key: string) =>
    (params.get(key) ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  const states = list('state');
  const unknown = states.find((x) => !(RESOURCE_STATES as readonly string[]).includes(x));
  if (unknown !== undefined) {
    return { error: `unknown state "${unknown}"; known: ${RESOURCE_STATES.join(', ')}` };
  }
  const offset = wholeParam(params, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  if (typeof offset === 'string') return { error: offset };
  const limit = wholeParam(params, 'limit', RESOURCE_PAGE.defaultLimit, 1, RESOURCE_PAGE.maxLimit);
  if (typeof limit === 'string') return { error: limit };
  return {
    states: new Set(states as ResourceState[]),
    kinds: new Set(list('kind')),
    address: params.get('address') ?? undefined,
    offset,
    limit,
  };
}

/** A whole-number parameter in [min, max], its default when absent, or what is wrong with it. */
function wholeParam(
  params: URLSearchParams,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number | string {
  const text = params.get(key);
  if (text === null) return fallback;
  const n = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    return `${key} must be a whole number from ${min} to ${max}, got "${text}"`;
  }
  return n;
}

/** One page of the resources the query matches, by address. */
export function resourcePage(
  state: StatusState,
  query: ResourceQuery,
  suspended: boolean,
): ResourcePage {
  const { states, kinds, address, offset, limit } = query;
  const matched =
    states.size === 0 && kinds.size === 0 && address === undefined
      ? state.resources
      : state.resources.filter(
          (r) =>
            (states.size === 0 || states.has(shownState(r, suspended))) &&
            (kinds.size === 0 || kinds.has(r.kind)) &&
            (address === undefined || r.address === address),
        );
  const page = matched.slice(offset, offset + limit).map((r) => {
    const shown = shownState(r, suspended);
    return shown === r.state ? r : { ...r, state: shown };
  });
  return { format_version: 1, total: matched.length, offset, limit, resources: page };
}
