/**
 * The test knobs of the local server: per-account rate limiting over a rolling window, injected
 * latency, injected 503s, connection resets and late creates. The knobs object is read on every request, so
 * tests can change it at runtime (`running.knobs.faultRate = 1`).
 */
import type { RateLimitSpec } from '../rate-limit-notation.js';

// The notation is shared with the client's --rate-limit; re-exported for the server's callers.
export { parseRateLimit } from '../rate-limit-notation.js';

export interface ServerKnobs {
  /** Per account: at most `limit` requests per rolling `windowMs`; then 429 + Retry-After (s). */
  rateLimit?: RateLimitSpec | undefined;
  /** Delay injected before handling each request, uniform in [min, max] ms. */
  latencyMs?: { min: number; max: number } | undefined;
  /** 0..1: share of requests answered 503 (JSON error body) without being performed. */
  faultRate?: number | undefined;
  /**
   * 0..1: share of requests whose connection is destroyed instead of answered, after the request
   * was read and, for writes, after it was performed (and made durable): the client cannot know
   * whether its write happened.
   */
  resetRate?: number | undefined;
  /**
   * Account states of the hosted service, for tests of how clients handle them: `read-only`
   * refuses every write to edges (403 `ERR_SVC_7301`), `no-access` every request to edges, reads
   * included (403 `ERR_SVC_7302`). Bot users are not edges and stay writable.
   */
  edgeAccess?: 'read-only' | 'no-access' | undefined;
  /**
   * Refuses every request with a body (400 `ERR_SVC_215`, not performed) with a message that
   * quotes the whole request body, as some services and proxies do: a client must not show
   * what the server echoes without masking the secrets in it.
   */
  echoBody?: boolean | undefined;
  /**
   * Late creates: the next `count` POSTs (to paths starting with `pathPrefix`, when given) are
   * held after they were read, then performed whether or not their client still waits: a create
   * that commits after its client timed out, looked, found nothing and sent it again. Held for
   * `holdMs`, or with `untilNextWrite` only until another write has been performed (so the late
   * original lands right after the client's second attempt, deterministically). The server
   * decrements `count` as it holds requests.
   */
  lateCreates?: LateCreates | undefined;

  // ---- account resources (reserved domains)
  /**
   * A public http, https or tls cloud endpoint's host must match a reserved domain of the
   * account (else 400 `ERR_SVC_319`, `ERR_SVC_318` for a wildcard host), as on the hosted
   * service. Off by default: the other kinds' clients, tests and examples predate domains.
   */
  requireReservedDomains?: boolean | undefined;
  /** The customer's DNS as the service sees it: what makes a custom domain's certificate ready. */
  dns?: DnsKnob | undefined;
  /** The account's plan: wildcard domains (419 without) and the domain limits (415, 418). */
  domainPlan?: DomainPlan | undefined;
}

export interface DnsKnob {
  /**
   * Custom domains whose CNAME record exists (`'all'`, or the reserved names, wildcards as
   * `*.example.com`): their managed certificate is issued the next time the account's domains
   * are read or written.
   */
  readonly cnamesCreated?: 'all' | readonly string[] | undefined;
  /** Reserved names whose DNS is wrong, with the service's message (a `DNS_ERROR` job). */
  readonly dnsErrors?: Readonly<Record<string, string>> | undefined;
}

export interface DomainPlan {
  /** Default true (a paid plan). */
  readonly wildcards?: boolean | undefined;
  readonly maxDomains?: number | undefined;
  readonly maxWildcardDomains?: number | undefined;
}

export interface LateCreates {
  count: number;
  readonly holdMs: number;
  readonly pathPrefix?: string | undefined;
  readonly untilNextWrite?: boolean | undefined;
}

/** The requests held by `lateCreates`, released by their timer or by the next write. */
export class HeldWrites {
  readonly #waiting = new Set<() => void>();

  /** Whether `lateCreates` holds this request (and takes one from its count). */
  static takes(late: LateCreates | undefined, method: string, path: string): late is LateCreates {
    if (late === undefined || method !== 'POST' || late.count <= 0) return false;
    if (late.pathPrefix !== undefined && !path.startsWith(late.pathPrefix)) return false;
    late.count -= 1;
    return true;
  }

  hold(late: LateCreates): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, late.holdMs);
      timer.unref();
      if (late.untilNextWrite === true) this.#waiting.add(done);
    });
  }

  /** A write was performed: every request waiting for one goes ahead. */
  release(): void {
    for (const done of [...this.#waiting]) done();
  }
}

/**
 * The server's side of the rate limit: admits a request or answers how long to wait (the 429's
 * `Retry-After`), over a rolling window per account. It remembers the admission times of the
 * last `limit` requests. (The client's `RateLimiter`, src/api/rate-limit.ts, paces its own
 * sends to stay under such a throttle.)
 */
export class AccountThrottle {
  readonly #admitted = new Map<string, number[]>();

  /** Admits the request (returns 0) or returns the seconds to wait (Retry-After, at least 1). */
  check(account: string, limit: RateLimitSpec, now: number): number {
    let times = this.#admitted.get(account);
    if (times === undefined) {
      times = [];
      this.#admitted.set(account, times);
    }
    const horizon = now - limit.windowMs;
    let drop = 0;
    while (drop < times.length && (times[drop] as number) <= horizon) drop++;
    if (drop > 0) times.splice(0, drop);
    if (times.length >= Math.max(0, limit.limit)) {
      const oldest = times[times.length - Math.max(1, limit.limit)] ?? now;
      return Math.max(1, Math.ceil((oldest + limit.windowMs - now) / 1000));
    }
    times.push(now);
    return 0;
  }
}

/** Parses `MS` or `MIN-MAX` (milliseconds). */
export function parseLatency(text: string): { min: number; max: number } | undefined {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (m === null) return undefined;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : Number(m[2]);
  return max >= min ? { min, max } : undefined;
}

/** Parses a rate in [0, 1]. */
export function parseRate(text: string): number | undefined {
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(text.trim())) return undefined;
  const r = Number(text);
  return r >= 0 && r <= 1 ? r : undefined;
}
