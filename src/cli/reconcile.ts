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
 * that did not converge.
 */
import { type ApiClient, callCount, type LiveSnapshot } from '../api/index.js';
import { withPriority } from '../api/priority.js';
import { unservedMessage } from '../apply/cutover.js';
import { applyAndVerify } from '../apply/cycle.js';
import { checkGuards, desiredCount } from '../apply/guards.js';
import { progressSteps } from '../apply/progress.js';
import { observeAfterApply, ownBotUsersOf } from '../apply/verify.js';
import type { ReconcileFn, ReconcileInput, ReconcileReport } from '../daemon/index.js';
import { ACCOUNT_STATE_MESSAGE, accountStateOf, EdgesyncError, GuardError } from '../errors.js';
import type { Logger } from '../log.js';
import { FileCache } from '../manifest/build.js';
import { manifestsChangedSince } from '../manifest/loader.js';
import { maskValues, type ValueMask } from '../manifest/secrets.js';
import { buildPlan, operationCount, type Plan, PlanMemo } from '../plan/index.js';
import { managedCounts, resourcesOf, stableValues, withLiveIds } from './cycle-report.js';
import { INCREMENTAL_REASONS, type Prepared, prepareIncremental } from './incremental.js';
import { preparePlan } from './pipeline.js';

/** @internal tests size their edits from it */
export { INCREMENTAL_MAX_READS } from './incremental.js';

export interface ReconcilerOptions {
  readonly client: ApiClient;
  readonly owner: string;
  readonly allowEmpty: boolean;
  readonly maxDeletes: number;
  readonly concurrency: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly secretDirs: readonly string[];
  /** `--exclude` globs, relative to the manifest directory. */
  readonly exclude?: readonly string[] | undefined;
  readonly logger: Logger;
  /** The client's API budget, for the ETA of long applies. */
  readonly budget?: { readonly limit: number; readonly windowMs: number } | undefined;
  /** Incremental cycles for file events (default true); false lists the account every cycle. */
  readonly incremental?: boolean | undefined;
  /**
   * `observe`: plan every cycle and report each difference as drift, never write (`--mode
   * observe`, or a suspended daemon). Read at each cycle and before each write, so a suspension
   * stops writes at once.
   */
  readonly mode?: (() => 'enforce' | 'observe') | undefined;
  /**
   * Set to each cycle's sensitive values (read from env or file), for the log lines the cycle
   * writes (`createLogger({ mask })`). The report's own strings are masked here either way.
   */
  readonly mask?: ValueMask | undefined;
  /** Leader election: standbys plan but never write; the applier fences every write. */
  readonly leadership?: { isLeader(): boolean; fence(): void } | undefined;
}

