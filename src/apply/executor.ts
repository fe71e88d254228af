/**
 * The executor of plans (design section 4): runs a plan's operations against the API and says
 * what happened. It decides nothing about WHAT to write (the planner did); it owns HOW:
 * - order: the plan's dependency graph and nothing else (../plan/graph.ts): its units (a root's
 *   operations of one role, in plan order; a cut-over unit: an edge's DELETE and then the creates
 *   of the cloud endpoints that take its hosts and ports, ./cutover.ts) in waves, each wave's
 *   units in parallel up to `concurrency`;
 * - `requires` and `after`: an operation whose required roots did not all succeed is not
 *   attempted (fails closed);
 * - references to created resources (`{ created: address }`) filled from the IDs earlier POSTs
 *   returned (`binds`);
 * - failure semantics: a failed operation stops its root (later steps of that edge would act on
 *   a half-written state); a DELETE answered 404 is done; a PATCH/PUT answered 404 means the
 *   resource vanished: its root stops with a message saying the next run recreates it; a POST
 *   whose outcome is unknown is re-sent only after a fresh read shows it did not happen;
 * - a clean cycle: the cut-over and the deletes wait behind joins of the graph; when an operation
 *   before the join failed, every unit behind it is skipped, and the result says so;
 * - the writer stamp of write-only values (./writer-stamp.ts): the actor learned from answers,
 *   a write made before it was known followed by one metadata-only PATCH that records it;
 * - abort: no new operation starts once the signal fires; the exchange in flight finishes;
 * - the fence (`beforeWrite`, and the abort) is checked as each request leaves, every retry
 *   included (`RequestOptions.fence`): a write refused there is reported as not sent.
 * One structured log line per operation: method, concrete path (IDs only), address, status,
 * duration, outcome. Never a body: bodies carry secrets.
 */

import type { ApiClient } from '../api/index.js';
import { isNotFound, isOutcomeUnknown } from '../api/index.js';
import {
  AbortedError,
  ACCOUNT_STATE_MESSAGE,
  accountStateOf,
  EdgesyncError,
  errorMessage,
  FencedWriteError,
  GuardError,
} from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import { type GraphStep, type Join, type PlanGraph, planGraph, type Unit } from '../plan/graph.js';
import type { Operation, Plan } from '../plan/model.js';
import { outlineOf } from '../plan/outline.js';
import { resolveTarget, type Target, targetPath } from '../plan/target.js';
import { runPool } from '../pool.js';
import { type Backoff, realSleep, retrying, type Sleep } from '../retry.js';
import { type CutoverState, cutoverMessages, runCutoverUnit, type Unserved } from './cutover.js';
import { InvalidOperationError, type Sent, sendOperation } from './dispatch.js';
import { findCreated, type LookupClient } from './find-created.js';
import { type AssessedPlan, checkGuards, type GuardOptions, type GuardVerdict } from './guards.js';
import { type WriterStamp, WriterStamps } from './writer-stamp.js';

export const DEFAULT_CONCURRENCY = 4;
/** POST attempts for one create, each after a lookup showed the previous one did not land. */
export const DEFAULT_CREATE_ATTEMPTS = 6;

/** The waits between those attempts: 200 ms doubling, at most 5 s, full jitter. */
const CREATE_BACKOFF: Backoff = { baseMs: 200, maxMs: 5_000 };

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
  /** A failed operation's error, as its own message says it (no address before it). */
  readonly error?: string | undefined;
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
  /**
   * The verdict the caller already assessed for this very plan (the engine's run checks the
   * guards once): taken instead of checking `guards` again. A verdict made for another plan
   * object is ignored, and the guards are checked.
   */
  readonly assessed?: AssessedPlan | undefined;
  readonly createAttempts?: number | undefined;
  readonly sleep?: Sleep | undefined;
  readonly now?: (() => number) | undefined;
  readonly random?: (() => number) | undefined;
  /**
   * Fencing: called as every write leaves, each attempt included (a retry after a backoff or a
   * 429, a request that waited in the rate limiter, a POST re-sent after a lookup). When it
   * throws, that write is not sent, no further operation starts, and the result says `fenced`
   * (leader election: this process no longer holds a lease renewed within the renew deadline;
   * a suspended daemon).
   */
  readonly beforeWrite?: (() => void) | undefined;
  /**
   * The metadata recording the actor a resource with write-only values is written as
   * (`writerStamps` of src/plan/generic.ts, made from the desired set where the digest key is):
   * a write whose answer names another actor than its record keeps is followed by one PATCH
   * stamping it. Absent: writes go as planned, and the next plan sees the difference.
   */
  readonly stamp?: WriterStamp | undefined;
}

