/**
 * The client-side token bucket: `limit` requests per `windowMs`, shared by every request of one
 * client (so concurrent apply workers together stay under the account's limit instead of each
 * collecting 429s). Time comes from the injected `now`/`sleep`, so tests drive it without waiting.
 *
 * Reservations: a caller takes its token at once, even into debt, and sleeps until the debt is
 * paid. Concurrent callers thus queue in arrival order without a lock, each computing its own
 * wait; an aborted caller gives its token back.
 */
import { ConfigError } from '../errors.js';
import { abortableSleep, type Sleep, throwIfAborted } from './retry.js';

export interface RateLimitOptions {
  /** Requests allowed per window (also the burst size). */
  readonly limit: number;
  readonly windowMs: number;
}

export interface TokenBucket {
  /** Resolves when the caller may send one request; rejects with `AbortedError` on abort. */
  take(signal?: AbortSignal): Promise<void>;
}

export function createTokenBucket(
  options: RateLimitOptions,
  clock: { readonly now: () => number; readonly sleep: Sleep },
): TokenBucket {
  const { limit, windowMs } = options;
  if (!Number.isFinite(limit) || limit <= 0 || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new ConfigError(
      `rate limit must be a positive number of requests per positive window (got ${limit}/${windowMs}ms)`,
    );
  }
  const perMs = limit / windowMs;
  let tokens = limit;
  let last = clock.now();

  return {
    async take(signal) {
      throwIfAborted(signal);
      const t = clock.now();
      tokens = Math.min(limit, tokens + (t - last) * perMs);
      last = t;
      tokens -= 1;
      if (tokens >= 0) return;
      const waitMs = Math.ceil(-tokens / perMs);
      try {
        await abortableSleep(clock.sleep, waitMs, signal);
      } catch (err) {
        tokens += 1;
        throw err;
      }
    },
  };
}
