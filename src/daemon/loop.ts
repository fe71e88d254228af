/**
 * The reconcile loop's scheduling, free of I/O: single flight, one queued trigger, debounced file
 * changes, the periodic resync and exponential backoff. Time comes from injected `timers` and
 * `now`, so unit tests drive every sequence by hand.
 *
 * Policy (see docs/internals/daemon.md):
 * - One cycle in flight; triggers arriving meanwhile collapse into at most one queued cycle,
 *   which starts as soon as the running one ends.
 * - After a success the next cycle is the resync, `intervalMs` later. After a failure it is a
 *   retry, `backoffDelay(failures)` later (growing to `maxMs`, possibly past the interval): the
 *   periodic path respects the backoff.
 * - Change triggers (file, link, webhook, manual) start a cycle at once even while backing off:
 *   a new desired state or an operator's request is the usual remedy for a failure. They do not
 *   reset the failure count; only a success does.
 * - Triggered full cycles (webhook, manual) share the resync budget: one starts at most once per
 *   `triggerGapMs` after the last full cycle began; an earlier one is deferred to that moment
 *   (one deferral for all of them), so a flood of requests costs what one cycle per gap costs.
 * - File-system changes are debounced (trailing, `debounceMs` after the last event, but never
 *   later than `debounceMaxMs` after the first, so a constant stream cannot starve the loop).
 */
import { AbortedError } from '../errors.js';
import { backoffDelay as sharedBackoffDelay } from '../retry.js';
import type { BackoffOptions, Timers, TriggerReason } from './types.js';

/**
 * How a cycle ended, for scheduling. `superseded`: the directory changed under the cycle (a
 * git-sync swap); it is neither a success nor a failure, and the queued cycle reads the new one.
 * `partial`: a success that read only part of the account (an incremental cycle for a file
 * event): it resets the failures but is no resync, so the resync stays due when it was (a
 * stream of edits never postpones the full observation), and a resync it preempted runs next.
 */
export type CycleOutcome = 'success' | 'partial' | 'failure' | 'superseded';

/** The delay after `failures` consecutive failures: base, 2·base, 4·base, ... capped at max. */
export function backoffDelay(failures: number, backoff: BackoffOptions): number {
  if (failures <= 0) return 0;
  // No jitter: one daemon, one timer; the resync interval has its own (`jittered`).
  return sharedBackoffDelay(failures - 1, { ...backoff, jitter: 'none' }, Math.random);
}

export interface LoopOptions {
  /** Runs one cycle. Must not throw (a throw counts as a failure). */
  readonly cycle: (reason: TriggerReason, signal: AbortSignal) => Promise<CycleOutcome>;
  /** The periodic resync, read each time one is scheduled (it may stretch with the budget). */
  readonly intervalMs: number | (() => number);
  /**
   * Each resync interval is spread by up to this share either way (0.1: ±10%), so replicas and
   * restarts do not march in step. Default 0.
   */
  readonly jitter?: number;
  /** In [0, 1): the jitter's draw. Default Math.random. */
  readonly random?: () => number;
  readonly debounceMs: number;
  readonly debounceMaxMs: number;
  readonly backoff: BackoffOptions;
  readonly timers: Timers;
  readonly now: () => number;
  /**
   * The least time between the start of a full cycle and a triggered (webhook, manual) one, read
   * at each trigger. Default 0: triggers only coalesce.
   */
  readonly triggerGapMs?: () => number;
  /** Called when `cycle` throws despite its contract. */
  readonly onCycleError?: (err: unknown) => void;
}

export interface LoopSnapshot {
  readonly inFlight: TriggerReason | undefined;
  readonly queued: TriggerReason | undefined;
  /** When the next timed cycle (resync or retry) starts, epoch ms. */
  readonly nextAt: number | undefined;
  readonly nextReason: 'resync' | 'retry' | undefined;
  readonly failures: number;
  readonly backoffMs: number;
  readonly stopped: boolean;
}

export interface ReconcileLoop {
  /** Runs the first cycle (`startup`) and arms the timers. */
  start(): void;
  /** Requests a cycle now (or as soon as the one in flight ends). */
  trigger(reason: TriggerReason): void;
  /**
   * Reports a file-system change; the cycle follows after the debounce. `changedAt`, when the
   * watcher knows it (a change found on a second look at the file), is when the change was
   * made: the quiet period counts from it, never ending before a later change's.
   */
  notifyChange(reason: 'file' | 'link', changedAt?: number): void;
  /**
   * Stops every trigger and timer, aborts the cycle in flight and waits for it up to `graceMs`.
   * Resolves true when it ended in time (or none was running), false when the grace ran out.
   */
  stop(graceMs: number): Promise<boolean>;
  snapshot(): LoopSnapshot;
}

