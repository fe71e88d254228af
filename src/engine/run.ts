/**
 * The run: the one entry point `plan`, `apply` and the daemon's reconcile step call, so a plan
 * is assessed, confirmed, applied and verified one way. Its steps, in order:
 *   1. prepare: load the manifests and observe the account, and plan (the caller's strategy:
 *      the pipeline of pipeline.ts, or the daemon's incremental preparation);
 *   2. assess: the guards checked once (`checkGuards`), and the sensitive values that mask every
 *      output from here on (the caller's `ValueMask` too);
 *   3. the caller's checks before any write (`hold`): a saved plan's freshness, git-sync's link,
 *      a file still being written, observe mode, a standby; it may end the run (`held`);
 *   4. a run without a confirmation hook only plans (`plan`): it ends `planned`;
 *   5. a guard's refusal (`refused`), or a plan with nothing to do (`converged`, or `blocked` by
 *      foreign conflicts) ends it before any write;
 *   6. confirm: `apply`'s prompt or `--yes`; the daemon confirms every cycle (`declined`);
 *   7. apply, and verify with one re-plan on what was touched (`applied`);
 *   8. the ending goes back to the caller, who renders it (text, JSON, the daemon's report).
 * The executor takes the verdict of step 2 (`AssessedPlan`) instead of checking the guards again.
 */
import type { ApiClient, LiveSnapshot } from '../api/index.js';
import { applyAndVerify, type CycleOutcome } from '../apply/cycle.js';
import type { ProgressEvent } from '../apply/executor.js';
import { checkGuards, desiredCount, type GuardVerdict } from '../apply/guards.js';
import { observeAfterApply, ownBotUsersOf } from '../apply/verify.js';
import type { Logger } from '../log.js';
import { maskValues, type ValueMask } from '../manifest/secrets.js';
import {
  buildPlan,
  type MaskedPlan,
  maskPlan,
  operationCount,
  type Plan,
  writerStamps,
} from '../plan/index.js';
import type { PlanOptions } from '../plan/plan.js';
import type { Prepared } from './incremental.js';
import { type PreparePlanOptions, preparePlan } from './pipeline.js';
import { stableValues } from './report.js';

/** A prepared plan with its verdict and the values that mask what is shown of it. */
export interface Assessment {
  readonly prepared: Prepared;
  /** The guards' verdict, checked once for this plan. */
  readonly verdict: GuardVerdict;
  /** What the guards were checked with (the executor checks a clean-up plan with them too). */
  readonly guards: {
    readonly maxDeletes: number;
    readonly allowEmpty: boolean;
    readonly desiredCount: number;
  };
  /** The sensitive values of the set and the account (`secretValues`). */
  readonly values: readonly string[];
  /** Masks those values in a free-text message. */
  readonly mask: (text: string) => string;
  /** The copy of a plan (default: this run's) that may be shown or written anywhere. */
  readonly show: (plan?: Plan) => MaskedPlan;
}

/** What the apply did, and the check after it. */
export interface Applied {
  readonly outcome: CycleOutcome;
  /** The plan of the check after the apply (undefined when none ran). */
  readonly replanned: Plan | undefined;
  /** The account as that check saw it (undefined when none ran). */
  readonly verified: LiveSnapshot | undefined;
}

/** How a run ended; the caller renders it. `H`: what its own `hold` ends a run with. */
export type RunEnding<H> =
  | { readonly ending: 'held'; readonly run: Assessment; readonly held: H }
  | { readonly ending: 'planned' | 'refused' | 'converged' | 'blocked'; readonly run: Assessment }
  | { readonly ending: 'declined'; readonly run: Assessment; readonly reason: string }
  | { readonly ending: 'applied'; readonly run: Assessment; readonly applied: Applied };

export interface RunOptions<H> {
  /** Step 1: load, observe, plan. Throws when there is no plan (invalid manifests, a failed listing). */
  readonly prepare: () => Promise<Prepared>;
  readonly client: ApiClient;
  readonly maxDeletes: number;
  readonly allowEmpty: boolean;
  /** The planner's options for the check after the apply, read once the plan is prepared. */
  readonly planOptions: () => PlanOptions;
  /** Set to the run's sensitive values (for the log lines and the API's messages). */
  readonly mask?: ValueMask | undefined;
  /** The last run's values: handed back as the same array when they did not change. */
  readonly previousValues?: readonly string[] | undefined;
  /** Step 3: the caller's checks before any write; a value ends the run with it. */
  readonly hold?: ((run: Assessment) => Promise<H | undefined>) | undefined;
  /** Step 6: true to apply, or why not. Without it the run only plans. */
  readonly confirm?: ((run: Assessment) => Promise<true | string>) | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly concurrency: number;
  readonly logger?: Logger | undefined;
  /** Checked as every write leaves (leadership, suspension). */
  readonly beforeWrite?: (() => void) | undefined;
  readonly onProgress?: ((event: ProgressEvent) => void) | undefined;
  /**
   * Called once the writes are done, before the check after them reads the account: what the
   * apply allocated is garbage by then (the daemon collects it when the heap grew, so the
   * check's reading starts from what is live, not from the apply's peak).
   */
  readonly beforeVerify?: (() => void) | undefined;
}

