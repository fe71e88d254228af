/**
 * Apply under injected faults: 20% 503s, 10% 429s, latency and reset connections (a reset
 * write was performed: the client cannot know). One apply converges, with no duplicate edge,
 * route or bot user, because a create of unknown outcome is looked up before it is re-sent.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { buildPlan } from '../../../src/plan/index.js';
import { seededRandom, startTestServer } from '../../helpers/server.js';
import { duplicates, snapshotOf, tempDir, writeManifests } from './helpers.js';
import { startThrottlingProxy } from './proxy.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

function manifests(version: number): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [];
  for (let i = 0; i < 12; i++) {
    docs.push({
      kind: 'HTTPSEdge',
      name: `web${i}`,
      description: `v${version}`,
      hostports: [`web${(i + version) % 12}.example.com:443`],
      routes: [
        { match_type: 'path_prefix', match: '/', backend: { backend_id: `bkdhr_v${version}` } },
        { match_type: 'exact_path', match: `/v${version}`, compression: {} },
      ],
    });
  }
  for (let i = 0; i < 4; i++) {
    docs.push({
      kind: 'TLSEdge',
      name: `tcp${i}`,
      hostports: [`10.0.1.${i + 1}:${9000 + version}`],
      backend: { backend_id: 'bkdtg_tcp' },
    });
  }
  docs.push({ kind: 'BotUser', name: `bot${version}` });
  return docs;
}

describe('apply under faults', () => {
  let server: Server;
  let proxy: Awaited<ReturnType<typeof startThrottlingProxy>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    // Seeded: which requests fault or reset is the same on every run.
    server = await startTestServer({ random: seededRandom(20261125) });
    proxy = await startThrottlingProxy(server.url, 0.1, seededRandom(20261126));
    tmp = await tempDir();
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
    await tmp.cleanup();
  });

  it('converges in one apply per change, with no duplicates', async () => {
    const client = createApiClient({
      baseUrl: proxy.url,
      apiKey: server.apiKey,
      timeoutMs: 2_000,
      retry: { maxAttempts: 10, baseDelayMs: 2, maxDelayMs: 20 },
    });
    let unknownCreates = 0;
    try {
      for (const version of [1, 2, 3]) {
        const dir = path.join(tmp.dir, `v${version}`);
        await writeManifests(dir, manifests(version));
        const loaded = await loadManifests(dir, { env: {} });
        if (!loaded.ok) throw new Error('invalid manifests');
        server.knobs.faultRate = 0.2;
        server.knobs.resetRate = 0.1;
        server.knobs.latencyMs = { min: 0, max: 4 };
        const replan = async () => {
          const live = await observe(client);
          return { live, plan: buildPlan(loaded.set, live) };
        };
        const first = await replan();
        const outcome = await applyAndVerify(first.plan, {
          client,
          live: first.live,
          concurrency: 4,
          sleep: async () => {},
          replan,
          logger: undefined,
          onProgress: (e) => {
            if (e.outcome === 'recovered') unknownCreates += 1;
          },
        });
        server.knobs.faultRate = undefined;
        server.knobs.resetRate = undefined;
        server.knobs.latencyMs = undefined;
        expect(outcome.result.errors).toEqual([]);
        expect(outcome.converged).toBe(true);
        const live = await snapshotOf(server.url, server.apiKey);
        expect(duplicates(live)).toEqual([]);
        expect(buildPlan(loaded.set, live).changes.filter((c) => c.action !== 'noop')).toEqual([]);
      }
    } finally {
      await client.close();
    }
    expect(proxy.throttled()).toBeGreaterThan(10);
    // Resets after performed creates happened, and were recovered by looking, not re-sending.
    expect(unknownCreates).toBeGreaterThan(0);
  });
});