export function createReconciler(options: ReconcilerOptions): ReconcileFn {
  const { client } = options;
  /**
   * The verdicts of up-to-date edges, kept between cycles (`PlanMemo`). A full listing makes every
   * record new, so a full cycle starts a new memo: the old verdicts go before the listing comes.
   */
  let memo = new PlanMemo();
  const planOptions = () => ({
    owner: options.owner,
    allowEmpty: options.allowEmpty,
    maxDeletes: options.maxDeletes,
    memo,
  });
  /** The account as of the last converged cycle (undefined: the next cycle lists it). */
  let cached: LiveSnapshot | undefined;
  /**
   * The manifest files as parsed last time: an unchanged file is not parsed again and yields the
   * same objects, which (with the kept snapshot's records) lets the planner skip the edges it
   * already found up to date. A cycle costs what changed, not what is managed.
   */
  const files = new FileCache();
  /** The last cycle's sensitive values: the same array while they do not change. */
  let secrets: readonly string[] = [];
  const incremental = () => ({ ...options, plan: planOptions(), cache: files });

  /** The whole pipeline: load and list concurrently, plan. */
  async function prepareFull({ dir, signal, assertCurrent }: ReconcileInput): Promise<Prepared> {
    let prepared: Awaited<ReturnType<typeof preparePlan>>;
    memo = new PlanMemo();
    try {
      prepared = await preparePlan({
        dir,
        client,
        ...planOptions(),
        env: options.env,
        secretDirs: options.secretDirs,
        exclude: options.exclude,
        cache: files,
        signal,
        // Fingerprints guard saved plans (`plan --out`); a cycle applies its own plan at once.
        fingerprint: false,
      });
    } catch (err) {
      // git-sync deletes the old worktree right after a swap: files vanishing under the loader
      // are the swap, not broken manifests. Report the swap (a superseded cycle: no failure, no
      // bogus diagnostics) when the link moved; the real error otherwise.
      await assertCurrent();
      throw err;
    }
    return {
      plan: prepared.plan,
      live: prepared.snapshot,
      desired: prepared.desired,
      mode: 'full',
      stamps: prepared.manifests.stamps,
    };
  }

  return async (input): Promise<ReconcileReport> =>
    // A manifest change (or an operator's request) goes ahead of background work (a resync's
    // listing) in the limiter.
    withPriority(CHANGE_REASONS.has(input.reason) ? 'high' : 'normal', () => reconcileOnce(input));

  async function reconcileOnce(input: ReconcileInput): Promise<ReconcileReport> {
    const { signal, assertCurrent } = input;
    // A cycle that ends before writing (preempted by a change, invalid manifests, a failed
    // listing) leaves the kept snapshot as good as it was.
    const known = cached;
    let prepared: Prepared | undefined;
    try {
      if (
        options.incremental !== false &&
        INCREMENTAL_REASONS.has(input.reason) &&
        known !== undefined
      ) {
        prepared = await prepareIncremental(input, known, incremental());
        if (prepared === undefined) {
          options.logger.debug('the change touches many resources: full cycle');
        }
      }
      prepared ??= await prepareFull(input);
    } catch (err) {
      const state = accountStateOf(err);
      if (state !== undefined) {
        throw new EdgesyncError('ES_ACCOUNT_STATE', ACCOUNT_STATE_MESSAGE[state], { cause: err });
      }
      throw err;
    }
    // git-sync may have swapped the link while we read: a set read from the old worktree may be
    // partial, and applying it would delete what it lacks.
    await assertCurrent();
    const { plan, live, desired, mode } = prepared;
    // What this cycle's full observation cost: the daemon sizes the resync interval with it
    // (an incremental cycle listed nothing, and says nothing about it).
    const listCalls = mode === 'full' ? callCount(live.calls) : undefined;
    secrets = stableValues(desired, live, secrets);
    const values = secrets;
    options.mask?.set(values);
    const mask = (text: string) => maskValues(text, values);
    const guards = {
      maxDeletes: options.maxDeletes,
      allowEmpty: options.allowEmpty,
      desiredCount: desiredCount(desired),
    };
    const verdict = checkGuards(plan, { ...guards, live });
    const managed = managedCounts(plan);
    // Per-resource status and events name resources: a name read from env is masked there too.
    const resources = resourcesOf(plan, values);
    /** The report of a cycle that wrote nothing. */
    const noWrites = (
      result: ReconcileReport['result'],
      outOfSync: number,
      extra: Partial<ReconcileReport> = {},
    ): ReconcileReport => ({
      mode,
      listCalls,
      result,
      summary: plan.summary,
      writes: 0,
      managed,
      outOfSync,
      warnings: plan.warnings.map(mask),
      resources,
      ...extra,
    });
    const differences = resources.changes.length + resources.blocked.length;
    if (options.mode?.() === 'observe') {
      // Observe mode (or suspended): every difference is drift; nothing is written.
      return noWrites(differences === 0 ? 'converged' : 'drift', differences, { observed: true });
    }
    if (options.leadership !== undefined && !options.leadership.isLeader()) {
      // A standby observes: it plans as the leader would, and writes nothing.
      return noWrites('standby', differences);
    }
    if (verdict.refusals.length > 0) {
      throw new GuardError(mask(`refusing to apply: ${verdict.refusals.join('; ')}`));
    }
    if (operationCount(plan) === 0) {
      const outOfSync = verdict.conflicts.length;
      cached = outOfSync === 0 ? live : undefined;
      return noWrites(
        outOfSync === 0 ? 'converged' : 'drift',
        outOfSync,
        outOfSync === 0
          ? {}
          : { error: `${outOfSync} resource(s) blocked by hostports held by foreign edges` },
      );
    }
    // A file saved while it was read (a truncated file reads as no edges) is not acted on: the
    // save's own event reconciles the finished file next.
    const changedFile = await manifestsChangedSince(prepared);
    if (changedFile !== undefined) {
      options.logger.info(
        { file: changedFile },
        'a manifest changed while it was read: not applied',
      );
      return { mode, listCalls, result: 'superseded', summary: plan.summary, writes: 0 };
    }
    // From the first write until the check says converged, the kept snapshot is not the account.
    cached = undefined;
    let verified: LiveSnapshot | undefined;
    let replanned: Plan | undefined;
    const outcome = await applyAndVerify(plan, {
      client,
      live,
      concurrency: options.concurrency,
      signal,
      logger: options.logger,
      guards,
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
      // Verify what was touched (GET by ID), not the whole account: the periodic resync is
      // the full observation that finds drift elsewhere.
      replan: async (result): Promise<{ plan: Plan; live: LiveSnapshot }> => {
        const again = await observeAfterApply(client, plan, live, result, {
          signal,
          concurrency: options.concurrency,
        });
        verified = again;
        const ownBotUsers = ownBotUsersOf(result);
        replanned = buildPlan(desired, again, { ...planOptions(), ownBotUsers });
        return { live: again, plan: replanned };
      },
    });
    const { result } = outcome;
    const residual = outcome.residual;
    const outOfSync =
      residual === undefined ? undefined : residual.changes.length + residual.blocked.length;
    // After a create whose answer was lost, the lost attempt may still land: the next cycle
    // lists everything again (a kept snapshot would hide the duplicate until the next resync).
    const late = (outcome.result.uncertainCreates?.length ?? 0) > 0;
    if (outcome.converged && verified !== undefined && !late) cached = verified;
    const base = {
      mode,
      listCalls,
      summary: plan.summary,
      writes: result.writes,
      managed,
      warnings: plan.warnings.map(mask),
      resources: replanned === undefined ? resources : withLiveIds(resources, replanned),
      ...(outOfSync === undefined ? {} : { outOfSync }),
    };
    if (result.fenced !== undefined) {
      if (options.mode?.() === 'observe') {
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
        error: mask(reasons.join('; ')) || 'apply did not complete',
      };
    }
    if (!outcome.converged) {
      return { ...base, result: 'drift', error: `${outOfSync ?? 0} difference(s) remain` };
    }
    return { ...base, result: 'changed' };
  }
}

/** Triggers that carry a change (of the manifests, or an operator's request): high priority. */
const CHANGE_REASONS: ReadonlySet<string> = new Set(['file', 'link', 'webhook', 'manual']);