/** Step 1 for `plan` and `apply`: the whole pipeline (pipeline.ts), load and list concurrently. */
export function pipeline(options: PreparePlanOptions): () => Promise<Prepared> {
  return async () => {
    const prepared = await preparePlan(options);
    return {
      plan: prepared.plan,
      live: prepared.snapshot,
      desired: prepared.desired,
      mode: 'full',
      stamps: prepared.manifests.stamps,
    };
  };
}

/** The run, step by step (see the header); each step either hands it on or ends it. */
export async function run<H = never>(options: RunOptions<H>): Promise<RunEnding<H>> {
  // 1. Load, observe, plan.
  const prepared = await options.prepare();
  // 2. Assess: the guards, once; the values every output is masked with.
  const assessment = assess(prepared, options);
  // 3. The caller's checks before any write.
  const held = await options.hold?.(assessment);
  if (held !== undefined) return { ending: 'held', run: assessment, held };
  // 4. A plan-only run ends here.
  if (options.confirm === undefined) return { ending: 'planned', run: assessment };
  // 5. Nothing may (a refusal) or need (an empty plan) be written.
  const stop = stopBeforeWrites(assessment);
  if (stop !== undefined) return { ending: stop, run: assessment };
  // 6. Confirm.
  const confirmed = await options.confirm(assessment);
  if (confirmed !== true) return { ending: 'declined', run: assessment, reason: confirmed };
  // 7. Apply, and verify with one re-plan.
  return { ending: 'applied', run: assessment, applied: await apply(assessment, options) };
}

/**
 * Step 5: whether the plan must not be written (a guard refused it) or need not (no operation:
 * converged, or blocked by foreign conflicts). Undefined: it goes on to its confirmation.
 */
export function stopBeforeWrites(
  assessment: Pick<Assessment, 'prepared' | 'verdict'>,
): 'refused' | 'converged' | 'blocked' | undefined {
  const { verdict, prepared } = assessment;
  if (verdict.refusals.length > 0) return 'refused';
  if (operationCount(prepared.plan) > 0) return undefined;
  return verdict.conflicts.length > 0 ? 'blocked' : 'converged';
}

/** What assessing a plan reads from the run's options. */
type AssessOptions = Pick<
  RunOptions<unknown>,
  'maxDeletes' | 'allowEmpty' | 'mask' | 'previousValues'
>;

/** Step 2: the guards' verdict, the counts they need, and the run's sensitive values. */
export function assess(prepared: Prepared, options: AssessOptions): Assessment {
  const { plan, live, desired } = prepared;
  const values = stableValues(desired, live, options.previousValues ?? []);
  options.mask?.set(values);
  const guards = {
    maxDeletes: options.maxDeletes,
    allowEmpty: options.allowEmpty,
    desiredCount: desiredCount(desired),
  };
  return {
    prepared,
    verdict: checkGuards(plan, { ...guards, live }),
    guards,
    values,
    mask: (text) => maskValues(text, values),
    show: (shown = plan) => maskPlan(shown, values),
  };
}

/**
 * Step 7: the executor runs the assessed plan (its verdict taken, not made again), then the
 * check reads back what was touched (GET by ID, not the whole account) and plans the same
 * desired set the same way on that view.
 */
async function apply(assessment: Assessment, options: RunOptions<unknown>): Promise<Applied> {
  const { plan, live, desired } = assessment.prepared;
  let verified: LiveSnapshot | undefined;
  let replanned: Plan | undefined;
  const planOptions = options.planOptions();
  const outcome = await applyAndVerify(plan, {
    client: options.client,
    live,
    concurrency: options.concurrency,
    signal: options.signal,
    logger: options.logger,
    guards: assessment.guards,
    assessed: { plan, verdict: assessment.verdict },
    beforeWrite: options.beforeWrite,
    onProgress: options.onProgress,
    stamp: writerStamps(desired, plan.owner),
    replan: async (result) => {
      options.beforeVerify?.();
      const again = await observeAfterApply(options.client, plan, live, result, {
        signal: options.signal,
        concurrency: options.concurrency,
      });
      verified = again;
      // Bot users this run provably created after a lost answer may go as duplicates.
      const ownBotUsers = ownBotUsersOf(result);
      replanned = buildPlan(desired, again, { ...planOptions, ownBotUsers });
      return { live: again, plan: replanned };
    },
  });
  return { outcome, replanned, verified };
}
