/**
 * One daemon cycle around the injected reconcile step: resolve the manifest path afresh (a
 * missing or unreadable directory records an error: the reconcile step never runs without an
 * existing directory), re-point the watchers, reconcile with a check that the git-sync link
 * still points where it did, and record what happened. A cycle whose revision was replaced
 * while it ran ends `superseded`, and the new revision is reconciled next.
 */
import { errorMessage, ManifestDirError, ManifestError } from '../errors.js';
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
}

export async function runCycle(
  deps: CycleDeps,
  reason: TriggerReason,
  signal: AbortSignal,
): Promise<CycleOutcome> {
  const { absDir, now } = deps;
  const startedAt = now();
  const record = (
    report: ReconcileReport,
    resolved: ResolvedDir | undefined,
    superseded: boolean,
  ) => deps.record({ report, reason, startedAt, at: now(), resolved, superseded });
  let resolved: ResolvedDir;
  try {
    resolved = await resolveManifestDir(absDir);
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
  await deps.pointWatchers(resolved.link ?? absDir, resolved);
  if (signal.aborted) return 'superseded';

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

  let report: ReconcileReport;
  try {
    report = await deps.reconcile({
      dir: resolved.realDir,
      revision: resolved.revision,
      reason,
      signal,
      assertCurrent,
    });
  } catch (err) {
    report =
      err instanceof ManifestError
        ? {
            result: 'invalid',
            summary: EMPTY_SUMMARY,
            writes: 0,
            diagnostics: err.diagnostics,
            error: err.message,
          }
        : { result: 'error', summary: EMPTY_SUMMARY, writes: 0, error: errorMessage(err) };
  }
  if (signal.reason instanceof PreemptedError && !SUCCESS_RESULTS.has(report.result)) {
    // A resync cut short by a change: the change's cycle runs next and reads everything.
    report = { result: 'superseded', summary: report.summary, writes: report.writes };
  } else if (superseded && !SUCCESS_RESULTS.has(report.result)) {
    // Whatever the old revision's cycle ran into (files vanishing under the loader, the swap
    // check refusing to write) belongs to a revision that is gone: not an error.
    report = { result: 'superseded', summary: report.summary, writes: report.writes };
  }
  record(report, resolved, superseded);
  if (report.result === 'superseded') return 'superseded';
  if (!SUCCESS_RESULTS.has(report.result)) return 'failure';
  return report.mode === 'incremental' ? 'partial' : 'success';
}
