/**
 * The client-side budget: at most `limit` requests in any rolling `windowMs`, the way the hosted
 * service counts (120 per rolling 60 s per account, shared by everything that uses the account).
 *
 * - **Rolling window, not a token bucket.** A bucket allows a burst of `limit` and then a steady
 *   rate; over a rolling window that is up to twice the limit in one window, and the service
 *   answers 429. The limiter remembers when its last sends went out and lets a request go only
 *   when fewer than the (current) limit went out in the last window, plus a small margin for the
 *   time a request takes to reach the service.
 * - **One per account and process.** `sharedRateLimiter(key)` returns the same limiter for every
 *   client of one account (base URL + API key) in the process: every worker and every listing
 *   draws from one budget, and one 429 pauses all of them once.
 * - **A first 429 teaches what others spent; the full rate resumes.** A process cannot see the
 *   requests other clients of the account sent; a 429 says the service's window is full, and
 *   its `Retry-After` when the oldest request of that window leaves it. The first 429 (or the
 *   first after a quiet window at the full pace) un-counts the refused request (the service did
 *   not count it), fills the window up to `limit` with the others' requests it now knows of,
 *   spread evenly from the oldest (leaving at `Retry-After`) to now, and pauses every request
 *   until `Retry-After`. From then on the window rule alone lets requests go as those slots
 *   free, at the full rate, so a process started on a budget another one just spent finishes
 *   when the window allows. The spread errs late (`Retry-After` is rounded up to whole
 *   seconds): the slots free no earlier than the service's when the others' requests spread
 *   over their window.
 * - **A second 429 soon after means the budget is being shared: the pace adapts.** Another
 *   client is still sending, and learning again at the full rate would meet it at the limit
 *   every window (measured: a tenth of all calls wasted by two processes sharing an account).
 *   So a 429 within a window of the end of the last pause pauses everyone and halves the limit
 *   (multiplicative decrease; never below 1). Every full window without a 429 gives some back
 *   (additive increase), so a budget shared with another client settles near its share. How
 *   much depends on where the pace stands against the pace it had at the last 429 (the
 *   ceiling): a tenth of the configured limit per window well below it, a fortieth within 15%
 *   of it (where the next 429 is likely: a shared budget wastes fewer calls), and past it a
 *   step that doubles each quiet window from a fortieth back to a tenth (the other client may
 *   have finished: the whole budget is regained in a few windows). Below the configured limit
 *   requests also go at an even pace (one per window / pace), not in a burst at the end of a
 *   pause, where every client of the account would meet the limit again. Back at the full
 *   pace, a quiet window makes the next 429 a lesson again.
 * - **Priority.** Waiting requests are served in order, those marked `high` first: a manifest
 *   change's few calls go ahead of a resync's listing instead of waiting behind it.
 * Time comes from the injected `now`/`sleep`: tests drive it without waiting.
 */
import { ConfigError } from '../errors.js';
import { abortableSleep, type Sleep, throwIfAborted } from './retry.js';

export interface RateLimitOptions {
  /** Requests allowed in any rolling window. */
  readonly limit: number;
  readonly windowMs: number;
}

export type Priority = 'high' | 'normal';

export interface RateLimiterSnapshot {
  readonly limit: number;
  /** The current (adapted) limit per window. */
  readonly currentLimit: number;
  readonly windowMs: number;
  /** Sends in the last window. */
  readonly inWindow: number;
  /** 429s seen. */
  readonly throttled: number;
  /** Requests waiting for a slot. */
  readonly waiting: number;
}

export interface RateLimiter {
  /**
   * Resolves when the caller may send one request (its send is then counted), with the time the
   * send was counted at: give it to `answered` when the answer arrives.
   */
  acquire(signal?: AbortSignal, priority?: Priority): Promise<number>;
  /**
   * The request counted at `sentAt` was answered (or failed) now: its slot is timed from now.
   * The service counted it somewhere between our send and our receipt, so a window timed from
   * the receipt can never be shorter than the service's, whatever the latency.
   */
  answered(sentAt: number): void;
  /**
   * The request counted at `sentAt` was answered 429 (instead of `answered`): pause every
   * request until the window frees; learn what others spent, or lower the pace (the header).
   */
  throttled(retryAfterMs: number | undefined, sentAt: number): void;
  /** When the next request could go, at the current pace (0: now). For ETAs. */
  estimateWaitMs(requests: number): number;
  snapshot(): RateLimiterSnapshot;
}