type Step = GraphStep;

/** A failure that carries an exact, user-facing message (vanished resources). */
class VanishedError extends EdgesyncError {
  constructor(message: string, cause: unknown) {
    super('ES_API', message, { cause });
  }
}

/** Everything one execution reads and records; the steps below take it explicitly. */
interface Run {
  readonly options: ExecuteOptions;
  readonly concurrency: number;
  readonly log: Logger;
  readonly now: () => number;
  readonly sleep: Sleep;
  readonly random: () => number;
  readonly lookup: LookupClient;
  readonly createAttempts: number;
  readonly signal: AbortSignal | undefined;
  readonly total: number;
  readonly bindings: Map<string, string>;
  readonly failedRoots: Set<string>;
  /**
   * Per operation, the operations it fails closed on (its graph edges `reference`, `claim`,
   * `handover`): it is not attempted unless each of them succeeded.
   */
  readonly needs: ReadonlyMap<number, readonly GraphStep[]>;
  readonly vanished: string[];
  readonly errors: OperationFailure[];
  readonly messages: string[];
  readonly uncertain: UncertainCreate[];
  readonly stamps: WriterStamps;
  /** Each operation's outcome, by its index in the plan (what a join's gate reads). */
  readonly outcomes: (OperationOutcome | undefined)[];
  /** Joins whose gate was decided: true when closed (an operation before it failed). */
  readonly gates: Map<Join, boolean>;
  /** Units already reported skipped as a whole (behind a closed gate). */
  readonly settled: Set<Unit>;
  readonly cutover: CutoverState;
  readonly counts: {
    finished: number;
    done: number;
    failed: number;
    skipped: number;
    writes: number;
  };
  deletesSkipped: boolean;
  /** Set when the account refuses edge writes as a whole: nothing more is sent this cycle. */
  accountState: 'read-only' | 'no-access' | undefined;
  /** Set when the fence refused a write: nothing more is sent this cycle. */
  fenced: string | undefined;
}

/** The plan's verdict: the one assessed for it, else the guards checked now. */
function verdictOf(plan: Plan, options: ExecuteOptions): GuardVerdict {
  const { assessed } = options;
  return assessed?.plan === plan ? assessed.verdict : checkGuards(plan, options.guards);
}

export async function executePlan(plan: Plan, options: ExecuteOptions): Promise<ExecuteResult> {
  const verdict = verdictOf(plan, options);
  if (verdict.refusals.length > 0) {
    throw new GuardError(
      `refusing to apply the plan:\n${verdict.refusals.map((r) => `  - ${r}`).join('\n')}`,
    );
  }
  // The changes that write only: 50,000 changes after one save, a few of them with operations.
  const graph = planGraph(outlineOf(plan).writing);
  const run = startRun(options, graph);
  const lastCutover = graph.waves.findLastIndex((wave) => wave.some((u) => u.cutover));
  for (const [i, wave] of graph.waves.entries()) {
    await runWave(run, graph, wave);
    if (i === lastCutover) run.messages.push(...cutoverMessages(run.cutover));
  }
  return resultOf(run);
}

/** Outcomes that meet a requirement. */
const SUCCEEDED: ReadonlySet<OperationOutcome> = new Set(['ok', 'recovered', 'gone']);

/** The edges an operation fails closed on, by the operation's index. */
function needsOf(graph: PlanGraph): Map<number, GraphStep[]> {
  const out = new Map<number, GraphStep[]>();
  for (const e of graph.edges) {
    if (e.reason !== 'reference' && e.reason !== 'claim' && e.reason !== 'handover') continue;
    const from = graph.steps[e.from];
    if (from === undefined) continue;
    const list = out.get(e.to);
    if (list === undefined) out.set(e.to, [from]);
    else list.push(from);
  }
  return out;
}

