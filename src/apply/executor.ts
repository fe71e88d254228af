/**
 * The executor of plans (design section 4): runs a plan's operations against the API and says
 * what happened. It decides nothing about WHAT to write (the planner did); it owns HOW:
 * - order: phases `release` -> `main` -> `delete`, one after the other; inside a phase the
 *   operations of one root run in plan order, roots run in parallel up to `concurrency`;
 * - references to created resources (`{ created: address }`) filled from the IDs earlier POSTs
 *   returned (`binds`);
 * - failure semantics: a failed operation stops its root (later steps of that edge would act on
 *   a half-written state); a DELETE answered 404 is done; a PATCH/PUT answered 404 means the
 *   resource vanished: its root stops with a message saying the next run recreates it; a POST
 *   whose outcome is unknown is re-sent only after a fresh read shows it did not happen;
 * - deletes only when the cycle is clean: if any earlier operation failed, the delete phase is
 *   skipped, and the result says so;
 * - abort: no new operation starts once the signal fires; the one in flight finishes.
 * One structured log line per operation: method, concrete path (IDs only), address, status,
 * duration, outcome. Never a body: bodies carry secrets.
 */

import type { ApiClient } from '../api/index.js';
import { isNotFound, isOutcomeUnknown, realSleep, type Sleep } from '../api/index.js';
import {
  ACCOUNT_STATE_MESSAGE,
  accountStateOf,
  EdgesyncError,
  errorMessage,
  GuardError,
} from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import type { Operation, Phase, Plan, ResourceChange } from '../plan/model.js';
import { resolveTarget, type Target, targetPath } from '../plan/target.js';
import { runPool } from '../pool.js';
import { runCutover, type Unserved, unservedMessage } from './cutover.js';
import { InvalidOperationError, type Sent, sendOperation } from './dispatch.js';
import { findCreated, type LookupClient } from './find-created.js';
import { checkGuards, type GuardOptions } from './guards.js';

export const DEFAULT_CONCURRENCY = 4;
/** POST attempts for one create, each after a lookup showed the previous one did not land. */
export const DEFAULT_CREATE_ATTEMPTS = 6;
const PHASES: readonly Phase[] = ['release', 'cutover', 'main', 'delete'];

export type OperationOutcome =
  /** Performed. */
  | 'ok'
  /** A POST whose answer was lost; a lookup found what it created. */
  | 'recovered'
  /** A DELETE of something already gone. */
  | 'gone'
  | 'failed'
  /** Not attempted: its root failed earlier, deletes were skipped, or the run was aborted. */
  | 'skipped';

export interface ProgressEvent {
  /** Operations finished so far (any outcome), and in all. */
  readonly done: number;
  readonly total: number;
  readonly address: string;
  readonly method: Operation['method'];
  /** Concrete path (IDs, no secrets), or the template when a placeholder could not be filled. */
  readonly path: string;
  readonly outcome: OperationOutcome;
  /** HTTP status: the documented success status, the error's, or 0 (no answer, or skipped). */
  readonly status: number;
  readonly durationMs: number;
}

export interface OperationFailure {
  readonly address: string;
  readonly root: string;
  readonly method: Operation['method'];
  readonly path: string;
  readonly message: string;
  /** The error's stable code (`ES_API`, `ES_NETWORK`...). */
  readonly code: string;
}

export interface ExecuteResult {
  /** Operations in the plan. */
  readonly total: number;
  /** Finished successfully (including recovered creates and already-gone deletes). */
  readonly done: number;
  readonly failed: number;
  readonly skipped: number;
  /** Operations that changed the live state (done minus already-gone deletes). */
  readonly writes: number;
  readonly errors: readonly OperationFailure[];
  /** Roots stopped because a PATCH/PUT found their resource gone. */
  readonly vanished: readonly string[];
  /** True when delete operations were left out because something earlier failed. */
  readonly deletesSkipped: boolean;
  readonly aborted: boolean;
  /** Set when `beforeWrite` refused a write: the message it gave; nothing more was sent. */
  readonly fenced?: string | undefined;
  /** Set when the account refused edge writes as a whole (read-only edges, no edge access). */
  readonly accountState?: 'read-only' | 'no-access' | undefined;
  /**
   * Creates whose outcome was unknown at least once (present when there are any): the lost
   * attempt may still land later, as a duplicate of the one this run recorded.
   */
  readonly uncertainCreates?: readonly UncertainCreate[] | undefined;
  /**
   * Hosts and ports an edge served until this run deleted it, whose cloud endpoint was then not
   * created (present when there are any): the cut-over stopped there.
   */
  readonly unserved?: readonly Unserved[] | undefined;
  /** Address -> ID of every resource this run created (or recovered). */
  readonly created: Readonly<Record<string, string>>;
  /** Human-readable notes (skipped deletes, vanished resources), for the summary. */
  readonly messages: readonly string[];
}

