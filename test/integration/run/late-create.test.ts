/**
 * The daemon after a create whose answer was lost: the lost attempt may land after the cycle's
 * check, so the daemon does not keep that check's snapshot; its next cycle, even one a file
 * event starts (which plans on the kept snapshot when there is one), lists everything and
 * deletes the late duplicate. (An edge with a hostport cannot have a late copy: the service
 * refuses a second edge with the same hostport.)
 */
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type ApiClient, createApiClient, observe } from '../../../src/api/index.js';
import { createReconciler, type ReconcileInput } from '../../../src/engine/index.js';
import { silentLogger } from '../../../src/log.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { httpsEdge, tempDir, writeYaml } from './helpers.js';

let server: RunningServer & { apiKey: string };
let client: ApiClient;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  server = await startTestServer();
  client = createApiClient({ baseUrl: server.url, apiKey: server.apiKey, timeoutMs: 300 });
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await client.close();
  await server.close();
  await cleanup();
});

const shops = async () =>
  (await observe(client)).httpsEdges.filter(
    (e) => parseStoredMetadata(e.metadata)?.name === 'shop',
  );

it('a duplicate that lands after the check is deleted by the next cycle, a file event too', async () => {
  // Without hostports: a late copy of an edge with one would be refused (hostport in use).
  await writeYaml(path.join(dir, 'edges.yaml'), [httpsEdge('shop', { hostports: [] })]);
  const reconcile = createReconciler({
    client,
    owner: 'default',
    allowEmpty: false,
    maxDeletes: 10,
    concurrency: 2,
    env: {},
    secretDirs: [],
    logger: silentLogger(),
  });
  const input = (reason: ReconcileInput['reason']): ReconcileInput => ({
    dir,
    revision: undefined,
    reason,
    signal: new AbortController().signal,
    assertCurrent: async () => undefined,
  });
  // The first POST of the edge is performed 3 s after it was read: long after the client
  // gave up (300 ms), looked, and created the edge again.
  server.knobs.lateCreates = { count: 1, holdMs: 3_000, pathPrefix: '/edges/https' };
  const first = await reconcile(input('manual'));
  expect(first.result).toBe('changed');
  await expect.poll(async () => (await shops()).length, { timeout: 10_000 }).toBe(2);

  const second = await reconcile(input('file'));
  expect(second).toMatchObject({ result: 'changed', outOfSync: 0 });
  expect((await shops()).length).toBe(1);
});
