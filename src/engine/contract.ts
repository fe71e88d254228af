/**
 * The reconcile engine's contract with the daemon that calls it: what a cycle is given, what it
 * returns. Plain, serialisable data; the engine imports nothing from the daemon.
 *
 * The daemon (src/daemon) owns *when* to reconcile and *which directory* to read; the reconcile
 * step (manifest loader + API client + planner + applier, wired by `edgesync run`) owns *what*
 * a cycle does. They meet here:
 *
 *   reconcile(input: ReconcileInput): Promise<ReconcileReport>
 *
 * - `input.dir` is the resolved real path of an existing directory, never the link, never empty.
 * - `input.revision` is `basename(readlink(link))` when the manifest path goes through a symlink
 *   (git-sync's `--link`), else undefined.
 * - `input.signal` fires on shutdown: stop after the API call in flight and return (or throw).
 * - `input.assertCurrent()` MUST be awaited after the manifests are read and before the first
 *   write: it throws `ManifestDirError` when the link was swapped (or the directory vanished)
 *   meanwhile, because git-sync deletes the old worktree after a swap and a set read from it may
 *   be partial. A partial set must never be applied (it would delete what it lacks).
 * - Throwing is allowed: a `ManifestError` becomes result `invalid` with its diagnostics, any
 *   other error becomes result `error` with its message.
 */

import type { Diagnostic } from '../errors.js';
import { KINDS, type Readiness } from '../kinds/index.js';
import type { PlanSummary, WaitingFor } from '../plan/model.js';

/**
 * - `converged`: the live state already matched; zero writes.
 * - `changed`: writes were made and the state converged.
 * - `drift`: the cycle completed but live state still differs (read-only mode, or residual drift
 *   after applying); `outOfSync` says how much.
 * - `invalid`: the manifest set has errors; nothing was written.
 * - `error`: anything else (API, network, guard refusal, unknown desired state).
 * - `superseded`: cut short because a newer revision arrived (a git-sync swap under the cycle),
 *   or because a file read is still being written (saved while it was read, or smaller than
 *   last time and not yet confirmed; `reread` set): nothing from what was read was applied, and
 *   the new content is reconciled next. Neither a success nor a failure: it leaves readiness,
 *   backoff and the last error as they were.
 * - `standby`: leader election is on and another replica leads: the cycle planned and wrote
 *   nothing; `outOfSync` says how much the leader has left to do. A success (standbys are ready).
 * - `lost_leadership`: this replica led when the cycle began and stopped holding a lease renewed
 *   within the renew deadline during it: the write about to go out was not sent, nor any after.
 */
export const RECONCILE_RESULTS = [
  'converged',
  'changed',
  'drift',
  'invalid',
  'error',
  'superseded',
  'standby',
  'lost_leadership',
] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

/** Results that count as a successful cycle: readiness, backoff reset, last-success time. */
export const SUCCESS_RESULTS: ReadonlySet<ReconcileResult> = new Set([
  'converged',
  'changed',
  'drift',
  'standby',
]);

/**
 * Why a cycle ran. `file` and `link` come from the watcher (debounced), `resync` from the
 * periodic timer, `retry` from the backoff timer after a failure, `webhook` from
 * `POST /-/reconcile`, `manual` from `daemon.trigger()`, `leader` when this replica became the
 * leader (leader election).
 */
export const TRIGGER_REASONS = [
  'startup',
  'file',
  'link',
  'resync',
  'retry',
  'webhook',
  'manual',
  'leader',
] as const;
export type TriggerReason = (typeof TRIGGER_REASONS)[number];

/** Resource kinds in the `edgesync_managed_resources{kind}` gauge. */
/** Every registered kind (src/kinds/), in the registry's order. */
export const MANAGED_KINDS: readonly string[] = KINDS.map((k) => k.kind);
export type ManagedKind = string;
export type ManagedCounts = Readonly<Record<ManagedKind, number>>;