function startRun(options: ExecuteOptions, graph: PlanGraph): Run {
  const total = graph.steps.length;
  return {
    options,
    concurrency: Math.max(1, Math.floor(options.concurrency ?? DEFAULT_CONCURRENCY)),
    log: (options.logger ?? silentLogger()).child({ module: 'apply' }),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
    lookup: options.observeForRecovery ?? options.client,
    createAttempts: Math.max(1, options.createAttempts ?? DEFAULT_CREATE_ATTEMPTS),
    signal: options.signal,
    total,
    bindings: new Map(),
    failedRoots: new Set(),
    needs: needsOf(graph),
    vanished: [],
    errors: [],
    messages: [],
    uncertain: [],
    stamps: new WriterStamps(options.stamp),
    outcomes: new Array(total),
    gates: new Map(),
    settled: new Set(),
    cutover: { unserved: [], notStarted: [] },
    counts: { finished: 0, done: 0, failed: 0, skipped: 0, writes: 0 },
    deletesSkipped: false,
    accountState: undefined,
    fenced: undefined,
  };
}

/** True once nothing more may be sent this cycle (the account refused writes, or the fence). */
function halted(run: Run): boolean {
  return run.accountState !== undefined || run.fenced !== undefined;
}

/**
 * One wave of the graph: its units in parallel up to the concurrency. A unit is not started
 * once the run is halted, nor behind a closed gate.
 */
async function runWave(run: Run, graph: PlanGraph, wave: readonly Unit[]): Promise<void> {
  const open: Unit[] = [];
  const halt: Step[] = [];
  for (const unit of wave) {
    if (run.settled.has(unit)) continue;
    if (halted(run)) halt.push(...stepsOf(unit));
    else if (!gateClosed(run, graph, unit)) open.push(unit);
  }
  skipAll(
    run,
    halt.sort((a, b) => a.index - b.index),
  );
  const cutover = {
    runStep: (s: Step) => runStep(run, s),
    skip: (s: Step) => report(run, s, s.op.path, 'skipped', 0),
    halted: () => run.signal?.aborted === true || halted(run),
  };
  await runPool(open, run.concurrency, (unit) =>
    unit.cutover ? runCutoverUnit(unit, cutover, run.cutover) : runUnit(run, unit),
  );
}

function stepsOf(unit: Unit): Step[] {
  return [...unit.lead, ...unit.follow.flat()];
}

function skipAll(run: Run, steps: readonly Step[]): void {
  for (const s of steps) report(run, s, s.op.path, 'skipped', 0);
}

/**
 * Whether the unit waits behind a join whose gate is closed: an operation before the join
 * failed. Decided once per join, when its first unit is reached (everything before the join
 * has finished then): a closed gate skips every unit behind it at once, with one message.
 */
function gateClosed(run: Run, graph: PlanGraph, unit: Unit): boolean {
  const join = unit.clean;
  if (join === undefined) return false;
  const decided = run.gates.get(join);
  if (decided !== undefined) return decided;
  const node = graph.joins[join];
  const closed = graph.edges.some((e) => e.to === node && run.outcomes[e.from] === 'failed');
  run.gates.set(join, closed);
  if (!closed) return false;
  const behind = graph.waves.flat().filter((u) => u.clean === join);
  for (const u of behind) run.settled.add(u);
  const steps = behind.flatMap(stepsOf).sort((a, b) => a.index - b.index);
  if (join === 'settled') {
    run.deletesSkipped = true;
    run.messages.push(
      `${steps.length} delete operation(s) skipped because ${run.counts.failed} operation(s) failed; ` +
        'deletes run only when the rest of the cycle succeeded',
    );
  } else {
    // A cut-over deletes edges: like the deletes, only on a clean cycle.
    run.messages.push(
      `cut-over to cloud endpoints not started because ${run.counts.failed} operation(s) failed; the edges keep serving`,
    );
  }
  skipAll(run, steps);
  return true;
}

/**
 * A unit's operations in plan order; a root that failed (here or in an earlier unit) stops, and
 * so does the run once aborted or halted. An operation whose `requires` or `after` roots did not
 * succeed fails closed (`concreteTarget`).
 */
