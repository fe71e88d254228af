/**
 * The daemon's public surface, for `edgesync run` and the API client's metrics hook.
 */
export { createDaemon, DAEMON_DEFAULTS } from './daemon.js';
export { DEFAULT_LISTEN, type ListenAddress, parseListenAddress } from './listen.js';
export {
  collectWhenGrown,
  DAEMON_NODE_FLAGS,
  fullGarbageCollector,
  missingDaemonFlags,
} from './memory.js';
export { createDaemonMetrics } from './metrics.js';
export * from './types.js';
