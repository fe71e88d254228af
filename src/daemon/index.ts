/**
 * The daemon's public surface, for `edgesync run` and the API client's metrics hook.
 */
export { createDaemon, DAEMON_DEFAULTS, type Daemon, type DaemonOptions } from './daemon.js';
export { DEFAULT_LISTEN, type ListenAddress, parseListenAddress } from './listen.js';
export { backoffDelay } from './loop.js';
export { fullGarbageCollector } from './memory.js';
export {
  type ApiResponseObservation,
  createDaemonMetrics,
  type DaemonMetrics,
  normalizeRoute,
} from './metrics.js';
export { MISSING_DIR_MESSAGE, type ResolvedDir, resolveManifestDir } from './resolve.js';
export * from './types.js';
