/**
 * The daemon's own steps of a run (run.ts), in the order `reconcileOnce` (reconciler.ts) hands
 * them to it, and the report each ending makes: the cycle's report parts from the run's
 * assessment (counts, masked resources), skip a plan read from a file being saved, hold back
 * when the daemon may not write (observe mode, a standby), a guard's refusal thrown, a plan with
 * nothing to do, the fence and progress of the writes, and the report of what the apply did.
 */
import { callCount } from '../api/index.js';
import { unservedMessage } from '../apply/cutover.js';
import type { GuardVerdict } from '../apply/guards.js';
import { progressSteps } from '../apply/progress.js';
import { ACCOUNT_STATE_MESSAGE, EdgesyncError, GuardError } from '../errors.js';
import { manifestsChangedSince, touchManifests } from '../manifest/loader.js';
import type { DesiredSet } from '../manifest/schema.js';
import { operationCount } from '../plan/index.js';
import { outlineOf } from '../plan/outline.js';
import {
  DEFAULT_SETTLE_MS,
  type EngineState,
  type Held,
  type ReconcilerOptions,
} from './context.js';
import type { ManagedCounts, PlanResources, ReconcileReport } from './contract.js';
import type { Prepared } from './incremental.js';
import { managedCounts, resourcesOf, withLiveIds } from './report.js';
import {
  type Applied,
  type Assessment,
  assess as assessPlan,
  type RunOptions,
  stopBeforeWrites,
} from './run.js';

/** A prepared cycle as the daemon's steps see it: the run's assessment, and its report's parts. */
export interface Cycle {
  readonly prepared: Prepared;
  /** What this cycle's full observation cost (none when incremental: it listed nothing). */
  readonly listCalls: number | undefined;
  /** Masks this cycle's sensitive values in a free-text message. */
  readonly mask: (text: string) => string;
  readonly verdict: GuardVerdict;
  readonly managed: ManagedCounts;
  /** The plan by resource, names read from env masked too. */
  readonly resources: PlanResources;
}

/**
 * Assesses a prepared plan as the run does (run.ts), as the daemon's steps see it.
 * @internal the steps' tests start from it; a cycle takes the run's own assessment (`cycleOf`)
 */
export function assess(prepared: Prepared, options: ReconcilerOptions, state: EngineState): Cycle {
  return cycleOf(assessPlan(prepared, { ...options, previousValues: state.secrets }), state);
}

/** The run's assessment as the daemon reports it: counts, masked resources; its values kept. */
export function cycleOf(assessment: Assessment, state: EngineState): Cycle {
  const { prepared, values } = assessment;
  const { plan, live, mode } = prepared;
  // The daemon sizes the resync interval with what a full observation cost.
  const listCalls = mode === 'full' ? callCount(live.calls) : undefined;
  state.secrets = values;
  return {
    prepared,
    listCalls,
    mask: assessment.mask,
    verdict: assessment.verdict,
    managed: managedCounts(plan),
    resources: resourcesOf(plan, values, live),
  };
}

/** The report of a cycle that wrote nothing. */
function noWrites(
  cycle: Cycle,
  result: ReconcileReport['result'],
  outOfSync: number,
  extra: Partial<ReconcileReport> = {},
): ReconcileReport {
  const { plan, mode } = cycle.prepared;
  return {
    mode,
    listCalls: cycle.listCalls,
    result,
    summary: plan.summary,
    writes: 0,
    managed: cycle.managed,
    outOfSync,
    warnings: plan.warnings.map(cycle.mask),
    resources: cycle.resources,
    ...extra,
  };
}

/**
 * Ends the cycle before any write when it may not write (observing, a standby, a guard's
 * refusal: thrown) or need not (an empty plan: `stopBeforeWrites`, the run's own rule).
 * Undefined: go on and apply.
 */
export function holdBack(
  cycle: Cycle,
  options: ReconcilerOptions,
  state: EngineState,
): ReconcileReport | undefined {
  const { resources } = cycle;
  const differences = resources.changes.length + resources.blocked.length;
  if (options.mode?.() === 'observe') {
    // Observe mode (or suspended): every difference is drift; nothing is written.
    const result = differences === 0 ? 'converged' : 'drift';
    return noWrites(cycle, result, differences, { observed: true });
  }
  if (options.leadership !== undefined && !options.leadership.isLeader()) {
    // A standby observes: it plans as the leader would, and writes nothing.
    return noWrites(cycle, 'standby', differences);
  }
  const stop = stopBeforeWrites(cycle);
  if (stop === 'refused') return refused(cycle);
  return stop === undefined ? undefined : nothingToDo(cycle, state);
}

