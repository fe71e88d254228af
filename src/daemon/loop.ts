/**
 * The reconcile loop's scheduling, free of I/O: single flight, one queued trigger, debounced file
 * changes, the periodic resync and exponential backoff. Time comes from injected `timers` and
 * `now`, so unit tests drive every sequence by hand.
 *
 * Policy (see ARCHITECTURE.md, "Daemon"):
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
  // The exponent is clamped so the arithmetic stays finite however long the outage lasts.
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(failures - 1, 40));
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
  /** Reports a file-system change; the cycle follows after the debounce. */
  notifyChange(reason: 'file' | 'link'): void;
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

export function createReconcileLoop(options: LoopOptions): ReconcileLoop {
  const { timers, now } = options;
  let started = false;
  let stopped = false;
  let failures = 0;
  let inFlight:
    | { reason: TriggerReason; done: Promise<void>; controller: AbortController }
    | undefined;
  let queued: TriggerReason | undefined;
  let next: { at: number; reason: 'resync' | 'retry'; handle: unknown } | undefined;
  /** When the periodic resync is due (kept across partial cycles; now() once one is preempted). */
  let resyncDueAt: number | undefined;
  let debounce: { firstAt: number; reason: 'file' | 'link'; handle: unknown } | undefined;
  /** When the last full cycle (any but a file event's, which may be incremental) began. */
  let lastFullStartAt: number | undefined;
  let deferred: { reason: TriggerReason; handle: unknown } | undefined;

  function clearNext(): void {
    if (next) timers.clearTimeout(next.handle);
    next = undefined;
  }

  function scheduleNext(delayMs: number, reason: 'resync' | 'retry'): void {
    clearNext();
    const handle = timers.setTimeout(() => {
      next = undefined;
      request(reason);
    }, delayMs);
    next = { at: now() + delayMs, reason, handle };
  }

  function jittered(ms: number): number {
    const spread = options.jitter ?? 0;
    if (spread <= 0) return ms;
    const u = (options.random ?? Math.random)();
    return Math.max(1, Math.round(ms * (1 + spread * (2 * u - 1))));
  }

  function resyncInterval(): number {
    return typeof options.intervalMs === 'function' ? options.intervalMs() : options.intervalMs;
  }

  /** True when a paced trigger came too early and was deferred. */
  function pace(reason: TriggerReason): boolean {
    if (!PACED.has(reason) || lastFullStartAt === undefined) return false;
    const wait = lastFullStartAt + (options.triggerGapMs?.() ?? 0) - now();
    if (wait <= 0) return false;
    // Later requests ride on this one: each cycle reads everything.
    deferred ??= {
      reason,
      handle: timers.setTimeout(() => {
        deferred = undefined;
        request(reason);
      }, wait),
    };
    return true;
  }

  function request(reason: TriggerReason): void {
    if (stopped || !started) return;
    if (pace(reason)) return;
    if (inFlight && inFlight.reason === 'resync' && URGENT.has(reason)) {
      // A change never waits behind a resync: the resync (its listing, or the writes it has not
      // started) is cut short as superseded, and the change's cycle reads everything anew.
      queued = reason;
      // The resync is only put off: it is due again as soon as the change's cycle ends.
      resyncDueAt = now();
      inFlight.controller.abort(new PreemptedError(reason));
      return;
    }
    if (inFlight) {
      // Coalesce: the first queued reason stands for all of them (each cycle reads everything).
      queued ??= reason;
      return;
    }
    run(reason);
  }

  function run(reason: TriggerReason): void {
    clearNext();
    if (reason !== 'file') lastFullStartAt = now();
    const entry = { reason, controller: new AbortController(), done: Promise.resolve() };
    // Registered before the cycle starts, so even a cycle that fails synchronously finds it.
    inFlight = entry;
    entry.done = (async () => {
      let outcome: CycleOutcome;
      try {
        outcome = await options.cycle(reason, entry.controller.signal);
      } catch (err) {
        options.onCycleError?.(err);
        outcome = 'failure';
      }
      inFlight = undefined;
      if (stopped) return;
      if (outcome === 'success' || outcome === 'partial') failures = 0;
      else if (outcome === 'failure') failures += 1;
      if (failures > 0) {
        scheduleNext(backoffDelay(failures, options.backoff), 'retry');
      } else if (outcome === 'success' || resyncDueAt === undefined) {
        resyncDueAt = now() + jittered(resyncInterval());
        scheduleNext(resyncDueAt - now(), 'resync');
      } else {
        scheduleNext(Math.max(0, resyncDueAt - now()), 'resync');
      }
      if (queued !== undefined) {
        const again = queued;
        queued = undefined;
        run(again);
      }
    })();
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      run('startup');
    },

    trigger(reason) {
      request(reason);
    },

    notifyChange(reason) {
      if (stopped || !started) return;
      const t = now();
      if (debounce) timers.clearTimeout(debounce.handle);
      const firstAt = debounce?.firstAt ?? t;
      // A link change says more than a file change: keep it as the reason for the merged burst.
      const merged = debounce?.reason === 'link' ? 'link' : reason;
      const delay = Math.max(0, Math.min(options.debounceMs, firstAt + options.debounceMaxMs - t));
      const handle = timers.setTimeout(() => {
        debounce = undefined;
        request(merged);
      }, delay);
      debounce = { firstAt, reason: merged, handle };
    },

    async stop(graceMs) {
      stopped = true;
      clearNext();
      if (debounce) timers.clearTimeout(debounce.handle);
      debounce = undefined;
      if (deferred) timers.clearTimeout(deferred.handle);
      deferred = undefined;
      queued = undefined;
      const current = inFlight;
      if (!current) return true;
      current.controller.abort(new AbortedError('daemon stopping'));
      let graceHandle: unknown;
      const graceOver = new Promise<boolean>((resolve) => {
        graceHandle = timers.setTimeout(() => resolve(false), graceMs);
      });
      const finished = await Promise.race([current.done.then(() => true), graceOver]);
      timers.clearTimeout(graceHandle);
      return finished;
    },

    snapshot() {
      return {
        inFlight: inFlight?.reason,
        queued,
        nextAt: next?.at,
        nextReason: next?.reason,
        failures,
        backoffMs: backoffDelay(failures, options.backoff),
        stopped,
      };
    },
  };
}
