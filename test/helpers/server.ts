/**
 * Test helper: a local Edge API server on 127.0.0.1, port 0, in memory unless `dataDir` is
 * given, with a fresh random API key. Close it in `afterEach`/`afterAll`.
 */
import {
  generateApiKey,
  type RunningServer,
  type StartServerOptions,
  startServer,
} from '../../src/server/index.js';

/** A small seeded generator for the server's fault knobs: the same run every time. */
export function seededRandom(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    // xorshift32
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

export async function startTestServer(
  opts: Partial<StartServerOptions> = {},
): Promise<RunningServer & { apiKey: string }> {
  const apiKey = opts.apiKeys?.[0] ?? generateApiKey();
  const running = await startServer({
    host: '127.0.0.1',
    port: 0,
    ...opts,
    apiKeys: opts.apiKeys ?? [apiKey],
  });
  return Object.assign(running, { apiKey });
}

/** Write requests (POST, PUT, PATCH, DELETE) the server has received so far. */
export function writesAt(server: RunningServer): number {
  const r = server.requests;
  return (r.POST ?? 0) + (r.PUT ?? 0) + (r.PATCH ?? 0) + (r.DELETE ?? 0);
}