/** A guard refused the plan: thrown (result `error`, the daemon backs off). */
function refused(cycle: Cycle): never {
  throw new GuardError(cycle.mask(`refusing to apply: ${cycle.verdict.refusals.join('; ')}`));
}

/**
 * The report of a plan with nothing to do: converged (its account kept for the next incremental
 * cycle), or drift when foreign conflicts block resources.
 */
function nothingToDo(cycle: Cycle, state: EngineState): ReconcileReport {
  const outOfSync = cycle.verdict.conflicts.length;
  state.kept = outOfSync === 0 ? cycle.prepared.live : undefined;
  if (outOfSync === 0) return noWrites(cycle, 'converged', 0);
  return noWrites(cycle, 'drift', outOfSync, {
    error: `${outOfSync} resource(s) blocked by hostports held by foreign edges`,
  });
}

/**
 * Whether the file at `path` declares fewer resources than at the last read a cycle went on
 * with: emptied, or truncated as a file rewritten in place is until its writer is done.
 */
export function declaresFewer(state: EngineState, path: string, resources: number): boolean {
  const before = state.held.get(path);
  return before !== undefined && resources < before.resources;
}

/**
 * Whether the files this cycle read are finished, as they are on disk now. Not when:
 * - a file was saved while it was read (its stamp moved since): what was read may be half a save;
 * - a file declares fewer resources than at the last read a cycle went on with (emptied, or
 *   truncated after a document, as a file rewritten in place is until its writer is done), or it
 *   got smaller while the plan deletes a resource or route; and the plan would write. Such a
 *   file is acted on only once a read at least `settleMs` after the first finds it unchanged (a
 *   file emptied on purpose), never on the first read.
 * Such a cycle writes nothing, and ends `superseded` with `reread`: the daemon reads again after
 * a debounce, whether or not the watcher saw the save. Undefined: the files are as read.
 */
export async function unsettled(
  cycle: Cycle,
  options: ReconcilerOptions,
  state: EngineState,
): Promise<ReconcileReport | undefined> {
  const { prepared } = cycle;
  const changedFile = await manifestsChangedSince(prepared);
  if (changedFile !== undefined) {
    options.logger.info({ file: changedFile }, 'a manifest changed while it was read: not applied');
    touchManifests(state.files, [changedFile]);
    return reread(cycle);
  }
  const { plan, stamps } = prepared;
  // An incremental read counts from what the file cache kept per file, not by walking the set.
  const declared = prepared.read === undefined ? resourcesByFile(prepared.desired) : undefined;
  const held = new Map<string, Held>();
  const writes = operationCount(plan) > 0;
  const deletes = outlineOf(plan).pending.some((c) => c.action === 'delete');
  const now = (options.now ?? Date.now)();
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const waiting: string[] = [];
  const waitingPaths: string[] = [];
  for (const [path, stamp] of stamps) {
    const before = state.held.get(path);
    // A file an incremental read took as last read, with the stamp it was held with: as held
    // (the same text, so the same size and resources), and nothing to check.
    if (before?.key === stamp.key && declared === undefined && prepared.read?.has(path) !== true) {
      held.set(path, before);
      continue;
    }
    const after: Held = {
      key: stamp.key,
      size: stamp.size,
      resources: declared?.get(stamp.file) ?? state.files.declaredIn(stamp.file),
    };
    held.set(path, after);
    if (before === undefined) continue;
    const lost =
      declaresFewer(state, path, after.resources) || (deletes && after.size < before.size);
    if (!lost) continue;
    const first = state.shrunk.get(path);
    if (first?.key === stamp.key && now - first.at >= settleMs) continue;
    if (first?.key !== stamp.key) state.shrunk.set(path, { key: stamp.key, at: now });
    waiting.push(stamp.file);
    waitingPaths.push(path);
  }
  if (waiting.length > 0 && writes) {
    options.logger.info(
      { files: waiting, settle_ms: settleMs },
      'a manifest file shrank: waiting to read it again',
    );
    // Read again next time whether or not the watcher reports it.
    touchManifests(state.files, waitingPaths);
    return reread(cycle);
  }
  // This read is the one the cycle goes on with.
  state.shrunk.clear();
  state.held = held;
  return undefined;
}

