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
 *   not count it), fills the window up to `limit` with the others' requests it now knows of
 *   (the oldest leaving at `Retry-After`, the rest no later than this process's first request
 *   of the window: a budget spent before it began), and pauses every request until
 *   `Retry-After`. From then on the window rule alone lets requests go as those slots free, at
 *   the full rate, so a process started on a budget another one just spent finishes when the
 *   window allows, with that one 429. Spreading the others evenly instead freed slots the
 *   service still counted whenever their requests were uneven (a plan's listings wait on its
 *   manifest parsing): a second 429 a window later, and a halved pace.
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
 * - **While the budget is unknown, one request at a time.** A process has no way to see what
 *   the account has left until a 429 tells it, and every request in flight when the window fills
 *   is refused together: a burst of 429s for one lesson. So until a 429 has taught the window
 *   (and again a window after that lesson, when what it taught is stale), a request goes only
 *   when the one before it has been answered: a process started on a spent budget meets one 429,
 *   never one per request in flight. Once taught, the window rule alone paces requests and they
 *   overlap again. The cost is overlap in a process that never meets the limit: its concurrent
 *   requests (a plan's four listings, an apply's workers) go one after another, which the
 *   account's budget, not the round trip, bounds in any run of more than a window's requests.
 * - **Priority.** Waiting requests are served in order, those marked `high` first: a manifest
 *   change's few calls go ahead of a resync's listing instead of waiting behind it.
 * Time comes from the injected `now`/`sleep`: tests drive it without waiting.
 */
import { ConfigError } from '../errors.js';
import { abortableSleep, type Sleep, throwIfAborted } from '../retry.js';

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
  /**
   * The request granted at `sentAt` did not go out (its fence refused it at the last moment):
   * its slot is given back, as if it had never been granted.
   */
  unused(sentAt: number): void;
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

type Clock = { readonly now: () => number; readonly sleep: Sleep };

export function createRateLimiter(options: RateLimitOptions, clock: Clock): RateLimiter {
  const { limit, windowMs } = options;
  if (!Number.isSafeInteger(limit) || limit <= 0 || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new ConfigError(
      `rate limit must be a positive whole number of requests per positive window (got ${limit}/${windowMs}ms)`,
    );
  }
  return new WindowLimiter(limit, windowMs, clock);
}

/** The limiter's state and its steps (see the header for what each rule is for). */
class WindowLimiter implements RateLimiter {
  private readonly span: number;
  /** Counted times (ours, and the others' a 429 told of), oldest first; at most `limit`. */
  private readonly sent: number[] = [];
  /** Whether 429s lower the pace (the budget is being shared) rather than teach. */
  private sharing = false;
  /** When the pause of the last 429 that taught ended. */
  private taughtUntil = Number.NEGATIVE_INFINITY;
  private current: number;
  /** The pace when the last 429 came (the configured limit before any). */
  private ceiling: number;
  /** Quiet windows spent at or past the ceiling since the last 429. */
  private probing = 0;
  private pausedUntil = 0;
  /** When the last request was let go. */
  private lastGrant = Number.NEGATIVE_INFINITY;
  private lastThrottle = Number.NEGATIVE_INFINITY;
  private recoveredAt: number;
  private throttledCount = 0;
  /** Requests let go and not yet answered. */
  private inFlight = 0;
  private readonly queue: Waiter[] = [];
  private pumping = false;
  private readonly tenth: number;
  private readonly fortieth: number;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {
    this.span = windowMs + marginMs(windowMs);
    this.current = limit;
    this.ceiling = limit;
    this.recoveredAt = clock.now();
    this.tenth = Math.max(1, Math.ceil(limit / 10));
    this.fortieth = Math.max(1, Math.ceil(limit / 40));
  }

  async acquire(signal?: AbortSignal, priority: Priority = 'normal'): Promise<number> {
    throwIfAborted(signal);
    return await new Promise<number>((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) {
          this.queue.splice(i, 1);
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
      this.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.pump();
    }).catch(async (err: unknown) => {
      // Normalise an abort to the client's AbortedError.
      if (signal?.aborted) await abortableSleep(this.clock.sleep, 0, signal);
      throw err;
    });
  }

