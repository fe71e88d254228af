/**
 * Defaults are values (issue 10), end to end against the local server: a TLS downgrade made by
 * hand is drift that `plan` shows and `apply` corrects; `import` of hand-made edges writes every
 * field whose live value differs from the documented default (and nothing that equals it), and
 * the imported set, applied, then planned, shows no changes.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { startTestServer } from '../../helpers/server.js';
import { clientFor } from '../server/client.js';
import { apiClient, apiEnv, runCli, tempDir, writeManifests } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

describe('defaults are values', () => {
  let server: Server;
  let client: ApiClient;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    client = apiClient(server.url, server.apiKey);
    tmp = await tempDir();
    env = apiEnv(server.url, server.apiKey);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await tmp.cleanup();
  });

  it('a TLS downgrade made by hand shows in plan and apply corrects it', async () => {
    const dir = path.join(tmp.dir, 'tls');
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'db', hostports: ['10.0.0.5:5432'], tls_termination: {} },
    ]);
    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    const edge = (await client.listTlsEdges()).items[0];
    if (edge === undefined) throw new Error('no edge');
    expect(edge.tls_termination?.min_version).toBe('1.2');

    // Someone lowers the minimum version by hand.
    const call = clientFor(server, server.apiKey);
    await call('PUT', `/edges/tls/${edge.id}/tls_termination`, { min_version: '1.0' });
    const drift = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect(drift.code).toBe(2);
    expect(drift.stdout).toContain('~ tls_termination.min_version = "1.0" -> "1.2"');
    expect(drift.stdout).toContain('Plan: 0 to create, 1 to update');

    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    expect((await client.getTlsEdge(edge.id)).tls_termination?.min_version).toBe('1.2');
    const settled = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect(settled.code).toBe(0);
  });

  it('import writes exactly the non-default values, and the import converges', async () => {
    const call = clientFor(server, server.apiKey);
    const made = async (p: string, body: unknown) => (await call('POST', p, body)).json;
    await made('/edges/tls', {
      hostports: ['10.0.0.13:5432'],
      tls_termination: { min_version: '1.3' },
    });
    await made('/edges/tls', {
      hostports: ['10.0.0.10:5432'],
      tls_termination: { min_version: '1.0' },
    });
    await made('/edges/tls', { hostports: ['10.0.0.12:5432'], tls_termination: {} });
    const sso = await made('/edges/https', { hostports: ['sso.example.com:443'] });
    await made(`/edges/https/${sso.id}/routes`, {
      match_type: 'path_prefix',
      match: '/',
      saml: {
        idp_metadata: '<EntityDescriptor/>',
        allow_idp_initiated: false,
        cookie_prefix: 'my.app',
        nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
      },
    });
    const web = await made('/edges/https', { hostports: ['web.example.com:443'] });
    await made(`/edges/https/${web.id}/routes`, {
      match_type: 'path_prefix',
      match: '/',
      oauth: { provider: { google: {} }, inactivity_timeout: 300 },
      circuit_breaker: {
        tripped_duration: 5,
        rolling_window: 5,
        num_buckets: 5,
        volume_threshold: 5,
      },
    });

    const out = path.join(tmp.dir, 'imported');
    const imported = await runCli(['import', '--all', '--out', out], { env });
    expect(imported.code, imported.stderr).toBe(0);
    const text = async (name: string) => readFile(path.join(out, name), 'utf8');
    const files = await readdir(out);
    const all = (await Promise.all(files.map(text))).join('\n---\n');
    // Non-default values survive...
    expect(await text('tls-10.0.0.13.yaml')).toContain('min_version: "1.3"');
    expect(await text('tls-10.0.0.10.yaml')).toContain('min_version: "1.0"');
    expect(all).toContain('allow_idp_initiated: false');
    expect(all).toContain('cookie_prefix: my.app');
    expect(all).toContain('nameid_format: urn:oasis:names:tc:SAML:2.0:nameid-format:transient');
    expect(all).toContain('inactivity_timeout: 300');
    // ...and defaults are not written.
    expect(await text('tls-10.0.0.12.yaml')).not.toContain('min_version');
    expect(all).not.toMatch(
      /min_version: "1.2"|terminate_at: edge|cookie_prefix: svc\.|error_threshold_percentage: 0\b|maximum_duration: 0/,
    );

    const applied = await runCli(['apply', '--yes', out], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const plan = await runCli(['plan', '--detailed-exitcode', out], { env });
    expect([plan.code, plan.stdout]).toEqual([
      0,
      'edgesync plan for owner "default":\n\nNo changes. Live state matches the manifests.\n',
    ]);
  });
});