/** Triggers that carry a change someone made: they preempt a periodic resync in flight. */
const URGENT: ReadonlySet<TriggerReason> = new Set(['file', 'link', 'webhook', 'leader']);

/** Triggers anyone may send (the HTTP endpoint, `resume`): paced by `triggerGapMs`. */
const PACED: ReadonlySet<TriggerReason> = new Set(['webhook', 'manual']);

/** The abort reason of a resync cut short by a change (the cycle ends `superseded`). */
export class PreemptedError extends AbortedError {
  readonly by: TriggerReason;
  constructor(by: TriggerReason) {
    super(`resync preempted by a ${by} trigger`);
    this.by = by;
  }
}

/** The loop's state, shared by the steps below (one loop, one state). */
interface LoopState {
  readonly options: LoopOptions;
  started: boolean;
  stopped: boolean;
  failures: number;
  inFlight: { reason: TriggerReason; done: Promise<void>; controller: AbortController } | undefined;
  queued: TriggerReason | undefined;
  next: { at: number; reason: 'resync' | 'retry'; handle: unknown } | undefined;
  /** When the periodic resync is due (kept across partial cycles; now() once one is preempted). */
  resyncDueAt: number | undefined;
  debounce:
    | { firstAt: number; dueAt: number; reason: 'file' | 'link'; handle: unknown }
    | undefined;
  /** When the last full cycle (any but a file event's, which may be incremental) began. */
  lastFullStartAt: number | undefined;
  deferred: { reason: TriggerReason; handle: unknown } | undefined;
}

export function createReconcileLoop(options: LoopOptions): ReconcileLoop {
  const s: LoopState = {
    options,
    started: false,
    stopped: false,
    failures: 0,
    inFlight: undefined,
    queued: undefined,
    next: undefined,
    resyncDueAt: undefined,
    debounce: undefined,
    lastFullStartAt: undefined,
    deferred: undefined,
  };
  return {
    start() {
      if (s.started || s.stopped) return;
      s.started = true;
      run(s, 'startup');
    },
    trigger: (reason) => request(s, reason),
    notifyChange: (reason, changedAt) => notifyChange(s, reason, changedAt),
    stop: (graceMs) => stopLoop(s, graceMs),
    snapshot: () => ({
      inFlight: s.inFlight?.reason,
      queued: s.queued,
      nextAt: s.next?.at,
      nextReason: s.next?.reason,
      failures: s.failures,
      backoffMs: backoffDelay(s.failures, options.backoff),
      stopped: s.stopped,
    }),
  };
}

function clearNext(s: LoopState): void {
  if (s.next) s.options.timers.clearTimeout(s.next.handle);
  s.next = undefined;
}

function scheduleNext(s: LoopState, delayMs: number, reason: 'resync' | 'retry'): void {
  clearNext(s);
  const handle = s.options.timers.setTimeout(() => {
    s.next = undefined;
    request(s, reason);
  }, delayMs);
  s.next = { at: s.options.now() + delayMs, reason, handle };
}

function jittered(options: LoopOptions, ms: number): number {
  const spread = options.jitter ?? 0;
  if (spread <= 0) return ms;
  const u = (options.random ?? Math.random)();
  return Math.max(1, Math.round(ms * (1 + spread * (2 * u - 1))));
}

function resyncInterval(options: LoopOptions): number {
  return typeof options.intervalMs === 'function' ? options.intervalMs() : options.intervalMs;
}

/** True when a paced trigger came too early and was deferred. */
function pace(s: LoopState, reason: TriggerReason): boolean {
  const { options } = s;
  if (!PACED.has(reason) || s.lastFullStartAt === undefined) return false;
  const wait = s.lastFullStartAt + (options.triggerGapMs?.() ?? 0) - options.now();
  if (wait <= 0) return false;
  // Later requests ride on this one: each cycle reads everything.
  s.deferred ??= {
    reason,
    handle: options.timers.setTimeout(() => {
      s.deferred = undefined;
      request(s, reason);
    }, wait),
  };
  return true;
}