  answered(sentAt: number): void {
    this.retime(sentAt, this.clock.now());
    this.settle();
  }

  unused(sentAt: number): void {
    const i = this.sent.lastIndexOf(sentAt);
    if (i >= 0) this.sent.splice(i, 1);
    this.settle();
  }

  throttled(retryAfterMs: number | undefined, sentAt: number): void {
    const t = this.clock.now();
    this.throttledCount += 1;
    this.prune(t);
    const estimate =
      this.sent.length > 0 ? (this.sent[0] as number) + this.span - t : this.windowMs / 10;
    const until = t + Math.max(0, retryAfterMs ?? estimate);
    if (t < this.pausedUntil) {
      // The same burst (requests in flight answer 429 together): one pause, one lesson.
      this.retime(sentAt, t);
      if (retryAfterMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, until);
    } else if (!this.sharing && t - this.taughtUntil >= this.windowMs) {
      this.learn(t, until, sentAt);
    } else {
      this.halve(t, until, sentAt);
    }
    this.lastThrottle = t;
    this.settle();
  }

  estimateWaitMs(requests: number): number {
    const t = this.clock.now();
    const first = this.waitAt(t);
    if (requests <= 1) return first;
    const free = this.current - this.sent.length;
    const windows = Math.ceil(Math.max(0, requests - free) / this.current);
    return Math.max(first, windows * this.span);
  }

  snapshot(): RateLimiterSnapshot {
    this.prune(this.clock.now());
    return {
      limit: this.limit,
      currentLimit: this.current,
      windowMs: this.windowMs,
      inWindow: this.sent.length,
      throttled: this.throttledCount,
      waiting: this.queue.length,
    };
  }

  /** A lesson: the refused request was not counted, the rest of the window is the others'. */
  private learn(t: number, until: number, sentAt: number): void {
    const i = this.sent.lastIndexOf(sentAt);
    if (i >= 0) this.sent.splice(i, 1);
    this.learnOthers(t, until);
    this.pausedUntil = until;
    this.taughtUntil = until;
  }

  /** The budget is shared: pause, and halve the pace (multiplicative decrease). */
  private halve(t: number, until: number, sentAt: number): void {
    this.retime(sentAt, t);
    this.sharing = true;
    this.ceiling = this.current;
    this.probing = 0;
    this.current = Math.max(1, Math.floor(this.current / 2));
    this.pausedUntil = until;
  }

  /**
   * The window is full at the service: the slots we do not account for are the others'. The
   * oldest leaves the service's window at `leavesAt` (`Retry-After`); nothing says when the rest
   * do, and a guess that frees them too early costs a second 429. So they are taken to be as
   * late as a budget spent before this process's requests of the window can be: at our first
   * request still in the window (or now). Were the others still sending, the next 429 comes
   * within a window of this lesson, which is what a shared budget looks like, and the pace
   * adapts (`halve`).
   */
  private learnOthers(t: number, leavesAt: number): void {
    const missing = this.limit - this.sent.length;
    if (missing <= 0) return;
    const oldest = Math.min(t, leavesAt - this.span);
    const ourFirst = this.sent.length > 0 ? (this.sent[0] as number) : t;
    const rest = Math.min(t, Math.max(oldest, ourFirst));
    this.insert(oldest);
    for (let i = 1; i < missing; i++) this.insert(rest);
  }

