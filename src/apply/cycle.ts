/**
 * One apply cycle after the plan exists: execute it, then observe again and re-plan through the
 * same code path (the caller's `replan`), and say whether the live state converged. The
 * convergence invariant is the product's promise: after an apply, the next plan is empty. What
 * the re-plan still wants to do is the residual drift, reported with a non-zero exit.
 */
import type { LiveSnapshot } from '../api/index.js';
import { errorMessage } from '../errors.js';
import type { Blocked, Plan, ResourceChange } from '../plan/model.js';
import { type ExecuteOptions, type ExecuteResult, executePlan } from './executor.js';
import { classifyBlocked, type GuardOptions } from './guards.js';

export interface CycleOptions extends Omit<ExecuteOptions, 'guards'> {
  /** The live state the plan was computed from (ownership and protect double-checks). */
  readonly live: LiveSnapshot;
  readonly guards?: Omit<GuardOptions, 'live'> | undefined;
  /** Observes again and re-plans with the same manifests and options. */
  /** Plans again after the writes (given what was done), e.g. on `verifyTouched`'s view. */
  readonly replan: (
    result: ExecuteResult,
  ) => Promise<{ readonly plan: Plan; readonly live: LiveSnapshot }>;
}

export interface Residual {
  /** Changes the re-plan still wants (operations to run). */
  readonly changes: ResourceChange[];
  /** Blocked entries that keep the account from matching the manifests. */
  readonly blocked: Blocked[];
}

export interface CycleOutcome {
  readonly result: ExecuteResult;
  readonly converged: boolean;
  /** Undefined when the post-apply check could not run (see `verifyError`). */
  readonly residual: Residual | undefined;
  readonly verifyError: string | undefined;
  /** From the executed plan: protected edges kept, and foreign conflicts left out. */
  readonly kept: Blocked[];
  readonly conflicts: Blocked[];
}

/** What in a plan means "not converged": anything to do, or anything blocked but `kept`. */
export function residualOf(plan: Plan, live: LiveSnapshot): Residual {
  const { fatal, conflicts } = classifyBlocked(plan, live);
  return {
    changes: plan.changes.filter((c) => c.action !== 'noop' || c.operations.length > 0),
    blocked: [...fatal, ...conflicts],
  };
}

export function isEmptyResidual(r: Residual): boolean {
  return r.changes.length === 0 && r.blocked.length === 0;
}

export async function applyAndVerify(plan: Plan, options: CycleOptions): Promise<CycleOutcome> {
  const { conflicts, kept } = classifyBlocked(plan, options.live);
  const result = await executePlan(plan, {
    ...options,
    guards: { ...options.guards, live: options.live },
  });
  if (result.aborted || result.fenced !== undefined) {
    return {
      result,
      converged: false,
      residual: undefined,
      verifyError: result.fenced ?? 'aborted',
      kept,
      conflicts,
    };
  }
  try {
    const again = await options.replan(result);
    const residual = residualOf(again.plan, again.live);
    return {
      result,
      converged: isEmptyResidual(residual) && result.failed === 0,
      residual,
      verifyError: undefined,
      kept,
      conflicts,
    };
  } catch (err) {
    return {
      result,
      converged: false,
      residual: undefined,
      verifyError: errorMessage(err),
      kept,
      conflicts,
    };
  }
}
