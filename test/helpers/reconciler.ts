/**
 * Reconciler options for tests: owner `default`, no environment, a silent log. The client is one
 * that is never called unless a test passes its own (`{ client }`).
 */
import { createApiClient } from '../../src/api/index.js';
import type { ReconcilerOptions } from '../../src/engine/context.js';
import { silentLogger } from '../../src/log.js';

export function reconcilerOptions(extra: Partial<ReconcilerOptions> = {}): ReconcilerOptions {
  return {
    // Never called: port 9 (discard) on loopback, should a bug make it call.
    client: createApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'test-key' }),
    owner: 'default',
    allowEmpty: false,
    maxDeletes: 10,
    concurrency: 1,
    env: {},
    secretDirs: [],
    logger: silentLogger(),
    ...extra,
  };
}
