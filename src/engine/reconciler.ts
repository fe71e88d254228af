/**
 * The daemon's reconcile step: the same load -> observe -> plan pipeline as `edgesync plan`,
 * then the same executor and post-apply check as `edgesync apply --yes`, turned into the plain
 * `ReconcileReport` the daemon records. No second code path: a cycle is exactly an unattended
 * apply, with the daemon's extra guard that the git-sync link did not move between reading the
 * manifests and the first write (`assertCurrent`).
 *
 * Incremental cycles: the step keeps the account as of its last converged cycle. A
 * file event, or a git-sync revision (`link`: in Kubernetes every change arrives so), then
 * costs what it changes: the manifests are read (no API call) and planned
 * against that snapshot; only the edges and bot users that plan has operations for are read
 * again by ID, and the plan is made again from their current state before anything is
 * written; the post-apply check reads the touched ones back by ID. At 10,000 managed edges one
 * changed module costs 3 calls (GET, PATCH, GET). Every other trigger (start-up, the periodic
 * resync, a retry, a webhook, a manual request, leadership) lists the whole account: the
 * source of truth for drift and for anything the cached snapshot missed. A change whose plan
 * touches more roots than `INCREMENTAL_MAX_READS` (or than a listing would cost; a revision
 * that changed many files) runs a full cycle instead, and so does any event after a cycle
 * that did not converge. The two ways are the strategies of preparation.ts.
 */
import { withPriority } from '../api/priority.js';
import { ACCOUNT_STATE_MESSAGE, accountStateOf, EdgesyncError } from '../errors.js';
import { touchManifests } from '../manifest/loader.js';
import { operationCount } from '../plan/index.js';
import {
  type EngineState,
  newEngineState,
  planOptionsOf,
  type ReconcilerOptions,
} from './context.js';
import type {
  AnticipateFn,
  AnticipateInput,
  ReconcileFn,
  ReconcileInput,
  ReconcileReport,
} from './contract.js';
import { INCREMENTAL_MAX_READS, type Prepared } from './incremental.js';
import { anticipate, choosePreparation } from './preparation.js';
import { forgetLastCycle } from './report.js';
import { run } from './run.js';
import {
  appliedReport,
  type Cycle,
  cycleOf,
  holdBack,
  keepVerified,
  unsettled,
  writeHooks,
} from './steps.js';

/** Triggers that carry a change (of the manifests, or an operator's request): high priority. */
const CHANGE_REASONS: ReadonlySet<string> = new Set(['file', 'link', 'webhook', 'manual']);

/** The reconcile step, and the reading it can do ahead of a file event's cycle. */
export type Reconciler = ReconcileFn & { readonly anticipate: AnticipateFn };

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const state = newEngineState();
  const reconcile: ReconcileFn = async (input): Promise<ReconcileReport> => {
    // What changed is kept with the files at once: whatever this cycle comes to, no later read
    // takes a touched file as it was.
    touchManifests(state.files, input.changed);
    // A manifest change (or an operator's request) goes ahead of background work (a resync's
    // listing) in the limiter.
    return withPriority(CHANGE_REASONS.has(input.reason) ? 'high' : 'normal', () =>
      reconcileOnce(input, options, state),
    );
  };
  return Object.assign(reconcile, {
    anticipate: (input: AnticipateInput) => {
      touchManifests(state.files, input.changed);
      return anticipate(input, options, state);
    },
  });
}

/**
 * One cycle: the engine's run (run.ts) with the daemon's steps handed to it; each step either
 * hands the cycle on or ends it with its report. An incremental cycle that ends before writing
 * (preempted by a change, invalid manifests) leaves the kept snapshot as good as it was; a full
 * one drops it before it lists (preparation.ts), and keeps the new one only when it converges.
 */
async function reconcileOnce(
  input: ReconcileInput,
  options: ReconcilerOptions,
  state: EngineState,
): Promise<ReconcileReport> {
  let cycle: Cycle | undefined;
  const ending = await run<ReconcileReport>({
    // 1. Prepare the plan: in full, or incrementally against the kept snapshot.
    prepare: () => prepare(input, options, state),
    client: options.client,
    maxDeletes: options.maxDeletes,
    allowEmpty: options.allowEmpty,
    planOptions: () => planOptionsOf(options, state),
    // 2. The run assesses it: guards, this cycle's sensitive values (for the log too).
    mask: options.mask,
    previousValues: state.secrets,
    hold: async (assessment) => {
      // 3. git-sync may have swapped the link while we read: a set read from the old worktree
      //    may be partial, and applying it would delete what it lacks.
      await input.assertCurrent();
      cycle = cycleOf(assessment, state);
      // 4. Stop when a file was saved while it was read, or reads as one still being written
      //    (smaller than last time, not yet confirmed): it is read again after a debounce.
      // 5. Stop when nothing may be written (observing, standby, a guard's refusal: thrown) or
      //    needs to be.
      return (await unsettled(cycle, options, state)) ?? holdBack(cycle, options, state);
    },
    // 6. An unattended apply confirms itself. From the first write until the check says
    //    converged, the kept snapshot is not the account.
    confirm: async () => {
      state.kept = undefined;
      return true;
    },
    signal: input.signal,
    concurrency: options.concurrency,
    logger: options.logger,
    beforeVerify: options.beforeVerify,
    ...writeHooks(options),
  });
  // 7. Report what the apply did (every other ending was held back, with its report).
  if (ending.ending === 'held') return ending.held;
  if (ending.ending !== 'applied' || cycle === undefined) {
    throw new EdgesyncError('ES_INTERNAL', `a daemon cycle ended ${ending.ending}`);
  }
  keepVerified(ending.applied, state);
  const report = appliedReport(cycle, ending.applied, options.mode);
  // A cycle that wrote more than an incremental one may (the start-up cycle creating the set)
  // made changes the next plan shares few of: what the report kept of them goes now, not at the
  // next full cycle, so the collection after this cycle keeps only what the next one needs (V8
  // sizes the next cycle's heap from it).
  if (operationCount(cycle.prepared.plan) > INCREMENTAL_MAX_READS) forgetLastCycle(state.secrets);
  return report;
}

/** The chosen preparation; an account that refuses writes as a whole said once, plainly. */
async function prepare(
  input: ReconcileInput,
  options: ReconcilerOptions,
  state: EngineState,
): Promise<Prepared> {
  try {
    return await choosePreparation(input, options, state).prepare(input);
  } catch (err) {
    const accountState = accountStateOf(err);
    if (accountState !== undefined) {
      throw new EdgesyncError('ES_ACCOUNT_STATE', ACCOUNT_STATE_MESSAGE[accountState], {
        cause: err,
      });
    }
    throw err;
  }
}
