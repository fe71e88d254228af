/**
 * `edgesync release` against the real local server over HTTP: the edge stays, its labels stay,
 * the edgesync/ keys go (one PATCH), and a later plan without its manifest deletes nothing.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

describe('edgesync release', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir('edgesync-release-');
    env = apiEnv(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('release: a later plan without the manifest deletes nothing, and the labels stay', async () => {
    const dir = path.join(tmp.dir, 'release');
    const keep = { kind: 'TLSEdge', name: 'keep', hostports: ['keep.example.com:443'] };
    await writeManifests(dir, [
      {
        kind: 'HTTPSEdge',
        name: 'web',
        hostports: ['web.example.com:443'],
        metadata: { team: 'payments', tier: 'gold' },
        protect: true,
        routes: [{ match_type: 'path_prefix', match: '/' }],
      },
      keep,
    ]);
    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    const before = await snapshotOf(server.url, server.apiKey);
    const web = before.httpsEdges.find((e) => e.hostports.includes('web.example.com:443'));
    expect(web).toBeDefined();

    // --dry-run writes nothing.
    const writes = writesAt(server);
    const dry = await runCli(['release', '--dry-run', 'HTTPSEdge/web'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`would release https_edge.web (${web?.id})`);
    expect(writesAt(server)).toBe(writes);

    // Unknown or unowned names: an error, and nothing written for any target.
    const bad = await runCli(['release', 'HTTPSEdge/web', 'TLSEdge/nope'], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'error: tls_edge.nope: no edge of this kind and name is managed by owner "default"',
    );
    expect(bad.stderr).toContain('Nothing released.');
    const other = await runCli(['release', '--owner', 'team-b', 'HTTPSEdge/web'], { env });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('managed by owner "default", not "team-b"');
    expect(writesAt(server)).toBe(writes);

    const released = await runCli(['release', 'HTTPSEdge/web'], { env });
    expect(released.code, released.stderr).toBe(0);
    expect(released.stderr).toContain(`released https_edge.web (${web?.id})`);
    expect(writesAt(server)).toBe(writes + 1); // one PATCH
    const after = await snapshotOf(server.url, server.apiKey);
    const edge = after.httpsEdges.find((e) => e.id === web?.id);
    expect(parseStoredMetadata(edge?.metadata)).toEqual({
      labels: { team: 'payments', tier: 'gold' },
      owner: undefined,
      name: undefined,
      protect: false,
    });
    expect(edge?.routes).toHaveLength(1);

    // The manifest goes; the plan deletes nothing, and apply writes nothing.
    await writeManifests(dir, [keep]);
    const plan = await runCli(['plan', '--detailed-exitcode', '--output', 'json', dir], { env });
    expect(plan.code, plan.stderr).toBe(0);
    const parsed = JSON.parse(plan.stdout) as { summary: { delete: number } };
    expect(parsed.summary.delete).toBe(0);
    const applied = await runCli(['apply', '--yes', dir], { env });
    expect(applied.code).toBe(0);
    expect(writesAt(server)).toBe(writes + 1);
    expect((await snapshotOf(server.url, server.apiKey)).httpsEdges.map((e) => e.id)).toContain(
      web?.id,
    );
  });

  it('release usage errors exit 64', async () => {
    for (const argv of [['release'], ['release', 'web'], ['release', 'BotUser/ci']]) {
      expect((await runCli(argv, { env })).code).toBe(64);
    }
  });

  it('releases a cloud endpoint: one PATCH of its metadata, labels kept, the agent one never', async () => {
    const client = apiClient(server.url, server.apiKey);
    try {
      const policy = JSON.stringify({ on_http_request: [{ actions: [{ type: 'deny' }] }] });
      const owned = JSON.stringify({
        'edgesync/name': 'site',
        'edgesync/owner': 'default',
        team: 'a',
      });
      const ep = await client.createEndpoint({
        url: 'https://site.example.com',
        traffic_policy: policy,
        metadata: owned,
      });
      const writes = writesAt(server);
      const r = await runCli(['release', '--owner', 'default', 'CloudEndpoint/site'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`released cloud_endpoint.site (${ep.id})`);
      expect(writesAt(server) - writes).toBe(1);
      expect((await client.getEndpoint(ep.id)).metadata).toBe(JSON.stringify({ team: 'a' }));
      // Released: a second release finds nothing this owner manages.
      const again = await runCli(['release', '--owner', 'default', 'CloudEndpoint/site'], { env });
      expect(again.code).toBe(1);
    } finally {
      await client.close();
    }
  });
});