/** What one reconcile cycle returns: plain, serialisable data. The daemon measures the duration. */
export interface ReconcileReport {
  readonly result: ReconcileResult;
  /** Counts of the cycle's plan by action (all zero when no plan was made). */
  readonly summary: PlanSummary;
  /** API writes actually issued (POST, PATCH, DELETE). */
  readonly writes: number;
  /** Resources this controller manages after the cycle, when it observed the live state. */
  readonly managed?: ManagedCounts | undefined;
  /** Resources whose live state differs from the manifests after the cycle, when observed. */
  readonly outOfSync?: number | undefined;
  /** Manifest findings (errors for `invalid`; warnings may accompany any result). */
  readonly diagnostics?: readonly Diagnostic[] | undefined;
  /** One-line reason for `error` (and optionally `invalid`); never contains secrets. */
  readonly error?: string | undefined;
  /** The plan's warnings (e.g. namesake bot users), when the cycle made a plan. */
  readonly warnings?: readonly string[] | undefined;
  /** `full`: the account was listed; `incremental`: only what the change touched was read. */
  readonly mode?: 'full' | 'incremental' | undefined;
  /** List calls the cycle's full observation took (what a periodic resync costs; none when incremental). */
  readonly listCalls?: number | undefined;
  /** True when the cycle only observed (`--mode observe`, or suspended). */
  readonly observed?: boolean | undefined;
  /** The cycle's plan by resource (addresses, reasons, field paths: never values). */
  readonly resources?: PlanResources | undefined;
  /**
   * True when a manifest file read was still being written (`superseded`): the daemon reads the
   * manifests again after a debounce, whether or not its watcher saw the save.
   */
  readonly reread?: boolean | undefined;
}

/** A cycle's plan by resource, as `/status` and the events use it. */
export interface PlanResources {
  readonly changes: readonly {
    readonly address: string;
    readonly kind: string;
    readonly action: string;
    readonly reason: string;
    readonly id?: string;
    readonly fields: readonly string[];
    /** How ready the live resource is, for a kind whose definition reads it. */
    readonly readiness?: Readiness;
  }[];
  readonly blocked: readonly {
    readonly address: string;
    readonly kind: 'conflict' | 'guard' | 'suspended' | 'excluded';
    readonly reason: string;
    /** A create held back until what it needs is ready, with the records still to create. */
    readonly waiting_for?: readonly WaitingFor[];
  }[];
  readonly noop: readonly {
    readonly address: string;
    readonly kind: string;
    readonly id?: string;
    /** How ready the live resource is, for a kind whose definition reads it. */
    readonly readiness?: Readiness;
  }[];
}

export interface ReconcileInput {
  /** Resolved real path of the manifest directory; it existed when the cycle began. */
  readonly dir: string;
  /** `basename(readlink(link))` when the manifest path goes through a symlink, else undefined. */
  readonly revision: string | undefined;
  readonly reason: TriggerReason;
  /** Aborted on shutdown: finish the API call in flight, then stop. */
  readonly signal: AbortSignal;
  /** Throws `ManifestDirError` if `dir` is no longer what the link resolves to. See header. */
  assertCurrent(): Promise<void>;
  /**
   * How many changes the watcher had reported when the cycle began. Work anticipated at the same
   * generation (`AnticipateFn`) read the same files: the cycle may take it over.
   */
  readonly generation?: number | undefined;
  /**
   * The paths (files, directories) the watcher reported changed since the manifests were last
   * handed to the step (a cycle or a read ahead); undefined when that is not known (a link
   * swapped, the first cycle): then the next incremental read reads every file.
   */
  readonly changed?: readonly string[] | undefined;
}

export type ReconcileFn = (input: ReconcileInput) => Promise<ReconcileReport>;

/** What the daemon knows when a change arrives, before the debounce ends. */
export interface AnticipateInput {
  /** Resolved real path of the manifest directory, as a cycle would get it. */
  readonly dir: string;
  readonly revision: string | undefined;
  /** The watcher's change count when this read began (see `ReconcileInput.generation`). */
  readonly generation: number;
  /** See `ReconcileInput.changed`. */
  readonly changed?: readonly string[] | undefined;
}

/**
 * Work a reconcile step does ahead of a file event's cycle, while the daemon waits out the
 * debounce: read the manifests and plan them against the kept snapshot, with no API call and no
 * write. The next cycle takes it over when no change arrived since; otherwise it is dropped.
 * Never throws.
 */
export type AnticipateFn = (input: AnticipateInput) => Promise<void>;