function request(s: LoopState, reason: TriggerReason): void {
  if (s.stopped || !s.started) return;
  if (pace(s, reason)) return;
  if (s.inFlight && s.inFlight.reason === 'resync' && URGENT.has(reason)) {
    // A change never waits behind a resync: the resync (its listing, or the writes it has not
    // started) is cut short as superseded, and the change's cycle reads everything anew.
    s.queued = reason;
    // The resync is only put off: it is due again as soon as the change's cycle ends.
    s.resyncDueAt = s.options.now();
    s.inFlight.controller.abort(new PreemptedError(reason));
    return;
  }
  if (s.inFlight) {
    // Coalesce: the first queued reason stands for all of them (each cycle reads everything).
    s.queued ??= reason;
    return;
  }
  run(s, reason);
}

function run(s: LoopState, reason: TriggerReason): void {
  const { options } = s;
  clearNext(s);
  if (reason !== 'file') s.lastFullStartAt = options.now();
  const entry = { reason, controller: new AbortController(), done: Promise.resolve() };
  // Registered before the cycle starts, so even a cycle that fails synchronously finds it.
  s.inFlight = entry;
  entry.done = (async () => {
    let outcome: CycleOutcome;
    try {
      outcome = await options.cycle(reason, entry.controller.signal);
    } catch (err) {
      options.onCycleError?.(err);
      outcome = 'failure';
    }
    s.inFlight = undefined;
    if (s.stopped) return;
    afterCycle(s, outcome);
  })();
}

/** Counts the outcome, arms the retry or the resync, and runs what queued meanwhile. */
function afterCycle(s: LoopState, outcome: CycleOutcome): void {
  const { options } = s;
  if (outcome === 'success' || outcome === 'partial') s.failures = 0;
  else if (outcome === 'failure') s.failures += 1;
  if (s.failures > 0) {
    scheduleNext(s, backoffDelay(s.failures, options.backoff), 'retry');
  } else if (outcome === 'success' || s.resyncDueAt === undefined) {
    s.resyncDueAt = options.now() + jittered(options, resyncInterval(options));
    scheduleNext(s, s.resyncDueAt - options.now(), 'resync');
  } else {
    scheduleNext(s, Math.max(0, s.resyncDueAt - options.now()), 'resync');
  }
  if (s.queued !== undefined) {
    const again = s.queued;
    s.queued = undefined;
    run(s, again);
  }
}

function notifyChange(s: LoopState, reason: 'file' | 'link', changedAt?: number): void {
  const { options } = s;
  if (s.stopped || !s.started) return;
  const t = options.now();
  const { debounce } = s;
  if (debounce) options.timers.clearTimeout(debounce.handle);
  const firstAt = debounce?.firstAt ?? t;
  // A link change says more than a file change: keep it as the reason for the merged burst.
  const merged = debounce?.reason === 'link' ? 'link' : reason;
  // A change seen late (the watcher's second look, 100 ms on) was quiet since it was made, not
  // since it was seen. Kept within the debounce before now: a file system whose clock disagrees
  // with ours moves the cycle by no more than that.
  const at = changedAt === undefined ? t : Math.min(t, Math.max(changedAt, t - options.debounceMs));
  const dueAt = Math.max(debounce?.dueAt ?? 0, at + options.debounceMs);
  const delay = Math.max(0, Math.min(dueAt - t, firstAt + options.debounceMaxMs - t));
  const handle = options.timers.setTimeout(() => {
    s.debounce = undefined;
    request(s, merged);
  }, delay);
  s.debounce = { firstAt, dueAt, reason: merged, handle };
}

async function stopLoop(s: LoopState, graceMs: number): Promise<boolean> {
  const { timers } = s.options;
  s.stopped = true;
  clearNext(s);
  if (s.debounce) timers.clearTimeout(s.debounce.handle);
  s.debounce = undefined;
  if (s.deferred) timers.clearTimeout(s.deferred.handle);
  s.deferred = undefined;
  s.queued = undefined;
  const current = s.inFlight;
  if (!current) return true;
  current.controller.abort(new AbortedError('daemon stopping'));
  let graceHandle: unknown;
  const graceOver = new Promise<boolean>((resolve) => {
    graceHandle = timers.setTimeout(() => resolve(false), graceMs);
  });
  const finished = await Promise.race([current.done.then(() => true), graceOver]);
  timers.clearTimeout(graceHandle);
  return finished;
}