export interface UncertainCreate {
  /** The created resource's address in the plan (`https_edge.shop`, `bot_user.ci`). */
  readonly address: string;
  /** The manifest name (edges, bot users) or the route's `match`. */
  readonly name: string;
  readonly kind: Target['kind'];
  /** The ID this run recorded for it. */
  readonly id: string;
  /**
   * True when `id` came from this run's own 201 answer: provably created by this process.
   * False when a lookup found it (it may be someone else's namesake).
   */
  readonly answered: boolean;
}

export interface ExecuteOptions {
  readonly client: ApiClient;
  /** Roots in parallel; default 4. */
  readonly concurrency?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
  readonly onProgress?: ((event: ProgressEvent) => void) | undefined;
  /** Client used for the lookups after a POST of unknown outcome; default `client`. */
  readonly observeForRecovery?: LookupClient | undefined;
  /** Checked before the first write; a refusal throws `GuardError` and nothing is written. */
  readonly guards?: GuardOptions | undefined;
  readonly createAttempts?: number | undefined;
  readonly sleep?: Sleep | undefined;
  readonly now?: (() => number) | undefined;
  readonly random?: (() => number) | undefined;
  /**
   * Fencing: called before every write is sent (each POST attempt included). When it throws,
   * that write is not sent, no further operation starts, and the result says `fenced` (leader
   * election: this process no longer holds a lease renewed within the renew deadline).
   */
  readonly beforeWrite?: (() => void) | undefined;
}

interface Step {
  readonly change: ResourceChange;
  readonly op: Operation;
}

/**
 * A write the fence refused (inside the POST retry loop): the step is skipped, not failed. A
 * private signal, caught where the step ends and never seen by a caller (the result says
 * `fenced`), so it is outside the error hierarchy and carries no code.
 */
class FencedError extends Error {}

/** A failure that carries an exact, user-facing message (vanished resources). */
class VanishedError extends EdgesyncError {
  constructor(message: string, cause: unknown) {
    super('ES_API', message, { cause });
  }
}

