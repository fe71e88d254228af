/**
 * `edgesync run` (in-process) under a time-scaled budget: the server enforces 20 requests per
 * rolling 2 s and the daemon paces itself to the same. A saved file costs what it changes
 * (an incremental cycle: GET by ID, the write, GET by ID), with no 429.
 */
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  type RecordingProxy,
  startRecordingProxy,
  waitFor,
  waitForCycle,
} from '../../../bench/harness.js';
import type { DaemonStatus } from '../../../src/daemon/types.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir, tlsEdge, writeYaml } from './helpers.js';

let server: Awaited<ReturnType<typeof startTestServer>>;
let proxy: RecordingProxy;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  server = await startTestServer({ rateLimit: { limit: 20, windowMs: 2000 } });
  proxy = await startRecordingProxy(server.url);
  tmp = await tempDir();
});
afterEach(async () => {
  await stopDaemons();
  await proxy.close();
  await server.close();
  await tmp.cleanup();
});

const settled = (s: DaemonStatus) =>
  s.last_reconcile?.result === 'converged' || s.last_reconcile?.result === 'changed';

it('a saved file is an incremental cycle under the budget: 3 calls, no 429', async () => {
  const edges = path.join(tmp.dir, 'edges');
  for (let f = 0; f < 3; f++) {
    await writeYaml(
      path.join(edges, `f${f}.yaml`),
      Array.from({ length: 4 }, (_, k) => tlsEdge(`e${f * 4 + k}`)),
    );
  }
  const daemon = await startDaemon({
    args: [edges, '--interval', '1h', '--debounce', '50ms', '--rate-limit', '20/2s'],
    cwd: tmp.dir,
    env: {
      EDGESYNC_API_URL: proxy.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
    },
  });
  await waitForCycle(daemon, 0, settled, 20_000);

  const since = Date.now();
  const before = proxy.seen.length;
  await writeYaml(path.join(edges, 'f1.yaml'), [
    tlsEdge('e4', { description: 'edited' }),
    ...Array.from({ length: 3 }, (_, k) => tlsEdge(`e${5 + k}`)),
  ]);
  // The save's cycle writes; the watcher's second look at the saved file (a save in place is
  // reported at its truncation first) may add a cycle that finds it all converged, at no call.
  const patched = () => proxy.seen.slice(before).some((r) => r.method === 'PATCH');
  const s = await waitForCycle(daemon, since, (st) => !st.in_flight && patched() && settled(st));
  expect(s.last_reconcile?.reason).toBe('file');
  await waitFor('the cycle to be answered', () =>
    proxy.seen.slice(before).every((r) => r.status !== undefined) ? true : undefined,
  );
  const calls = proxy.seen.slice(before).map((r) => `${r.method} ${r.status}`);
  expect(calls).toEqual(['GET 200', 'PATCH 200', 'GET 200']);
  expect(server.statuses[429] ?? 0).toBe(0);
});