  /** A request let go was answered: the next may go if it waited for this one. */
  private settle(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.queue.length > 0) void this.pump();
  }

  private prune(t: number): void {
    while (this.sent.length > 0 && (this.sent[0] as number) <= t - this.span) this.sent.shift();
  }

  /** Additive increase per quiet window after the last 429 (see the header). */
  private recover(t: number): void {
    if (this.current >= this.limit) {
      // A quiet window at the full pace: whoever shared the budget is gone or settled.
      const quiet = t - Math.max(this.lastThrottle, this.pausedUntil) >= this.span;
      if (this.sharing && quiet) this.sharing = false;
      return;
    }
    // Quiet windows count from the end of the last pause (or the last step up).
    const since = t - Math.max(this.lastThrottle, this.pausedUntil, this.recoveredAt);
    const steps = Math.floor(since / this.windowMs);
    if (steps <= 0) return;
    for (let i = 0; i < steps && this.current < this.limit; i++) {
      this.current = Math.min(this.limit, this.current + this.step());
    }
    this.recoveredAt = t - (since % this.windowMs);
  }

  /** One quiet window's increase, by where the pace stands against the last 429's. */
  private step(): number {
    if (this.current >= this.ceiling) {
      this.probing += 1;
      return Math.min(this.tenth, this.fortieth * 2 ** (this.probing - 1));
    }
    return this.current >= this.ceiling * 0.85 ? this.fortieth : this.tenth;
  }

  /** Milliseconds until one more request may go at time t (0: now). */
  private waitAt(t: number): number {
    this.prune(t);
    this.recover(t);
    // Once throttled, at an even pace: after a pause, every client of the account would
    // otherwise send its whole window at the same moment and meet the limit together.
    const paced =
      this.current < this.limit
        ? Math.max(0, Math.ceil(this.lastGrant + this.windowMs / this.current - t))
        : 0;
    const pause = Math.max(0, this.pausedUntil - t, paced);
    if (this.sent.length < this.current) return pause;
    const oldestThatMustLeave = this.sent[this.sent.length - this.current] as number;
    return Math.max(pause, Math.ceil(oldestThatMustLeave + this.span - t));
  }

  /** Whether a request must wait for the one in flight: the budget is not known (see the header). */
  private oneAtATime(t: number): boolean {
    return this.inFlight > 0 && t >= this.taughtUntil + this.span;
  }

  /** Inserts a counted time, keeping `sent` sorted. */
  private insert(at: number): void {
    let i = this.sent.length;
    while (i > 0 && (this.sent[i - 1] as number) > at) i--;
    this.sent.splice(i, 0, at);
  }

  /** The request counted at `from` is now counted at `to` (the answer's time). */
  private retime(from: number, to: number): void {
    const i = this.sent.lastIndexOf(from);
    if (i < 0 || to <= from) return;
    this.sent.splice(i, 1);
    this.insert(to);
  }

  private next(): Waiter | undefined {
    const i = this.queue.findIndex((w) => w.priority === 'high');
    return this.queue.splice(i >= 0 ? i : 0, 1)[0];
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const wait = this.waitAt(this.clock.now());
        if (wait > 0) {
          await this.clock.sleep(wait);
          continue;
        }
        // Woken again by the answer (`settle`): no time is known to wait for.
        if (this.oneAtATime(this.clock.now())) break;
        const waiter = this.next();
        if (waiter === undefined) break;
        if (waiter.signal?.aborted) {
          waiter.reject(waiter.signal.reason);
          continue;
        }
        this.grant(waiter);
      }
    } finally {
      this.pumping = false;
    }
  }

  private grant(waiter: Waiter): void {
    const at = this.clock.now();
    this.lastGrant = at;
    this.inFlight += 1;
    this.sent.push(at);
    if (this.sent.length > this.limit) this.sent.shift();
    waiter.resolve(at);
  }
}

const shared = new Map<string, RateLimiter>();

/**
 * The limiter of one account in this process (`key`: base URL and a digest of the API key),
 * created on first use. Every client of that account shares it.
 */
export function sharedRateLimiter(
  key: string,
  options: RateLimitOptions,
  clock: Clock,
): RateLimiter {
  const id = `${key}|${options.limit}/${options.windowMs}`;
  let limiter = shared.get(id);
  if (limiter === undefined) {
    limiter = createRateLimiter(options, clock);
    shared.set(id, limiter);
  }
  return limiter;
}
