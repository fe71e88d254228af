/**
 * A TLS edge migrated and cut over against the local server over HTTP: `migrate` writes a
 * `tls://` endpoint that terminates TLS itself, `plan` shows the edge's delete before the
 * endpoint's create, `apply` performs it (the service refuses an endpoint on a host and port an
 * edge still holds, so success proves the order), and the migrated set converges.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClient, observe } from '../../../src/api/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, tempDir, writeManifests } from '../apply/helpers.js';

const BACKEND = 'bkdhr_2OOHLE6ESrthOmxYlInonfwYtzS';

let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  tmp = await tempDir('edgesync-migrate-tls-');
  server = await startTestServer();
  client = apiClient(server.url, server.apiKey);
});
afterEach(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

describe('cut-over of a TLS edge to a tls:// endpoint', () => {
  it('the edge is deleted, then the tls:// endpoint that terminates TLS is created; the next plan is empty', async () => {
    const old = path.join(tmp.dir, 'edges');
    const migrated = path.join(tmp.dir, 'migrated');
    await writeManifests(old, [
      {
        kind: 'TLSEdge',
        name: 'db',
        hostports: ['db.example.com:443'],
        backend: { backend_id: BACKEND },
        tls_termination: { terminate_at: 'edge', min_version: '1.3' },
      },
    ]);
    const env = apiEnv(server.url, server.apiKey);
    const first = await runCli(['apply', '--yes', old], { env });
    expect(first.code, first.stderr).toBe(0);
    const edgeId = (await observe(client)).tlsEdges[0]!.id;

    const m = await runCli([
      'migrate',
      old,
      '--out',
      migrated,
      '--backend',
      `${BACKEND}=tls://db.internal:5432`,
    ]);
    expect(m.code, m.stderr).toBe(0);

    const plan = await runCli(['plan', migrated], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      `1. - delete tls_edge.db (${edgeId})\n     + then create cloud_endpoint.db tls://db.example.com:443 (takes over db.example.com:443)`,
    );

    const apply = await runCli(['apply', '--yes', '--concurrency', '1', migrated], { env });
    expect(apply.code, apply.stderr).toBe(0);
    const live = await observe(client);
    expect(live.tlsEdges).toEqual([]);
    const endpoints = live.cloudEndpoints.filter((e) => e.type === 'cloud');
    expect(endpoints.map((e) => e.url)).toEqual(['tls://db.example.com:443']);
    // A tls:// endpoint terminates TLS only with a terminate-tls action: the edge's termination
    // at the edge carried over, then the backend.
    const policy = JSON.parse(endpoints[0]!.traffic_policy ?? 'null') as {
      on_tcp_connect: { actions: { type: string; config?: Record<string, unknown> }[] }[];
    };
    expect(policy.on_tcp_connect.flatMap((r) => r.actions)).toEqual([
      { type: 'terminate-tls', config: { min_version: '1.3' } },
      { type: 'forward-internal', config: { url: 'tls://db.internal:5432' } },
    ]);

    const again = await runCli(['plan', '--detailed-exitcode', migrated], { env });
    expect(again.stdout).toContain('No changes');
    expect(again.code).toBe(0);
  });
});
