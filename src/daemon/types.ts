/**
 * The daemon's plain-data shapes (`/status`, timers, backoff), and the engine's contract
 * (`src/engine/contract.ts`) as the daemon uses it: the reconcile step is injected, see there.
 */
import type { ReconcileResult, TriggerReason } from '../engine/contract.js';
import type { Readiness } from '../kinds/index.js';
import type { PlanSummary } from '../plan/model.js';

export {
  type AnticipateFn,
  MANAGED_KINDS,
  type ManagedCounts,
  type PlanResources,
  RECONCILE_RESULTS,
  type ReconcileFn,
  type ReconcileReport,
  type ReconcileResult,
  SUCCESS_RESULTS,
  type TriggerReason,
} from '../engine/contract.js';

/** The plan's resource counts by action: the plan model's own type. */
export type { PlanSummary } from '../plan/model.js';

export const EMPTY_SUMMARY: PlanSummary = { create: 0, update: 0, delete: 0, adopt: 0, noop: 0 };

/** Injected clock for timers (tests drive it by hand). Handles are opaque. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface BackoffOptions {
  /** Delay after the first failure. */
  readonly baseMs: number;
  /** Cap on the delay. */
  readonly maxMs: number;
}

/** One diagnostic as `/status` shows it (grouped by file, so the file is the key). */
export interface StatusDiagnostic {
  readonly line: number;
  readonly column: number;
  readonly path: string;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

/**
 * The `/status` document, `format_version: 2`. Times are ISO 8601 strings. The managed
 * resources are counted here (`resource_counts`) and listed by `/status/resources`, a page at a
 * time (`ResourcePage`): a document holding every resource grew with the account (3.7 MB at
 * 10,000 edges) and cost its size on every request.
 */
export interface DaemonStatus {
  readonly format_version: 2;
  /** The manifest path as configured. */
  readonly dir: string;
  /** What it resolved to at the last cycle, or null if it never resolved. */
  readonly resolved_dir: string | null;
  /** Revision of the last cycle that resolved the directory (null without a link). */
  readonly revision: string | null;
  readonly ready: boolean;
  readonly in_flight: boolean;
  readonly last_reconcile: {
    readonly result: ReconcileResult;
    readonly reason: TriggerReason;
    readonly revision: string | null;
    readonly at: string;
    readonly duration_ms: number;
    readonly summary: PlanSummary;
    readonly writes: number;
    readonly out_of_sync: number | null;
  } | null;
  readonly last_success_at: string | null;
  /** The last failure's message, cleared by the next success. */
  readonly last_error: { readonly message: string; readonly at: string } | null;
  readonly diagnostics_by_file: Readonly<Record<string, readonly StatusDiagnostic[]>>;
  /** Warnings of the last cycle that made a plan (e.g. "2 bot users named ci"). */
  readonly warnings: readonly string[];
  readonly next_resync_at: string | null;
  /** Delay applied after the current run of failures (0 when healthy). */
  readonly backoff_ms: number;
  readonly consecutive_failures: number;
  /**
   * The periodic resync's interval now: `--interval`, stretched so that resyncs use at most
   * `--resync-budget` of the API budget (list calls of the last full observation).
   */
  readonly resync_interval_ms: number;
  /** Writes stopped by `POST /-/suspend` (or `--suspended`); cycles observe. */
  readonly suspended: boolean;
  /** `enforce`, or `observe` (`--mode observe`, or suspended): observe never writes. */
  readonly mode: 'enforce' | 'observe';
  /** The managed resources at the last cycle that planned, counted by state and by kind. */
  readonly resource_counts: ResourceCounts;
  /** With `--leader-elect`: this replica's role, the holder last seen, transitions; else null. */
  readonly leader_election: LeadershipStatus | null;
}

/** The states of a managed resource in `/status`. */
export const RESOURCE_STATES = [
  'in_sync',
  'out_of_sync',
  'conflict',
  'blocked',
  'suspended',
  'excluded',
  'error',
] as const;

export type ResourceState = (typeof RESOURCE_STATES)[number];

/** Resources by state; a state no resource is in is left out. */
export type StateCounts = Readonly<Partial<Record<ResourceState, number>>>;

/** `/status`'s `resource_counts`. */
export interface ResourceCounts {
  readonly total: number;
  readonly by_state: StateCounts;
  /** By kind (`tls_edge`, ...), then by state. */
  readonly by_kind: Readonly<Record<string, StateCounts>>;
}

/** `GET /status/resources`: one page of the managed resources, by address. */
export interface ResourcePage {
  readonly format_version: 1;
  /** Resources matching the query (all pages). */
  readonly total: number;
  readonly offset: number;
  readonly limit: number;
  readonly resources: readonly ResourceStatus[];
}

/** One managed resource in `/status/resources`. */
export interface ResourceStatus {
  readonly kind: string;
  readonly address: string;
  readonly id: string | null;
  readonly state: ResourceState;
  /** Why it is not in sync: the plan's reason, the holder for a conflict, the guard for a block. */
  readonly reason: string | null;
  /** Paths of the fields that differ (values are never shown). */
  readonly fields: readonly string[];
  /**
   * How ready the live resource is (a domain's certificate, its DNS), for a kind whose
   * definition reads readiness (src/kinds/); absent for the others.
   */
  readonly readiness?: Readiness;
}

/** Leader election as `/status` shows it. */
export interface LeadershipStatus {
  readonly role: 'leader' | 'standby';
  readonly holder: string | null;
  readonly identity: string;
  readonly lease: string;
  readonly transitions: number;
}
