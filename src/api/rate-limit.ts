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
 * - **A 429 pauses everyone, then the pace adapts.** `throttled(retryAfterMs)` stops every
 *   request until `Retry-After` (or, without one, until the oldest send of the window leaves it),
 *   and halves the limit (multiplicative decrease; never below 1). Every full window without a
 *   429 gives some back (additive increase), so a budget shared with another client settles
 *   near its share. How much depends on where the pace stands against the pace it had at the
 *   last 429 (the ceiling): a tenth of the configured limit per window well below it, a
 *   fortieth within 15% of it (where the next 429 is likely: a shared budget wastes fewer
 *   calls), and past it a step that doubles each quiet window from a fortieth back to a tenth
 *   (the other client may have finished: the whole budget is regained in a few windows). Below
 *   the configured limit requests also go at an even pace (one per window / pace), not in a
 *   burst at the end of a pause, where every client of the account would meet the limit again.
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
  /** A 429 was answered: pause every request, then send at a lower pace. */
  throttled(retryAfterMs?: number): void;
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
  /** Send times, oldest first (at most `limit` kept). */
  const sent: number[] = [];
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
    if (current >= limit) return;
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
      const t = clock.now();
      if (t <= sentAt) return;
      // The latest entry with that time (an older one may already have been answered).
      let i = sent.lastIndexOf(sentAt);
      if (i < 0) return;
      sent[i] = t;
      // Keep the times sorted: move the entry right past earlier ones.
      while (i + 1 < sent.length && (sent[i + 1] as number) < t) {
        sent[i] = sent[i + 1] as number;
        sent[i + 1] = t;
        i++;
      }
    },
    throttled(retryAfterMs) {
      const t = clock.now();
      throttledCount += 1;
      // One pause for a burst of 429s: requests already in flight answer 429 together.
      if (t >= pausedUntil) {
        ceiling = current;
        probing = 0;
        current = Math.max(1, Math.floor(current / 2));
        const estimate = sent.length > 0 ? (sent[0] as number) + span - t : windowMs / 10;
        pausedUntil = t + Math.max(0, retryAfterMs ?? estimate);
      } else if (retryAfterMs !== undefined) {
        pausedUntil = Math.max(pausedUntil, t + retryAfterMs);
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
