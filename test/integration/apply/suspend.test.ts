/**
 * `suspend: true` on a manifest, end to end against the local server: the plan shows the
 * resource as suspended, apply leaves it exactly as it is live (a change made by hand stays),
 * and removing `suspend` brings it back under management.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, tempDir, writeManifests } from './helpers.js';

let server: RunningServer & { apiKey: string };
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

it('a suspended edge is left as it is live, shown as suspended, and managed again once unsuspended', async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const edges = path.join(dir, 'edges');
    const edge = (extra: Record<string, unknown> = {}) => ({
      kind: 'TLSEdge',
      name: 'db',
      description: 'from git',
      hostports: ['db.example.com:443'],
      ...extra,
    });
    const env = apiEnv(server.url, server.apiKey);
    await writeManifests(edges, [edge()]);
    expect((await runCli(['apply', edges, '--yes'], { env })).code).toBe(0);
    // Someone changes it by hand during an incident, and the team suspends it in Git.
    const client = apiClient(server.url, server.apiKey);
    const [live] = (await client.listTlsEdges()).items;
    await client.updateTlsEdge(live?.id ?? '', { description: 'hand-fixed' });
    await writeManifests(edges, [edge({ suspend: true })]);

    const plan = await runCli(['plan', edges, '--detailed-exitcode'], { env });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('Suspended (suspend: true, left as they are live):');
    expect(plan.stdout).toContain('tls_edge.db');
    expect(plan.stdout).toContain('1 suspended');

    const before = writesAt(server);
    const applied = await runCli(['apply', edges, '--yes'], { env });
    expect(applied.code).toBe(0);
    expect(writesAt(server)).toBe(before);
    expect((await client.listTlsEdges()).items[0]?.description).toBe('hand-fixed');

    await writeManifests(edges, [edge()]);
    expect((await runCli(['apply', edges, '--yes'], { env })).code).toBe(0);
    expect((await client.listTlsEdges()).items[0]?.description).toBe('from git');
    await client.close();
  } finally {
    await cleanup();
  }
});
