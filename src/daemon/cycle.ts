/**
 * One daemon cycle around the injected reconcile step: resolve the manifest path afresh (a
 * missing or unreadable directory records an error: the reconcile step never runs without an
 * existing directory), re-point the watchers, reconcile with a check that the git-sync link
 * still points where it did, and record what happened. A cycle whose revision was replaced
 * while it ran ends `superseded`, and the new revision is reconciled next; one that read a file
 * still being written asks for a cycle after a debounce.
 */

import { errorMessage, ManifestDirError, ManifestError } from '../errors.js';
import { invalidSetLine } from '../manifest/diagnostics.js';
import {
  findAnchor,
  type ResolvedDir,
  resolveManifestDir,
  sameResolution,
} from '../manifest/resolve.js';
import { type CycleOutcome, PreemptedError } from './loop.js';
import type { CycleRecord } from './status.js';
import {
  EMPTY_SUMMARY,
  type ReconcileFn,
  type ReconcileReport,
  SUCCESS_RESULTS,
  type TriggerReason,
} from './types.js';

export interface CycleDeps {
  readonly absDir: string;
  readonly reconcile: ReconcileFn;
  readonly now: () => number;
  readonly record: (rec: CycleRecord) => void;
  readonly pointWatchers: (anchor: string, resolved: ResolvedDir | undefined) => Promise<void>;
  /** Asks for another cycle at once (a newer revision arrived). */
  readonly retrigger: () => void;
  /**
   * Asks for another cycle after a debounce, as a file event does: a file the cycle read was
   * still being written (`ReconcileReport.reread`).
   */
  readonly reread: () => void;
  /**
   * Waits for the manifests being read ahead (if any) and resolves the watcher's generation: the
   * reconcile step takes over that read when it was made at the same one.
   */
  readonly readAhead?: () => Promise<number>;
  /**
   * The paths the watcher reported changed since the last reconcile step or read ahead
   * (`ReconcileInput.changed`); none given: not known.
   */
  readonly takeChanged?: () => readonly string[] | undefined;
}

/** One cycle, step by step; each step records and ends the cycle, or hands it on. */
export async function runCycle(
  deps: CycleDeps,
  reason: TriggerReason,
  signal: AbortSignal,
): Promise<CycleOutcome> {
  const startedAt = deps.now();
  const record = (
    report: ReconcileReport,
    resolved: ResolvedDir | undefined,
    superseded: boolean,
  ) => deps.record({ report, reason, startedAt, at: deps.now(), resolved, superseded });
  // 1. Resolve the manifest path afresh.
  const resolved = await resolveStep(deps, record);
  if (typeof resolved === 'string') return resolved;
  // 2. Re-point the watchers at what it resolved to.
  await deps.pointWatchers(resolved.link ?? deps.absDir, resolved);
  if (signal.aborted) return 'superseded';
  // 3. Reconcile, with the check that the git-sync link did not move, from what was read ahead.
  const generation = await deps.readAhead?.();
  const swap = swapCheck(deps, resolved);
  const report = await reconcileStep(deps, { resolved, reason, signal, swap, generation });
  // 4. Record what happened, as the loop needs it.
  const settled = settle(report, signal, swap.superseded());
  record(settled, resolved, swap.superseded());
  // A save that landed while the cycle read gets a cycle of its own, even if the watcher
  // reported it before the read (or not at all).
  if (report.reread === true) deps.reread();
  if (settled.result === 'superseded') return 'superseded';
  if (!SUCCESS_RESULTS.has(settled.result)) return 'failure';
  return settled.mode === 'incremental' ? 'partial' : 'success';
}

type RecordReport = (
  report: ReconcileReport,
  resolved: ResolvedDir | undefined,
  superseded: boolean,
) => void;

/**
 * The resolved manifest directory, or how the cycle ended when it did not resolve (a missing or
 * unreadable directory records an error: the reconcile step never runs without one).
 */
