/**
 * The client's retry policy, as pure functions: which failures are transient, which writes may
 * be re-sent, and the bounds of its waits. How long each wait is (capped exponential backoff
 * with full jitter, or the server's `Retry-After`) and the abortable sleep are ../retry.ts's,
 * shared with every other caller that retries, and so is the loop (`retrying`): the transport
 * only tells it what each attempt's failure means.
 */

export interface RetryOptions {
  /** Attempts in all, the first included; 1 disables retries. */
  readonly maxAttempts: number;
  /** The backoff ceiling of the first retry; doubled for each further one. */
  readonly baseDelayMs: number;
  /** The backoff ceiling never exceeds this. */
  readonly maxDelayMs: number;
  /**
   * The longest `Retry-After` we are willing to wait. A server asking for more is not re-sent
   * early (that would ignore what it asked): the error is thrown, carrying `retryAfter`.
   */
  readonly maxRetryAfterMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
};

/** Statuses that say "try again later": rate limited, or a transient server-side failure. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/**
 * Error codes of a connection that was never established: no byte of the request left, so
 * even a POST can be re-sent. Anything later (reset, "other side closed", timeout) is not proof.
 * `UND_ERR_CONNECT_TIMEOUT` is undici's: raised only while a new connection is still being set
 * up (TLS handshake and a proxy's tunnel included), never once it could carry the request.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** What went wrong with one attempt, before it becomes a typed error. */
export type AttemptFailure =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterMs?: number }
  | { readonly kind: 'network'; readonly sent: boolean }
  | { readonly kind: 'timeout' };

/**
 * - `retry`: transient, and re-sending is safe;
 * - `unknown`: transient, but a POST may have been performed: surface it, flagged, to a caller
 *   that can look before it creates again;
 * - `fail`: not transient (4xx): retrying cannot help.
 */
export type RetryVerdict = 'retry' | 'unknown' | 'fail';

export function classifyFailure(method: string, failure: AttemptFailure): RetryVerdict {
  // POST is the one non-idempotent verb of this API: re-sending a processed create duplicates.
  const idempotent = method !== 'POST';
  switch (failure.kind) {
    case 'status':
      if (failure.status === 429) return 'retry';
      if (!RETRYABLE_STATUSES.has(failure.status)) return 'fail';
      return idempotent ? 'retry' : 'unknown';
    case 'network':
      if (!failure.sent) return 'retry';
      return idempotent ? 'retry' : 'unknown';
    case 'timeout':
      return idempotent ? 'retry' : 'unknown';
  }
}

/** True when the server may have performed the request (its answer, if any, was lost or 5xx). */
export function mayHaveBeenPerformed(failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case 'status':
      return failure.status >= 500;
    case 'network':
      return failure.sent;
    case 'timeout':
      return true;
  }
}

/** Whether a network error proves the request never reached the server. */
export function requestNotSent(err: unknown): boolean {
  for (const e of causeChain(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
    // Happy-eyeballs connects fail with an AggregateError of per-address refusals.
    if (e instanceof AggregateError && e.errors.length > 0 && e.errors.every(requestNotSent)) {
      return true;
    }
  }
  return false;
}

function* causeChain(err: unknown): Generator<object> {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}
