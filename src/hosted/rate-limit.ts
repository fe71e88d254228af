/** The hosted service's request budget (api-notes, "Rules of the hosted service"). */
import type { RateLimitSpec } from '../rate-limit-notation.js';

/** The hosted service's budget per account (api-notes): 120 requests per rolling 60 s. */
export const HOSTED_RATE_LIMIT: RateLimitSpec = { limit: 120, windowMs: 60_000 };
