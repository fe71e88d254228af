/**
 * Waiting before trying again, for everything that does: the API client's retries, the
 * executor's re-sent creates, notifications and commit statuses, and the daemon's failure
 * backoff. Capped exponential backoff (full jitter, or none), a server's `Retry-After`, the one
 * sleep every wait goes through (an AbortSignal cancels it), and `retrying`, the loop itself.
 * What is worth retrying is the caller's to say (the API's rules are in ./api/retry.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { AbortedError } from './errors.js';

/** A wait: injected so that tests assert the exact waits instead of sleeping. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real sleep: a timer that an AbortSignal cancels (rejecting with `AbortedError`). */
export const realSleep: Sleep = async (ms, signal) => {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch (err) {
    if (signal?.aborted) throw abortedError(signal);
    throw err;
  }
};

/** The `AbortedError` for a fired signal, carrying its reason as the cause. */
export function abortedError(signal: AbortSignal): AbortedError {
  return new AbortedError('aborted', { cause: signal.reason });
}

/** Throws `AbortedError` if the signal has already fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

/**
 * Runs an injected sleep so that an abort always surfaces as `AbortedError`, whatever the sleep
 * rejects with, and an already-fired signal never sleeps at all.
 */
export async function abortableSleep(
  sleep: Sleep,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  throwIfAborted(signal);
  try {
    await sleep(ms, signal);
  } catch (err) {
    if (signal?.aborted) throw abortedError(signal);
    throw err;
  }
  throwIfAborted(signal);
}

/** How the waits between attempts grow. */
export interface Backoff {
  /** The first retry's wait (its ceiling, with full jitter); doubled for each further one. */
  readonly baseMs: number;
  /** No wait exceeds this. */
  readonly maxMs: number;
  /**
   * `full` (the default): a uniformly random wait below the ceiling, so that callers failing
   * together do not retry together; `none`: the ceiling itself (one caller, a predictable wait).
   */
  readonly jitter?: 'full' | 'none';
}

/**
 * The wait before retry number `retry` (counted from 0): `min(maxMs, baseMs * 2^retry)`, and
 * with full jitter (AWS architecture blog, "Exponential Backoff and Jitter") a uniformly random
 * wait in [0, that). The exponent stops growing at 40: the cap is reached long before, and
 * `2 ** 1000` would be Infinity.
 */
export function backoffDelay(retry: number, backoff: Backoff, random: () => number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(Math.max(retry, 0), 40));
  return backoff.jitter === 'none' ? ceiling : Math.floor(random() * ceiling);
}

/**
 * `Retry-After` as milliseconds from `nowMs`: delay-seconds or an HTTP-date. Undefined when
 * absent or unreadable (the caller falls back to its backoff).
 */
export function parseRetryAfter(
  header: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  // HTTP-dates (all three RFC 9110 forms) start with the day name; `Date.parse` alone would
  // also read things like "-1" as a year.
  const at = /^[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * The wait before retry number `retry`: the server's `Retry-After` when it gave one, else the
 * backoff. Undefined when the server asks for longer than `maxRetryAfterMs`: re-sending early
 * would ignore what it asked, so the caller gives up instead.
 */
export function retryWait(
  retry: number,
  backoff: Backoff,
  random: () => number,
  retryAfterMs: number | undefined,
  maxRetryAfterMs = Number.POSITIVE_INFINITY,
): number | undefined {
  if (retryAfterMs === undefined) return backoffDelay(retry, backoff, random);
  return retryAfterMs > maxRetryAfterMs ? undefined : retryAfterMs;
}

/** One attempt's outcome: done, or failed in a way another attempt may fix. */
export type Attempted<T> =
  | { readonly done: true; readonly value: T }
  | {
      readonly done: false;
      /** What went wrong: thrown when no attempt is left. */
      readonly failure: unknown;
      /** The server's `Retry-After`, when it gave one (`parseRetryAfter`). */
      readonly retryAfterMs?: number | undefined;
      /**
       * This failure costs no attempt and no wait: the loop goes again at once, under the same
       * attempt number. For a failure that says "not now" rather than "failed" and whose wait
       * the attempt itself takes (the API client's 429 absorbed by its rate limiter, which holds
       * the next send until the window frees). The caller bounds how often it says so.
       */
      readonly costsNoAttempt?: boolean | undefined;
    };

export interface RetryLoop {
  /** Attempts in all, the first included; 1 never retries. */
  readonly attempts: number;
  readonly backoff: Backoff;
  readonly sleep: Sleep;
  /** In [0, 1): the jitter's draw (tests seed it). Default Math.random. */
  readonly random?: (() => number) | undefined;
  readonly signal?: AbortSignal | undefined;
  /** A longer `Retry-After` ends the loop with the failure (default: any is waited for). */
  readonly maxRetryAfterMs?: number | undefined;
  /**
   * What an abort (before or during a wait) throws: `failure` (the default), the last failure,
   * so that a queue shutting down says what went wrong; `aborted`, the `AbortedError`, for a
   * caller whose abort is the user's (the API client: a Ctrl-C is reported as one, not as the
   * 503 it interrupted).
   */
  readonly onAbort?: 'failure' | 'aborted' | undefined;
  /** Told before each wait (for a log line): the attempt that failed, and the wait. */
  readonly onRetry?: ((attempt: number, waitMs: number, failure: unknown) => void) | undefined;
}

/**
 * Runs `attempt` (numbered from 1) until it is done, waiting between failures as the loop says.
 * When no attempt is left, when the server asks for too long a wait, or when the signal fires
 * (before or during a wait) the last failure is thrown: the caller learns what went wrong, not
 * merely that the waiting stopped (`onAbort: 'aborted'` throws the `AbortedError` instead). An
 * error `attempt` throws is not retried. A failure that `costsNoAttempt` is tried again at once,
 * under the same number.
 */
export async function retrying<T>(
  loop: RetryLoop,
  attempt: (n: number) => Promise<Attempted<T>>,
): Promise<T> {
  const random = loop.random ?? Math.random;
  const { signal } = loop;
  const stop = (failure: unknown): unknown =>
    loop.onAbort === 'aborted' && signal !== undefined ? abortedError(signal) : failure;
  for (let n = 1; ; n++) {
    let outcome = await attempt(n);
    // "Not now" is not a failure: the same attempt goes again (its own wait is in `attempt`).
    while (!outcome.done && outcome.costsNoAttempt === true) {
      if (signal?.aborted) throw stop(outcome.failure);
      outcome = await attempt(n);
    }
    if (outcome.done) return outcome.value;
    if (n >= loop.attempts) throw outcome.failure;
    const wait = retryWait(n - 1, loop.backoff, random, outcome.retryAfterMs, loop.maxRetryAfterMs);
    if (wait === undefined) throw outcome.failure;
    if (signal?.aborted) throw stop(outcome.failure);
    loop.onRetry?.(n, wait, outcome.failure);
    try {
      await abortableSleep(loop.sleep, wait, signal);
    } catch (err) {
      if (err instanceof AbortedError && signal?.aborted) throw stop(outcome.failure);
      throw err;
    }
  }
}
