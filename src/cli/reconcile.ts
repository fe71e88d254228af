/**
 * The daemon's reconcile step: the same load -> observe -> plan pipeline as `edgesync plan`,
 * then the same executor and post-apply check as `edgesync apply --yes`, turned into the plain
 * `ReconcileReport` the daemon records. No second code path: a cycle is exactly an unattended
 * apply, with the daemon's extra guard that the git-sync link did not move between reading the
 * manifests and the first write (`assertCurrent`).
 */
import type { ApiClient, LiveSnapshot } from '../api/index.js';
import { applyAndVerify } from '../apply/cycle.js';
import { checkGuards, desiredCount } from '../apply/guards.js';
import { progressSteps } from '../apply/progress.js';
import { verifyTouched } from '../apply/verify.js';
import type { ManagedCounts, ReconcileFn, ReconcileReport } from '../daemon/index.js';
import { ACCOUNT_STATE_MESSAGE, accountStateOf, EdgesyncError, GuardError } from '../errors.js';
import type { Logger } from '../log.js';
import { buildPlan, operationCount, type Plan } from '../plan/index.js';
import { preparePlan } from './pipeline.js';

export interface ReconcilerOptions {
  readonly client: ApiClient;
  readonly owner: string;
  readonly allowEmpty: boolean;
  readonly maxDeletes: number;
  readonly concurrency: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly secretDirs: readonly string[];
  readonly logger: Logger;
  /** The client's API budget, for the ETA of long applies. */
  readonly budget?: { readonly limit: number; readonly windowMs: number } | undefined;
  /** Leader election: standbys plan but never write; the applier fences every write. */
  readonly leadership?: { isLeader(): boolean; fence(): void } | undefined;
}

/** Resources this controller manages once the plan is done: everything it keeps or creates. */
function managedCounts(plan: Plan): ManagedCounts {
  const counts = { tls_edge: 0, https_edge: 0, bot_user: 0 };
  for (const change of plan.changes) {
    if (change.action === 'delete' || change.kind === 'route') continue;
    counts[change.kind] += 1;
  }
  return counts;
}

export function createReconciler(options: ReconcilerOptions): ReconcileFn {
  const { client } = options;
  const planOptions = {
    owner: options.owner,
    allowEmpty: options.allowEmpty,
    maxDeletes: options.maxDeletes,
  };
  return async ({ dir, signal, assertCurrent }): Promise<ReconcileReport> => {
    let prepared: Awaited<ReturnType<typeof preparePlan>>;
    try {
      prepared = await preparePlan({
        dir,
        client,
        ...planOptions,
        env: options.env,
        secretDirs: options.secretDirs,
        signal,
        // Fingerprints guard saved plans (`plan --out`); a cycle applies its own plan at once.
        fingerprint: false,
      });
    } catch (err) {
      // git-sync deletes the old worktree right after a swap: files vanishing under the loader
      // are the swap, not broken manifests. Report the swap (a superseded cycle: no failure, no
      // bogus diagnostics) when the link moved; the real error otherwise.
      await assertCurrent();
      const state = accountStateOf(err);
      if (state !== undefined) {
        throw new EdgesyncError('ES_ACCOUNT_STATE', ACCOUNT_STATE_MESSAGE[state], { cause: err });
      }
      throw err;
    }
    // git-sync may have swapped the link while we read: a set read from the old worktree may be
    // partial, and applying it would delete what it lacks.
    await assertCurrent();
    const { plan, snapshot: live, desired } = prepared;
    // What this cycle's full observation cost: the daemon sizes the resync interval with it.
    const listCalls = live.calls.tls + live.calls.https + live.calls.botUsers;
    const guards = {
      maxDeletes: options.maxDeletes,
      allowEmpty: options.allowEmpty,
      desiredCount: desiredCount(desired),
    };
    const verdict = checkGuards(plan, { ...guards, live });
    const managed = managedCounts(plan);
    if (options.leadership !== undefined && !options.leadership.isLeader()) {
      // A standby observes: it plans as the leader would, and writes nothing.
      return {
        result: 'standby',
        listCalls,
        summary: plan.summary,
        writes: 0,
        managed,
        outOfSync: plan.changes.filter((c) => c.action !== 'noop').length + plan.blocked.length,
        warnings: plan.warnings,
      };
    }
    if (verdict.refusals.length > 0) {
      throw new GuardError(`refusing to apply: ${verdict.refusals.join('; ')}`);
    }
    if (operationCount(plan) === 0) {
      const outOfSync = verdict.conflicts.length;
      return {
        result: outOfSync === 0 ? 'converged' : 'drift',
        listCalls,
        summary: plan.summary,
        writes: 0,
        managed,
        outOfSync,
        warnings: plan.warnings,
        ...(outOfSync === 0
          ? {}
          : { error: `${outOfSync} resource(s) blocked by hostports held by foreign edges` }),
      };
    }
    const outcome = await applyAndVerify(plan, {
      client,
      live,
      concurrency: options.concurrency,
      signal,
      logger: options.logger,
      guards,
      beforeWrite: options.leadership ? () => options.leadership?.fence() : undefined,
      // A long apply (a cold start under the API budget) says how far it is, in the log.
      onProgress: progressSteps(options.budget, (done, total, eta) =>
        options.logger.info(
          { done, total, ...(eta === undefined ? {} : { eta_s: Math.ceil(eta / 1000) }) },
          'apply progress',
        ),
      ),
      // Verify what was touched (GET by ID), not the whole account: the periodic resync is
      // the full observation that finds drift elsewhere.
      replan: async (result): Promise<{ plan: Plan; live: LiveSnapshot }> => {
        const again = await verifyTouched(client, plan, live, result, { signal });
        return { live: again, plan: buildPlan(desired, again, planOptions) };
      },
    });
    const { result } = outcome;
    const residual = outcome.residual;
    const outOfSync =
      residual === undefined ? undefined : residual.changes.length + residual.blocked.length;
    const base = {
      listCalls,
      summary: plan.summary,
      writes: result.writes,
      managed,
      warnings: plan.warnings,
      ...(outOfSync === undefined ? {} : { outOfSync }),
    };
    if (result.fenced !== undefined) {
      return { ...base, result: 'lost_leadership', error: result.fenced };
    }
    if (result.accountState !== undefined) {
      // The account refuses edge writes as a whole: say so plainly, once.
      return { ...base, result: 'error', error: ACCOUNT_STATE_MESSAGE[result.accountState] };
    }
    if (result.failed > 0 || result.aborted || outcome.verifyError !== undefined) {
      const reasons = [
        ...result.errors.map((e) => e.message),
        ...(outcome.verifyError === undefined ? [] : [`not verified: ${outcome.verifyError}`]),
      ];
      return { ...base, result: 'error', error: reasons.join('; ') || 'apply did not complete' };
    }
    if (!outcome.converged) {
      return { ...base, result: 'drift', error: `${outOfSync ?? 0} difference(s) remain` };
    }
    return { ...base, result: 'changed' };
  };
}