async function resolveStep(
  deps: CycleDeps,
  record: RecordReport,
): Promise<ResolvedDir | CycleOutcome> {
  const { absDir } = deps;
  try {
    return await resolveManifestDir(absDir);
  } catch (err) {
    // git-sync deletes the old worktree right after a swap: a link read just before the swap
    // can point at a directory that is already gone. When the link resolves again at once,
    // a newer revision arrived: this cycle is superseded, and the new one runs next.
    const again = await resolveManifestDir(absDir).catch(() => undefined);
    if (again !== undefined) {
      deps.retrigger();
      record({ result: 'superseded', summary: EMPTY_SUMMARY, writes: 0 }, undefined, true);
      return 'superseded';
    }
    await deps.pointWatchers((await findAnchor(absDir)).path, undefined);
    const message = errorMessage(err);
    record(
      { result: 'error', summary: EMPTY_SUMMARY, writes: 0, error: message },
      undefined,
      false,
    );
    return 'failure';
  }
}

interface SwapCheck {
  /** The reconcile step's `assertCurrent`: throws when the link moved (see the contract). */
  readonly assertCurrent: () => Promise<void>;
  /** Whether a check found the link moved (a newer revision is reconciled next). */
  readonly superseded: () => boolean;
}

function swapCheck(deps: CycleDeps, resolved: ResolvedDir): SwapCheck {
  const { absDir } = deps;
  let superseded = false;
  const assertCurrent = async (): Promise<void> => {
    let current: ResolvedDir;
    try {
      current = await resolveManifestDir(absDir);
    } catch (err) {
      superseded = true;
      deps.retrigger();
      throw err;
    }
    if (!sameResolution(resolved, current)) {
      superseded = true;
      deps.retrigger();
      const from = resolved.revision ?? resolved.realDir;
      const to = current.revision ?? current.realDir;
      throw new ManifestDirError(
        absDir,
        `manifest directory changed during the cycle (${from} -> ${to}): nothing applied from the old one; reconciling the new one next`,
      );
    }
  };
  return { assertCurrent, superseded: () => superseded };
}

/** The injected reconcile step's report; what it throws becomes `invalid` or `error`. */
async function reconcileStep(
  deps: CycleDeps,
  cycle: {
    readonly resolved: ResolvedDir;
    readonly reason: TriggerReason;
    readonly signal: AbortSignal;
    readonly swap: SwapCheck;
    readonly generation: number | undefined;
  },
): Promise<ReconcileReport> {
  try {
    return await deps.reconcile({
      dir: cycle.resolved.realDir,
      revision: cycle.resolved.revision,
      reason: cycle.reason,
      signal: cycle.signal,
      assertCurrent: cycle.swap.assertCurrent,
      generation: cycle.generation,
      changed: deps.takeChanged?.(),
    });
  } catch (err) {
    return err instanceof ManifestError
      ? {
          result: 'invalid',
          summary: EMPTY_SUMMARY,
          writes: 0,
          diagnostics: err.diagnostics,
          error: invalidSetLine(err.diagnostics),
        }
      : { result: 'error', summary: EMPTY_SUMMARY, writes: 0, error: errorMessage(err) };
  }
}

/** A failed cycle whose revision (or turn) was taken over is superseded, not a failure. */
function settle(
  report: ReconcileReport,
  signal: AbortSignal,
  superseded: boolean,
): ReconcileReport {
  if (signal.reason instanceof PreemptedError && !SUCCESS_RESULTS.has(report.result)) {
    // A resync cut short by a change: the change's cycle runs next and reads everything.
    return { result: 'superseded', summary: report.summary, writes: report.writes };
  }
  if (superseded && !SUCCESS_RESULTS.has(report.result)) {
    // Whatever the old revision's cycle ran into (files vanishing under the loader, the swap
    // check refusing to write) belongs to a revision that is gone: not an error.
    return { result: 'superseded', summary: report.summary, writes: report.writes };
  }
  return report;
}