async function runUnit(run: Run, unit: Unit): Promise<void> {
  const steps = unit.lead;
  for (const [i, s] of steps.entries()) {
    if (run.signal?.aborted || halted(run) || run.failedRoots.has(s.change.root)) {
      skipAll(run, steps.slice(i));
      return;
    }
    await runStep(run, s);
  }
}

function resultOf(run: Run): ExecuteResult {
  const { counts, messages, signal, accountState, fenced, uncertain } = run;
  const { unserved } = run.cutover;
  for (const root of new Set(run.vanished)) {
    messages.push(`${root} vanished; it will be recreated on the next run`);
  }
  if (signal?.aborted) messages.push('aborted: no further operations were started');
  if (fenced !== undefined) messages.push(`${fenced}; no further operations were started`);
  return {
    total: run.total,
    done: counts.done,
    failed: counts.failed,
    skipped: counts.skipped,
    writes: counts.writes,
    errors: run.errors,
    vanished: [...new Set(run.vanished)],
    deletesSkipped: run.deletesSkipped,
    aborted: signal?.aborted ?? false,
    ...(accountState === undefined ? {} : { accountState }),
    ...(fenced === undefined ? {} : { fenced }),
    ...(uncertain.length === 0 ? {} : { uncertainCreates: uncertain }),
    ...(unserved.length === 0 ? {} : { unserved }),
    created: Object.fromEntries(run.bindings),
    messages,
  };
}

/** Counts one finished operation, logs it (unless skipped) and tells the progress callback. */
function report(
  run: Run,
  step: Step,
  path: string,
  outcome: OperationOutcome,
  status: number,
  ms = 0,
  error?: string,
): void {
  const { counts } = run;
  counts.finished += 1;
  run.outcomes[step.index] = outcome;
  if (outcome === 'failed') counts.failed += 1;
  else if (outcome === 'skipped') counts.skipped += 1;
  else {
    counts.done += 1;
    if (outcome !== 'gone') counts.writes += 1;
  }
  const event: ProgressEvent = {
    done: counts.finished,
    total: run.total,
    address: step.change.address,
    method: step.op.method,
    path,
    outcome,
    status,
    durationMs: ms,
    ...(error === undefined ? {} : { error }),
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
    if (outcome === 'failed') run.log.error(line, 'operation failed');
    else run.log.info(line, 'operation');
  }
  run.options.onProgress?.(event);
}

/**
 * The fence the client checks as each write of this run leaves (every attempt): the run's abort,
 * a fence that already refused, and `beforeWrite`. Throws when the write must not go out.
 */
function writeFence(run: Run): () => void {
  return () => {
    if (run.signal?.aborted) throw new AbortedError('aborted: no further operations were started');
    if (run.fenced !== undefined) throw new EdgesyncError('ES_FENCED', run.fenced);
    run.options.beforeWrite?.();
  };
}

/** Records a refusal of the fence: nothing more is sent this run. */
function fenced(run: Run, err: FencedWriteError): void {
  // An abort is the run's own: the result says `aborted`, not `fenced`.
  if (err.cause instanceof AbortedError || run.fenced !== undefined) return;
  run.fenced = err.message;
  run.log.warn(
    { reason: run.fenced, method: err.method, path: err.path },
    'write fenced: not sent, and no further operation is sent',
  );
}

/** The fence, before an operation starts: false (and `fenced` set) when it must not go out. */
function mayWrite(run: Run, method: Operation['method'], path: string): boolean {
  try {
    writeFence(run)();
    return true;
  } catch (err) {
    fenced(run, new FencedWriteError(method, path, errorMessage(err), { cause: err }));
    return false;
  }
}

function fail(
  run: Run,
  step: Step,
  path: string,
  err: unknown,
  ms: number,
  status = statusOf(err),
): void {
  run.failedRoots.add(step.change.root);
  const state = accountStateOf(err);
  if (state !== undefined && run.accountState === undefined) {
    run.accountState = state;
    run.messages.push(ACCOUNT_STATE_MESSAGE[state]);
  }
  const message =
    err instanceof VanishedError ? err.message : `${step.change.address}: ${errorMessage(err)}`;
  run.errors.push({
    address: step.change.address,
    root: step.change.root,
    method: step.op.method,
    path,
    message,
    code: err instanceof EdgesyncError ? err.code : 'ES_INTERNAL',
  });
  const error = errorMessage(err instanceof VanishedError ? err.cause : err);
  report(run, step, path, 'failed', status, ms, error);
}