export async function executePlan(plan: Plan, options: ExecuteOptions): Promise<ExecuteResult> {
  const verdict = checkGuards(plan, options.guards);
  if (verdict.refusals.length > 0) {
    throw new GuardError(
      `refusing to apply the plan:\n${verdict.refusals.map((r) => `  - ${r}`).join('\n')}`,
    );
  }
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_CONCURRENCY));
  const log = (options.logger ?? silentLogger()).child({ module: 'apply' });
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const lookup = options.observeForRecovery ?? options.client;
  const createAttempts = Math.max(1, options.createAttempts ?? DEFAULT_CREATE_ATTEMPTS);
  const signal = options.signal;

  const steps: Step[] = plan.changes.flatMap((change) =>
    change.operations.map((op) => ({ change, op })),
  );
  const total = steps.length;
  const bindings = new Map<string, string>();
  const failedRoots = new Set<string>();
  /** Roots with an operation that did not run (skipped): a `requires` on them is not met. */
  const unfinishedRoots = new Set<string>();
  const vanished: string[] = [];
  const errors: OperationFailure[] = [];
  const messages: string[] = [];
  const uncertain: UncertainCreate[] = [];
  const counts = { finished: 0, done: 0, failed: 0, skipped: 0, writes: 0 };
  let deletesSkipped = false;
  const unserved: Unserved[] = [];

  const report = (step: Step, path: string, outcome: OperationOutcome, status: number, ms = 0) => {
    counts.finished += 1;
    if (outcome === 'failed') counts.failed += 1;
    else if (outcome === 'skipped') {
      counts.skipped += 1;
      unfinishedRoots.add(step.change.root);
    } else {
      counts.done += 1;
      if (outcome !== 'gone') counts.writes += 1;
    }
    const event: ProgressEvent = {
      done: counts.finished,
      total,
      address: step.change.address,
      method: step.op.method,
      path,
      outcome,
      status,
      durationMs: ms,
    };
    if (outcome !== 'skipped') {
      const line = {
        method: event.method,
        path,
        address: event.address,
        status,
        durationMs: ms,
        outcome,
      };
      if (outcome === 'failed') log.error(line, 'operation failed');
      else log.info(line, 'operation');
    }
    options.onProgress?.(event);
  };

  /** Set when the account refuses edge writes as a whole: nothing more is sent this cycle. */
  let accountState: 'read-only' | 'no-access' | undefined;
  /** Set when the fence refused a write: nothing more is sent this cycle. */
  let fenced: string | undefined;
  /** The fence, before each write: false (and `fenced` set) when the write must not go out. */
  const mayWrite = (): boolean => {
    if (fenced !== undefined) return false;
    try {
      options.beforeWrite?.();
      return true;
    } catch (err) {
      fenced = errorMessage(err);
      log.warn({ reason: fenced }, 'write fenced: no further operation is sent');
      return false;
    }
  };

  const fail = (step: Step, path: string, err: unknown, ms: number, status = statusOf(err)) => {
    failedRoots.add(step.change.root);
    const state = accountStateOf(err);
    if (state !== undefined && accountState === undefined) {
      accountState = state;
      messages.push(ACCOUNT_STATE_MESSAGE[state]);
    }
    const message =
      err instanceof VanishedError ? err.message : `${step.change.address}: ${errorMessage(err)}`;
    errors.push({
      address: step.change.address,
      root: step.change.root,
      method: step.op.method,
      path,
      message,
      code: err instanceof EdgesyncError ? err.code : 'ES_INTERNAL',
    });
    report(step, path, 'failed', status, ms);
  };

  /** Resolves the target's references; undefined when one names a create that did not happen. */
  const concrete = (op: Operation): Target | undefined =>
    resolveTarget(op.target, (address) => bindings.get(address));

  const postWithRecovery = async (
    step: Step,
    target: Target,
    path: string,
  ): Promise<Sent & { found: boolean }> => {
    /** Set once an attempt's outcome was unknown: that attempt may still land later. */
    let unknown = false;
    const settled = (id: string | undefined, answered: boolean) => {
      if (unknown && id !== undefined) {
        const { address, name } = step.change;
        uncertain.push({ address, name, kind: target.kind, id, answered });
      }
    };
    for (let attempt = 1; ; attempt++) {
      if (!mayWrite()) throw new FencedError(fenced ?? 'fenced');
      try {
        const sent = await sendOperation(options.client, 'POST', target, step.op.body);
        settled(sent.id, true);
        return { ...sent, found: false };
      } catch (err) {
        if (!isOutcomeUnknown(err)) throw err;
        unknown = true;
        const id = await findCreated(lookup, target, step.op.body);
        log.warn(
          { method: 'POST', path, address: step.change.address, attempt, found: id !== undefined },
          'create outcome unknown; looked it up',
        );
        if (id !== undefined) {
          settled(id, false);
          return { id, found: true };
        }
        if (attempt >= createAttempts || signal?.aborted) throw err;
        // The create provably did not land: wait a little (full jitter), then send it again.
        await sleep(Math.floor(random() * Math.min(5_000, 200 * 2 ** (attempt - 1))));
      }
    }
  };

  const runStep = async (step: Step): Promise<boolean> => {
    const { op, change } = step;
    // Fail closed: an endpoint whose host and port an edge, or whose URL another endpoint, had
    // to release first is not written when that release did not succeed (the service would
    // answer 381, or 18009 and its kin).
    const unmet = (op.requires ?? []).filter((r) => failedRoots.has(r) || unfinishedRoots.has(r));
    if (unmet.length > 0) {
      fail(
        step,
        op.path,
        new EdgesyncError(
          'ES_API',
          `not attempted: it waits for ${unmet.join(', ')} to release its host and port or URL, which did not succeed`,
        ),
        0,
      );
      return false;
    }
    const target = concrete(op);
    if (target === undefined) {
      fail(
        step,
        op.path,
        new InvalidOperationError(`${op.path} depends on a resource that was not created`),
        0,
      );
      return false;
    }
    const path = targetPath(target);
    if (op.method !== 'POST' && !mayWrite()) {
      report(step, path, 'skipped', 0);
      return false;
    }
    const started = now();
    try {
      const sent =
        op.method === 'POST'
          ? await postWithRecovery(step, target, path)
          : { ...(await sendOperation(options.client, op.method, target, op.body)), found: false };
      if (op.binds !== undefined) {
        if (sent.id === undefined) {
          throw new InvalidOperationError(`${op.method} ${path} binds ${op.binds} but made no ID`);
        }
        bindings.set(op.binds, sent.id);
      }
      const status = sent.found ? 0 : successStatus(op.method);
      report(step, path, sent.found ? 'recovered' : 'ok', status, now() - started);
      return true;
    } catch (err) {
      const ms = now() - started;
      if (op.method === 'DELETE' && isNotFound(err)) {
        report(step, path, 'gone', 404, ms);
        return true;
      }
      if ((op.method === 'PATCH' || op.method === 'PUT') && isNotFound(err)) {
        vanished.push(change.root);
        const what =
          change.address === change.root ? change.address : `${change.address} (of ${change.root})`;
        fail(
          step,
          path,
          new VanishedError(`${what} vanished; it will be recreated on the next run`, err),
          ms,
          404,
        );
        return false;
      }
      if (err instanceof FencedError) {
        report(step, path, 'skipped', 0);
        return false;
      }
      fail(step, path, err, ms);
      return false;
    }
  };

  for (const phase of PHASES) {
    const inPhase = steps.filter((s) => s.op.phase === phase);
    if (inPhase.length === 0) continue;
    if (accountState !== undefined || fenced !== undefined) {
      for (const s of inPhase) report(s, s.op.path, 'skipped', 0);
      continue;
    }
    if (phase === 'cutover' && counts.failed > 0) {
      // A cut-over deletes edges: like the deletes, only on a clean cycle.
      messages.push(
        `cut-over to cloud endpoints not started because ${counts.failed} operation(s) failed; the edges keep serving`,
      );
      for (const s of inPhase) report(s, s.op.path, 'skipped', 0);
      continue;
    }
    if (phase === 'cutover') {
      const cut = await runCutover(inPhase, {
        concurrency,
        runStep,
        skip: (s) => report(s, s.op.path, 'skipped', 0),
        halted: () =>
          signal?.aborted === true || accountState !== undefined || fenced !== undefined,
      });
      unserved.push(...cut.unserved);
      if (cut.unserved.length > 0) messages.push(unservedMessage(cut.unserved));
      if (cut.stoppedAt !== undefined && cut.notStarted.length > 0) {
        messages.push(
          `cut-over stopped at ${cut.stoppedAt}: ${cut.notStarted.length} edge(s) not cut over, still serving (${cut.notStarted.join(', ')})`,
        );
      }
      continue;
    }
    if (phase === 'delete' && counts.failed > 0) {
      deletesSkipped = true;
      messages.push(
        `${inPhase.length} delete operation(s) skipped because ${counts.failed} operation(s) failed; ` +
          'deletes run only when the rest of the cycle succeeded',
      );
      for (const s of inPhase) report(s, s.op.path, 'skipped', 0);
      continue;
    }
    const byRoot = new Map<string, Step[]>();
    for (const s of inPhase) {
      const list = byRoot.get(s.change.root);
      if (list === undefined) byRoot.set(s.change.root, [s]);
      else list.push(s);
    }
    await runPool([...byRoot.values()], concurrency, async (rootSteps) => {
      for (const [i, s] of rootSteps.entries()) {
        if (
          signal?.aborted ||
          accountState !== undefined ||
          fenced !== undefined ||
          failedRoots.has(s.change.root)
        ) {
          for (const rest of rootSteps.slice(i)) report(rest, rest.op.path, 'skipped', 0);
          return;
        }
        await runStep(s);
      }
    });
  }

  for (const root of new Set(vanished)) {
    messages.push(`${root} vanished; it will be recreated on the next run`);
  }
  if (signal?.aborted) messages.push('aborted: no further operations were started');
  if (fenced !== undefined) messages.push(`${fenced}; no further operations were started`);
  return {
    total,
    done: counts.done,
    failed: counts.failed,
    skipped: counts.skipped,
    writes: counts.writes,
    errors,
    vanished: [...new Set(vanished)],
    deletesSkipped,
    aborted: signal?.aborted ?? false,
    ...(accountState === undefined ? {} : { accountState }),
    ...(fenced === undefined ? {} : { fenced }),
    ...(uncertain.length === 0 ? {} : { uncertainCreates: uncertain }),
    ...(unserved.length === 0 ? {} : { unserved }),
    created: Object.fromEntries(bindings),
    messages,
  };
}

function statusOf(err: unknown): number {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : 0;
}

function successStatus(method: Operation['method']): number {
  switch (method) {
    case 'POST':
      return 201;
    case 'DELETE':
      return 204;
    default:
      return 200;
  }
}