/**
 * Kept free at the end of each window: the service counts arrivals, the limiter counts sends,
 * and two requests' trips differ. 1% of the window (600 ms of the hosted 60 s), at least 50 ms
 * but at most 5% of it.
 */
function marginMs(windowMs: number): number {
  return Math.min(Math.max(windowMs * 0.01, 50), windowMs * 0.05);
}

interface Waiter {
  readonly priority: Priority;
  readonly resolve: (sentAt: number) => void;
  readonly reject: (err: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

export function createRateLimiter(
  options: RateLimitOptions,
  clock: { readonly now: () => number; readonly sleep: Sleep },
): RateLimiter {
  const { limit, windowMs } = options;
  if (!Number.isSafeInteger(limit) || limit <= 0 || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new ConfigError(
      `rate limit must be a positive whole number of requests per positive window (got ${limit}/${windowMs}ms)`,
    );
  }
  const span = windowMs + marginMs(windowMs);
  /** Counted times (ours, and the others' a 429 told of), oldest first; at most `limit`. */
  const sent: number[] = [];
  /** Whether 429s lower the pace (the budget is being shared) rather than teach. */
  let sharing = false;
  /** When the pause of the last 429 that taught ended. */
  let taughtUntil = Number.NEGATIVE_INFINITY;
  let current = limit;
  /** The pace when the last 429 came (the configured limit before any). */
  let ceiling = limit;
  /** Quiet windows spent at or past the ceiling since the last 429. */
  let probing = 0;
  let pausedUntil = 0;
  /** When the last request was let go. */
  let lastGrant = Number.NEGATIVE_INFINITY;
  let lastThrottle = Number.NEGATIVE_INFINITY;
  let recoveredAt = clock.now();
  let throttledCount = 0;
  const queue: Waiter[] = [];
  let pumping = false;

  const prune = (t: number) => {
    while (sent.length > 0 && (sent[0] as number) <= t - span) sent.shift();
  };

  const tenth = Math.max(1, Math.ceil(limit / 10));
  const fortieth = Math.max(1, Math.ceil(limit / 40));
  /** Additive increase per quiet window after the last 429 (see the header). */
  const recover = (t: number) => {
    if (current >= limit) {
      // A quiet window at the full pace: whoever shared the budget is gone or settled.
      if (sharing && t - Math.max(lastThrottle, pausedUntil) >= span) sharing = false;
      return;
    }
    // Quiet windows count from the end of the last pause (or the last step up).
    const since = t - Math.max(lastThrottle, pausedUntil, recoveredAt);
    const steps = Math.floor(since / windowMs);
    if (steps <= 0) return;
    for (let i = 0; i < steps && current < limit; i++) {
      let step = tenth;
      if (current >= ceiling) {
        probing += 1;
        step = Math.min(tenth, fortieth * 2 ** (probing - 1));
      } else if (current >= ceiling * 0.85) {
        step = fortieth;
      }
      current = Math.min(limit, current + step);
    }
    recoveredAt = t - (since % windowMs);
  };

  /** Milliseconds until one more request may go at time t (0: now). */
  const waitAt = (t: number): number => {
    prune(t);
    recover(t);
    // Once throttled, at an even pace: after a pause, every client of the account would
    // otherwise send its whole window at the same moment and meet the limit together.
    const paced = current < limit ? Math.max(0, Math.ceil(lastGrant + windowMs / current - t)) : 0;
    const pause = Math.max(0, pausedUntil - t, paced);
    if (sent.length < current) return pause;
    const oldestThatMustLeave = sent[sent.length - current] as number;
    return Math.max(pause, Math.ceil(oldestThatMustLeave + span - t));
  };

  /** Inserts a counted time, keeping `sent` sorted. */
  const insert = (at: number) => {
    let i = sent.length;
    while (i > 0 && (sent[i - 1] as number) > at) i--;
    sent.splice(i, 0, at);
  };

  /** The request counted at `from` is now counted at `to` (the answer's time). */
  const retime = (from: number, to: number) => {
    const i = sent.lastIndexOf(from);
    if (i < 0 || to <= from) return;
    sent.splice(i, 1);
    insert(to);
  };

  /**
   * The window is full at the service: the slots we do not account for are the others'. They
   * are spread evenly from the oldest, which leaves the service's window at `leavesAt`, to now.
   */
  const learnOthers = (t: number, leavesAt: number) => {
    const missing = limit - sent.length;
    const first = Math.min(t, leavesAt - span);
    const step = missing > 1 ? (t - first) / (missing - 1) : 0;
    for (let i = 0; i < missing; i++) insert(first + step * i);
  };

  const next = (): Waiter | undefined => {
    const i = queue.findIndex((w) => w.priority === 'high');
    return queue.splice(i >= 0 ? i : 0, 1)[0];
  };

  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length > 0) {
        const wait = waitAt(clock.now());
        if (wait > 0) {
          await clock.sleep(wait);
          continue;
        }
        const waiter = next();
        if (waiter === undefined) break;
        if (waiter.signal?.aborted) {
          waiter.reject(waiter.signal.reason);
          continue;
        }
        const at = clock.now();
        lastGrant = at;
        sent.push(at);
        if (sent.length > limit) sent.shift();
        waiter.resolve(at);
      }
    } finally {
      pumping = false;
    }
  }

  return {
    async acquire(signal, priority = 'normal') {
      throwIfAborted(signal);
      return await new Promise<number>((resolve, reject) => {
        const onAbort = () => {
          const i = queue.indexOf(waiter);
          if (i >= 0) {
            queue.splice(i, 1);
            reject(signal?.reason);
          }
        };
        // The listener goes when the slot is granted: a cycle's signal sees thousands of
        // requests, and must not keep a listener (and its waiter) for each.
        const waiter: Waiter = {
          priority,
          resolve: (sentAt) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(sentAt);
          },
          reject,
          signal,
        };
        queue.push(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
        void pump();
      }).catch(async (err: unknown) => {
        // Normalise an abort to the client's AbortedError.
        if (signal?.aborted) await abortableSleep(clock.sleep, 0, signal);
        throw err;
      });
    },
    answered(sentAt) {
      retime(sentAt, clock.now());
    },
    throttled(retryAfterMs, sentAt) {
      const t = clock.now();
      throttledCount += 1;
      prune(t);
      const estimate = sent.length > 0 ? (sent[0] as number) + span - t : windowMs / 10;
      const until = t + Math.max(0, retryAfterMs ?? estimate);
      if (t < pausedUntil) {
        // The same burst (requests in flight answer 429 together): one pause, one lesson.
        retime(sentAt, t);
        if (retryAfterMs !== undefined) pausedUntil = Math.max(pausedUntil, until);
      } else if (!sharing && t - taughtUntil >= windowMs) {
        // A lesson: the refused request was not counted, the rest of the window is the others'.
        const i = sent.lastIndexOf(sentAt);
        if (i >= 0) sent.splice(i, 1);
        learnOthers(t, until);
        pausedUntil = until;
        taughtUntil = until;
      } else {
        retime(sentAt, t);
        sharing = true;
        ceiling = current;
        probing = 0;
        current = Math.max(1, Math.floor(current / 2));
        pausedUntil = until;
      }
      lastThrottle = t;
    },
    estimateWaitMs(requests) {
      const t = clock.now();
      const first = waitAt(t);
      if (requests <= 1) return first;
      const windows = Math.ceil(Math.max(0, requests - (current - sent.length)) / current);
      return Math.max(first, windows * span);
    },
    snapshot() {
      const t = clock.now();
      prune(t);
      return {
        limit,
        currentLimit: current,
        windowMs,
        inWindow: sent.length,
        throttled: throttledCount,
        waiting: queue.length,
      };
    },
  };
}

const shared = new Map<string, RateLimiter>();

/**
 * The limiter of one account in this process (`key`: base URL and a digest of the API key),
 * created on first use. Every client of that account shares it.
 */
export function sharedRateLimiter(
  key: string,
  options: RateLimitOptions,
  clock: { readonly now: () => number; readonly sleep: Sleep },
): RateLimiter {
  const id = `${key}|${options.limit}/${options.windowMs}`;
  let limiter = shared.get(id);
  if (limiter === undefined) {
    limiter = createRateLimiter(options, clock);
    shared.set(id, limiter);
  }
  return limiter;
}