/** A POST; when its outcome is unknown, a lookup decides whether to re-send it. */
async function postWithRecovery(
  run: Run,
  step: Step,
  target: Target,
  path: string,
): Promise<Sent & { found: boolean }> {
  /** Set once an attempt's outcome was unknown: that attempt may still land later. */
  let unknown = false;
  const settled = (id: string | undefined, answered: boolean) => {
    if (unknown && id !== undefined) {
      const { address, name } = step.change;
      run.uncertain.push({ address, name, kind: target.kind, id, answered });
    }
  };
  // A create that provably did not land waits a little (full jitter) and is sent again.
  const loop = {
    attempts: run.createAttempts,
    backoff: CREATE_BACKOFF,
    sleep: run.sleep,
    random: run.random,
    signal: run.signal,
  };
  return retrying<Sent & { found: boolean }>(loop, async (attempt) => {
    try {
      const sent = await sendOperation(
        run.options.client,
        'POST',
        target,
        step.op.body,
        writeFence(run),
      );
      settled(sent.id, true);
      return { done: true, value: { ...sent, found: false } };
    } catch (err) {
      if (!isOutcomeUnknown(err)) throw err;
      unknown = true;
      const id = await findCreated(run.lookup, target, step.op.body);
      run.log.warn(
        { method: 'POST', path, address: step.change.address, attempt, found: id !== undefined },
        'create outcome unknown; looked it up',
      );
      if (id === undefined) return { done: false, failure: err };
      settled(id, false);
      return { done: true, value: { id, found: true } };
    }
  });
}

/**
 * The target with its references filled, or a failure recorded (undefined) when a required
 * release did not succeed or a reference names a create that did not happen.
 */
function concreteTarget(run: Run, step: Step): Target | undefined {
  const { op } = step;
  // Fail closed: an endpoint whose host and port an edge, or whose URL another endpoint, had
  // to release first is not written when that release did not succeed (the service would
  // answer 381, or 18009 and its kin).
  // Its predecessors by those edges: the operations of the roots it names.
  const unsettled = new Set(
    (run.needs.get(step.index) ?? [])
      .filter((p) => !SUCCEEDED.has(run.outcomes[p.index] ?? 'skipped'))
      .map((p) => p.change.root),
  );
  const unmet = [...(op.requires ?? []), ...(op.after ?? [])].filter((r) => unsettled.has(r));
  if (unmet.length > 0) {
    const message = `not attempted: it waits for ${unmet.join(', ')} (${waitsFor(op)}), which did not succeed`;
    fail(run, step, op.path, new EdgesyncError('ES_API', message), 0);
    return undefined;
  }
  const target = resolveTarget(op.target, (address) => run.bindings.get(address));
  if (target === undefined) {
    const message = `${op.path} depends on a resource that was not created`;
    fail(run, step, op.path, new InvalidOperationError(message), 0);
  }
  return target;
}

/** What a required root was to do first, in words. */
function waitsFor(op: Operation): string {
  if (op.after !== undefined && op.after.length > 0) {
    return op.method === 'DELETE' ? 'to stop referring to it' : 'to create what it refers to';
  }
  return 'to release its host and port or URL';
}

/**
 * The body with each `{created:ADDRESS}` placeholder at the operation's `fills` paths replaced
 * by the ID that create returned; undefined (and a failure recorded) when one was not created.
 */
