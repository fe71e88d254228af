/**
 * The API client of a command: one per account and process shares one rate limiter
 * (`sharedRateLimiter`, keyed by base URL and a digest of the key), so every worker, listing and
 * verification of the process draws from the account's one budget.
 */
import { createHash } from 'node:crypto';
import type { ApiConfig } from '../api/config.js';
import { API_KEY_ENV, API_URL_ENV, resolveApiConfig } from '../api/config.js';
import { type ApiClient, type ApiClientOptions, createApiClient } from '../api/index.js';
import { currentPriority } from '../api/priority.js';
import { sharedRateLimiter } from '../api/rate-limit.js';
import { ConfigError } from '../errors.js';
import type { RateLimitSpec } from '../rate-limit-notation.js';
import { realSleep } from '../retry.js';
import { runningEmbeddedApi } from './embedded-api.js';

export function createAccountClient(
  options: Omit<ApiClientOptions, 'rateLimit' | 'rateLimiter'> & {
    readonly budget: RateLimitSpec | undefined;
  },
): ApiClient {
  const { budget, ...withoutBudget } = options;
  // Calls inside `withPriority('high', ...)` (a daemon cycle for a manifest change) go first.
  const rest = { priority: currentPriority, ...withoutBudget };
  if (budget === undefined) return createApiClient(rest);
  const account = createHash('sha256').update(options.apiKey).digest('hex').slice(0, 16);
  const limiter = sharedRateLimiter(`${options.baseUrl}|${account}`, budget, {
    now: Date.now,
    sleep: realSleep,
  });
  return createApiClient({ ...rest, rateLimiter: limiter });
}

/**
 * The API to talk to; unlike the daemon, `plan` and `apply` need one configured. When none is and
 * a daemon in `cwd` runs the embedded one, the error says how to reach it.
 */
export function requireApiConfig(
  flags: { readonly apiUrl?: string | undefined; readonly apiKey?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  cwd?: string,
): ApiConfig {
  const config = resolveApiConfig({ flags, env });
  if (config === undefined) {
    const embedded = cwd === undefined ? undefined : runningEmbeddedApi(cwd);
    const hint =
      embedded === undefined
        ? ''
        : `; the daemon running here serves its embedded Edge API at ${embedded.url}: ` +
          `${API_URL_ENV}=${embedded.url} ${API_KEY_ENV}="$(cat ${embedded.keyFile})" edgesync ...`;
    throw new ConfigError(
      `no Edge API configured: pass --api-url and --api-key, or set ${API_URL_ENV} and ${API_KEY_ENV}${hint}`,
    );
  }
  return config;
}
