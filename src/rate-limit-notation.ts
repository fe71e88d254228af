/**
 * The `N/Ws` rate-limit notation (the hosted service's 120 requests per rolling 60 s is written
 * `120/60s`), shared by the client's `--rate-limit` (`apply`, `run`, `EDGESYNC_RATE_LIMIT`) and
 * the local server's test knob of the same name. Pure; it lives at the top of src/, below both,
 * so the CLI does not import the server to read a flag, and the API's facts (src/hosted/) hold no
 * flag parser.
 */

/** `limit` requests per `windowMs` milliseconds. */
export interface RateLimitSpec {
  limit: number;
  windowMs: number;
}

/** Parses `N/Ws` (e.g. `120/60s`), also `N/Wms` and `N/Wm`; undefined when malformed. */
export function parseRateLimit(text: string): RateLimitSpec | undefined {
  const m = /^(\d+)\/(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) return undefined;
  const limit = Number(m[1]);
  const unit = m[3] ?? 's';
  const windowMs = Number(m[2]) * (unit === 'ms' ? 1 : unit === 'm' ? 60_000 : 1000);
  if (!Number.isSafeInteger(limit) || limit < 1 || !(windowMs > 0)) return undefined;
  return { limit, windowMs };
}