function filledBody(run: Run, step: Step): { readonly body: unknown } | undefined {
  const { op } = step;
  if (op.fills === undefined || op.fills.length === 0) return { body: op.body };
  const body = structuredClone(op.body) as Record<string | number, unknown>;
  for (const path of op.fills) {
    const parent = path
      .slice(0, -1)
      .reduce<unknown>(
        (at, key) => (at as Record<string | number, unknown> | undefined)?.[key],
        body,
      ) as Record<string | number, unknown> | undefined;
    const key = path[path.length - 1] as string | number;
    const text = parent?.[key];
    if (parent === undefined || typeof text !== 'string') continue;
    let missing: string | undefined;
    parent[key] = text.replace(/\{created:([^}]+)\}/g, (_, address: string) => {
      const id = run.bindings.get(address);
      if (id === undefined) missing = address;
      return id ?? '';
    });
    if (missing !== undefined) {
      const message = `${op.path} refers to ${missing}, which was not created`;
      fail(run, step, op.path, new InvalidOperationError(message), 0);
      return undefined;
    }
  }
  return { body };
}

/** One operation: sent, recorded, its created ID bound; true when it succeeded. */
async function runStep(run: Run, step: Step): Promise<boolean> {
  const target = concreteTarget(run, step);
  if (target === undefined) return false;
  const filled = filledBody(run, step);
  if (filled === undefined) return false;
  const path = targetPath(target);
  if (!mayWrite(run, step.op.method, path)) {
    report(run, step, path, 'skipped', 0);
    return false;
  }
  const { address, kind } = step.change;
  const stamped = await run.stamps.before(address, kind, step.op, filled.body);
  const op = { ...step.op, body: stamped.body };
  const started = run.now();
  try {
    const sent =
      op.method === 'POST'
        ? await postWithRecovery(run, { ...step, op }, target, path)
        : {
            ...(await sendOperation(
              run.options.client,
              op.method,
              target,
              op.body,
              writeFence(run),
            )),
            found: false,
          };
    if (op.binds !== undefined) {
      if (sent.id === undefined) {
        throw new InvalidOperationError(`${op.method} ${path} binds ${op.binds} but made no ID`);
      }
      run.bindings.set(op.binds, sent.id);
    }
    await stampWriter(run, step, sent.answer);
    const status = sent.found ? 0 : successStatus(op.method);
    report(run, step, path, sent.found ? 'recovered' : 'ok', status, run.now() - started);
    return true;
  } catch (err) {
    return stepFailed(run, step, path, err, run.now() - started);
  } finally {
    stamped.release?.();
  }
}

/**
 * The PATCH recording the actor a write's answer names, when its record keeps another one (the
 * first write on an account): part of the write's step, counted as a write. Its failure leaves
 * the value written and unstamped (the next plan writes it again), so it fails nothing.
 */
async function stampWriter(run: Run, step: Step, answer: unknown): Promise<void> {
  const followUp = run.stamps.after(step.change.address, step.change.kind, answer);
  if (followUp === undefined) return;
  const path = targetPath(followUp.target);
  const line = { method: 'PATCH', path, address: step.change.address };
  try {
    await sendOperation(
      run.options.client,
      'PATCH',
      followUp.target,
      followUp.body,
      writeFence(run),
    );
    run.counts.writes += 1;
    run.log.info({ ...line, outcome: 'ok' }, 'writer recorded');
  } catch (err) {
    if (err instanceof FencedWriteError) {
      fenced(run, err);
      return;
    }
    run.log.warn({ ...line, error: errorMessage(err) }, 'writer not recorded');
    run.messages.push(
      `${step.change.address}: the actor it was written as is not recorded (${errorMessage(err)}); the next run writes it again`,
    );
  }
}

/** Records a sent operation's error: a 404 on DELETE is done, on PATCH/PUT the root vanished. */
function stepFailed(run: Run, step: Step, path: string, err: unknown, ms: number): boolean {
  const { op, change } = step;
  if (op.method === 'DELETE' && isNotFound(err)) {
    report(run, step, path, 'gone', 404, ms);
    return true;
  }
  if ((op.method === 'PATCH' || op.method === 'PUT') && isNotFound(err)) {
    run.vanished.push(change.root);
    const what =
      change.address === change.root ? change.address : `${change.address} (of ${change.root})`;
    const vanishedError = new VanishedError(
      `${what} vanished; it will be recreated on the next run`,
      err,
    );
    fail(run, step, path, vanishedError, ms, 404);
    return false;
  }
  if (err instanceof FencedWriteError) {
    // Not sent: skipped, not failed.
    fenced(run, err);
    report(run, step, path, 'skipped', 0);
    return false;
  }
  fail(run, step, path, err, ms);
  return false;
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