/** How many resources each file declares (edges, bot users, endpoints). */
function resourcesByFile(desired: DesiredSet): Map<string, number> {
  const out = new Map<string, number>();
  const all = [
    ...desired.tlsEdges,
    ...desired.httpsEdges,
    ...desired.botUsers,
    ...desired.cloudEndpoints,
  ];
  for (const r of all) out.set(r.source.file, (out.get(r.source.file) ?? 0) + 1);
  return out;
}

/** The report of a cycle that read files still being written: nothing written, read again. */
function reread(cycle: Cycle): ReconcileReport {
  const { mode, plan } = cycle.prepared;
  return {
    mode,
    listCalls: cycle.listCalls,
    result: 'superseded',
    summary: plan.summary,
    writes: 0,
    reread: true,
  };
}

/**
 * After an apply: the checked account is kept for the next incremental cycle only when it
 * converged. After a create whose answer was lost, the lost attempt may still land: the next
 * cycle lists everything again (a kept snapshot would hide the duplicate until the next resync).
 */
export function keepVerified(applied: Applied, state: EngineState): void {
  const { outcome, verified } = applied;
  const late = (outcome.result.uncertainCreates?.length ?? 0) > 0;
  if (outcome.converged && verified !== undefined && !late) state.kept = verified;
}

/** How a daemon cycle writes: fenced, suspendable, its progress in the log. */
export function writeHooks(
  options: ReconcilerOptions,
): Pick<RunOptions<ReconcileReport>, 'beforeWrite' | 'onProgress'> {
  return {
    beforeWrite: () => {
      options.leadership?.fence();
      if (options.mode?.() === 'observe') {
        throw new EdgesyncError('ES_SUSPENDED', 'suspended: writes stopped');
      }
    },
    // A long apply (a cold start under the API budget) says how far it is, in the log.
    onProgress: progressSteps(options.budget, (done, total, eta) =>
      options.logger.info(
        { done, total, ...(eta === undefined ? {} : { eta_s: Math.ceil(eta / 1000) }) },
        'apply progress',
      ),
    ),
  };
}

/** The report of a cycle that wrote: changed, drift, lost leadership, or error. */
export function appliedReport(
  cycle: Cycle,
  { outcome, replanned }: Applied,
  mode: ReconcilerOptions['mode'],
): ReconcileReport {
  const { plan } = cycle.prepared;
  const { result, residual } = outcome;
  const outOfSync =
    residual === undefined ? undefined : residual.changes.length + residual.blocked.length;
  const base = {
    mode: cycle.prepared.mode,
    listCalls: cycle.listCalls,
    summary: plan.summary,
    writes: result.writes,
    managed: cycle.managed,
    warnings: plan.warnings.map(cycle.mask),
    resources: replanned === undefined ? cycle.resources : withLiveIds(cycle.resources, replanned),
    ...(outOfSync === undefined ? {} : { outOfSync }),
  };
  if (result.fenced !== undefined) {
    if (mode?.() === 'observe') {
      return { ...base, result: 'drift', error: result.fenced, observed: true };
    }
    return { ...base, result: 'lost_leadership', error: result.fenced };
  }
  if (result.accountState !== undefined) {
    // The account refuses edge writes as a whole: say so plainly, once.
    return { ...base, result: 'error', error: ACCOUNT_STATE_MESSAGE[result.accountState] };
  }
  if (result.failed > 0 || result.aborted || outcome.verifyError !== undefined) {
    const reasons = [
      ...result.errors.map((e) => e.message),
      // A cut-over that stopped: which hosts and ports are unserved, and how to restore them.
      ...(result.unserved === undefined ? [] : [unservedMessage(result.unserved)]),
      ...(outcome.verifyError === undefined ? [] : [`not verified: ${outcome.verifyError}`]),
    ];
    return {
      ...base,
      result: 'error',
      error: cycle.mask(reasons.join('; ')) || 'apply did not complete',
    };
  }
  if (!outcome.converged) {
    return { ...base, result: 'drift', error: `${outOfSync ?? 0} difference(s) remain` };
  }
  return { ...base, result: 'changed' };
}
