/**
 * The client's budget against the local server's rolling-window limit (time-scaled: 20
 * requests per rolling 2 s): four workers and the listings share one limiter, so an apply that
 * needs several windows gets no 429 at all; and a budget shared with another client settles.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { runCli, tempDir, writeManifests } from './helpers.js';

let server: RunningServer & { apiKey: string };
beforeAll(async () => {
  server = await startTestServer();
  server.knobs.rateLimit = { limit: 20, windowMs: 2000 };
});
afterAll(async () => {
  await server.close();
});

const edge = (name: string) => ({
  kind: 'TLSEdge',
  name,
  hostports: [`${name}.example.com:443`],
});

it('an apply needing three windows of budget converges with no 429', async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const edges = path.join(dir, 'edges');
    await writeManifests(
      edges,
      Array.from({ length: 40 }, (_, i) => edge(`e${i}`)),
    );
    const env = {
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
      EDGESYNC_RATE_LIMIT: '20/2s',
    };
    const r = await runCli(['apply', edges, '--yes', '--concurrency', '4'], { env });
    expect(r.stderr).toContain('converged: the live state matches the manifests.');
    expect(r.code).toBe(0);
    // None by construction: each slot is timed from its answer, and the server counted the
    // request before it answered, so no window of the server's holds more than the limit.
    expect(server.statuses[429] ?? 0).toBe(0);
    expect(server.statuses[201]).toBe(40);
  } finally {
    await cleanup();
  }
}, 60_000);
