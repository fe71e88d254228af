/**
 * The client-side budget: at most `limit` requests in any rolling `windowMs`, the way the hosted
 * service counts (120 per rolling 60 s per account, shared by everything that uses the account).
 *
 * - **Rolling window, not a token bucket.** A bucket allows a burst of `limit` and then a steady
 *   rate; over a rolling window that is up to twice the limit in one window, and the service
 *   answers 429. The limiter remembers when its last sends went out and lets a request go only
 *   when fewer than `limit` went out in the last window, plus a small margin for the time a
 *   request takes to reach the service.
 * - **One per account and process.** `sharedRateLimiter(key)` returns the same limiter for every
 *   client of one account (base URL + API key) in the process: every worker and every listing
 *   draws from one budget, and one 429 pauses all of them once.
 * - **A 429 teaches what others spent, then the full rate resumes.** A process cannot see the
 *   requests other clients of the account sent; a 429 says the service's window is full, and
 *   its `Retry-After` when the oldest request of that window leaves it. `throttled` un-counts
 *   the refused request (the service did not count it), fills the window up to `limit` with the
 *   others' requests it now knows of, spread evenly from the oldest (leaving at `Retry-After`)
 *   to now (the latest they can be), and pauses every request until `Retry-After`. From then on
 *   the window rule alone lets requests go as those slots free, at the full rate: no pace is
 *   halved, so a process started on a spent budget finishes when the window allows. The spread
 *   errs late (the service's `Retry-After` is rounded up to whole seconds), so the slots free no
 *   earlier than the service's do in the usual case: others' requests spread over their window.
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
  readonly windowMs: number;
  /** Requests counted in the last window: ours, and the others' a 429 told of. */
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
   * The request counted at `sentAt` was answered 429: the service's window is full. Learn what
   * the account's other clients spent from it and pause every request until `retryAfterMs`.
   */
  throttled(retryAfterMs: number | undefined, sentAt?: number): void;
  /** When the next request could go (0: now). For ETAs. */
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
  let pausedUntil = 0;
  let throttledCount = 0;
  const queue: Waiter[] = [];
  let pumping = false;

  const prune = (t: number) => {
    while (sent.length > 0 && (sent[0] as number) <= t - span) sent.shift();
  };

  /** Milliseconds until one more request may go at time t (0: now). */
  const waitAt = (t: number): number => {
    prune(t);
    const pause = Math.max(0, pausedUntil - t);
    if (sent.length < limit) return pause;
    const oldestThatMustLeave = sent[sent.length - limit] as number;
    return Math.max(pause, Math.ceil(oldestThatMustLeave + span - t));
  };

  /** Inserts a counted time, keeping `sent` sorted. */
  const insert = (at: number) => {
    let i = sent.length;
    while (i > 0 && (sent[i - 1] as number) > at) i--;
    sent.splice(i, 0, at);
  };

  /**
   * The window is full at the service: the slots we do not account for are the others'. They
   * are spread evenly from the oldest, which leaves the service's window at `leavesAt`, to now.
   */
  const learnOthers = (t: number, leavesAt: number) => {
    const missing = limit - sent.length;
    const first = Math.min(t, leavesAt - span);
    for (let i = 1; i <= missing; i++) insert(first + ((t - first) * i) / missing);
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
      const i = sent.lastIndexOf(sentAt);
      if (i < 0) return;
      sent.splice(i, 1);
      insert(t);
    },
    throttled(retryAfterMs, sentAt) {
      const t = clock.now();
      throttledCount += 1;
      prune(t);
      // The refused request was not counted by the service: its slot is someone else's.
      const i = sentAt === undefined ? -1 : sent.lastIndexOf(sentAt);
      if (i >= 0) sent.splice(i, 1);
      // Without Retry-After: until our oldest send leaves the window (a tenth of it if none).
      const waitMs =
        retryAfterMs ?? (sent.length > 0 ? (sent[0] as number) + span - t : windowMs / 10);
      const leavesAt = t + Math.max(0, waitMs);
      learnOthers(t, leavesAt);
      // One pause for a burst of 429s (requests already in flight answer 429 together).
      pausedUntil = Math.max(pausedUntil, leavesAt);
    },
    estimateWaitMs(requests) {
      const t = clock.now();
      const first = waitAt(t);
      if (requests <= 1) return first;
      const windows = Math.ceil(Math.max(0, requests - (limit - sent.length)) / limit);
      return Math.max(first, windows * span);
    },
    snapshot() {
      prune(clock.now());
      return {
        limit,
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
