/**
 * The public surface of the Edge API client: what the planner, the applier, the daemon and the
 * CLI import. Everything else in src/api is internal.
 */

export {
  isNotFound,
  isOutcomeUnknown,
} from '../errors.js';
export { createApiClient } from './client.js';
export { resolveApiConfig } from './config.js';
export { createExchange, type Exchange } from './exchange.js';
export {
  callCount,
  type LiveSnapshot,
  NO_CALLS,
  type ObserveClient,
  observe,
} from './observe.js';
export * from './schemas.js';
export type { ApiClient, ApiClientOptions, RequestOptions } from './types.js';
