/**
 * One apply cycle after the plan exists: execute it, then observe again and re-plan through the
 * same code path (the caller's `replan`), and say whether the live state converged. The
 * convergence invariant is the product's promise: after an apply, the next plan is empty. What
 * the re-plan still wants to do is the residual drift, reported with a non-zero exit.
 */
import type { LiveSnapshot } from '../api/index.js';
import { errorMessage } from '../errors.js';
import type { Blocked, Plan, ResourceChange } from '../plan/model.js';
import { outlineOf } from '../plan/outline.js';
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
    changes: [...outlineOf(plan).pending],
    blocked: [...fatal, ...conflicts],
  };
}

export function isEmptyResidual(r: Residual): boolean {
  return r.changes.length === 0 && r.blocked.length === 0;
}

export async function applyAndVerify(plan: Plan, options: CycleOptions): Promise<CycleOutcome> {
  // Assessed once by the engine's run (guards and the blocked entries alike); else sorted here.
  const { conflicts, kept } =
    options.assessed?.plan === plan
      ? options.assessed.verdict
      : classifyBlocked(plan, options.live);
  let result = await executePlan(plan, {
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
    let again = await options.replan(result);
    const cleaned = await cleanLateDuplicates(result, again, options);
    if (cleaned !== undefined) {
      result = cleaned;
      again = await options.replan(result);
    }
    const unproven = unprovenDuplicates(result, again.live);
    if (unproven.length > 0) result = { ...result, messages: [...result.messages, ...unproven] };
    const residual = residualOf(again.plan, again.live);
    return {
      result,
      converged: isEmptyResidual(residual) && result.failed === 0 && unproven.length === 0,
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

/** The duplicates a late create left: deletes of `<address>#<id>` for an uncertain create. */
function lateDuplicates(result: ExecuteResult, plan: Plan): ResourceChange[] {
  const uncertain = result.uncertainCreates ?? [];
  if (uncertain.length === 0) return [];
  const prefixes = uncertain.map((u) => `${u.address}#`);
  return plan.changes.filter(
    (c) =>
      c.action === 'delete' &&
      c.address === c.root &&
      prefixes.some((p) => c.address.startsWith(p)),
  );
}

/**
 * Same-cycle cleanup after a create whose outcome was unknown: when the check shows its lost
 * attempt landed late as a duplicate (an owned edge with the same `edgesync/name`, or a bot
 * user this process provably created), deletes it now, so the apply ends with one record per
 * manifest. Only those deletes run (the rest of the residual is reported as usual), through
 * the same guards. Returns the result with the cleanup counted in, or undefined when there was
 * nothing to clean.
 */
async function cleanLateDuplicates(
  result: ExecuteResult,
  again: { readonly plan: Plan; readonly live: LiveSnapshot },
  options: CycleOptions,
): Promise<ExecuteResult | undefined> {
  const changes = lateDuplicates(result, again.plan);
  if (changes.length === 0) return undefined;
  // A new plan: its guards are checked, not the first plan's verdict taken.
  const cleanup = await executePlan(
    { ...again.plan, changes, blocked: [] },
    { ...options, assessed: undefined, guards: { ...options.guards, live: again.live } },
  );
  const notes = changes.map(
    (c) =>
      `${c.address}: a create whose answer was lost landed late as a duplicate; ` +
      `${cleanup.failed === 0 ? 'deleted' : 'delete attempted'} (${c.reason})`,
  );
  return {
    ...result,
    total: result.total + cleanup.total,
    done: result.done + cleanup.done,
    failed: result.failed + cleanup.failed,
    skipped: result.skipped + cleanup.skipped,
    writes: result.writes + cleanup.writes,
    errors: [...result.errors, ...cleanup.errors],
    messages: [...result.messages, ...notes, ...cleanup.messages],
  };
}

/**
 * Bot users named like one this run created after a lost answer, when more than one is left
 * (none of the rest provably this process's: each lost attempt may have landed late): reported,
 * never deleted. Converged means no duplicates, so the cycle does not say converged.
 */
function unprovenDuplicates(result: ExecuteResult, live: LiveSnapshot): string[] {
  const out: string[] = [];
  for (const u of result.uncertainCreates ?? []) {
    if (u.kind !== 'bot_users') continue;
    const namesakes = live.botUsers.filter((b) => b.name === u.name).map((b) => b.id);
    if (namesakes.length < 2) continue;
    out.push(
      `${u.address}: ${namesakes.length} bot users named ${JSON.stringify(u.name)} (${namesakes.join(', ')}) ` +
        'after a create whose answer was lost; none can be proven to be one edgesync created, ' +
        'so none was deleted: delete the extra ones by hand',
    );
  }
  return out;
}
