/**
 * The daemon's status as a pure reducer: each recorded cycle folds into a `StatusState`, and
 * `renderStatus` turns the state (with the loop's snapshot) into the `/status` document. No
 * clock, no I/O: the daemon passes times in, and the unit tests drive it directly.
 */
import path from 'node:path';
import type { Readiness } from '../kinds/index.js';
import { invalidSetLine } from '../manifest/diagnostics.js';
import type { LoopSnapshot } from './loop.js';
import {
  type DaemonStatus,
  type LeadershipStatus,
  type ReconcileReport,
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
  readonly resources: readonly ResourceStatus[];
}

export const INITIAL_STATUS: StatusState = {
  resources: [],
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
  if (report.resources !== undefined && report.result !== 'superseded') {
    resources = resourceStates(report);
  } else if (report.result === 'invalid' || report.result === 'error') {
    // The last known state of each resource, marked: this cycle could not tell.
    resources = state.resources.map((r) =>
      r.state === 'in_sync'
        ? r
        : { ...r, state: 'error' as const, reason: report.error ?? r.reason },
    );
  }
  return {
    resources,
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

/** Each resource's state from a cycle's plan. */
function resourceStates(report: ReconcileReport): ResourceStatus[] {
  const r = report.resources;
  if (r === undefined) return [];
  const kindOf = (address: string) => address.slice(0, address.indexOf('.'));
  const applied = report.result === 'changed' || (report.writes > 0 && report.observed !== true);
  const out: ResourceStatus[] = [];
  for (const n of r.noop) {
    out.push({
      kind: n.kind,
      address: n.address,
      id: n.id ?? null,
      state: 'in_sync',
      reason: null,
      fields: [],
      ...readinessOf(n),
    });
  }
  for (const c of r.changes) {
    out.push({
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
    out.push({
      kind: kindOf(b.address),
      address: b.address,
      id: null,
      state: b.kind === 'guard' ? 'blocked' : b.kind,
      reason: b.reason,
      fields: [],
    });
  }
  return out.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
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
    format_version: 1,
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
    resources: extra.suspended
      ? state.resources.map((r) =>
          r.state === 'out_of_sync' ? { ...r, state: 'suspended' as const } : r,
        )
      : state.resources,
    leader_election: leadership,
  };
}
