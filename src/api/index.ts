/**
 * The public surface of the Edge API client: what the planner, the applier, the daemon and the
 * CLI import. Everything else in src/api is internal.
 */

export {
  AbortedError,
  ApiError,
  ApiResponseError,
  isNotFound,
  isOutcomeUnknown,
  NetworkError,
  TimeoutError,
} from '../errors.js';
export {
  type AnyModuleName,
  type ApiClient,
  type ApiClientOptions,
  createApiClient,
  DEFAULT_TIMEOUT_MS,
  type HttpMethod,
  type ListOptions,
  type ListResult,
  type RequestOptions,
  type ResponseInfo,
} from './client.js';
export {
  API_KEY_ENV,
  API_URL_ENV,
  type ApiConfig,
  normalizeBaseUrl,
  type ResolveApiConfigInput,
  resolveApiConfig,
} from './config.js';
export { type LiveSnapshot, type ObserveClient, observe } from './observe.js';
export type { RateLimitOptions } from './rate-limit.js';
export { DEFAULT_RETRY, type RetryOptions, realSleep, type Sleep } from './retry.js';
export * from './schemas.js';
