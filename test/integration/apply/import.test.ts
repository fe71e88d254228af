import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { buildPlan } from '../../../src/plan/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const SAML_XML = '<EntityDescriptor entityID="https://idp.example.com"></EntityDescriptor>';

/** Edges made by hand (not by edgesync), with every kind of module, secrets included. */
async function seedForeign(client: ApiClient): Promise<void> {
  const web = await client.createHttpsEdge({
    description: 'hand made',
    metadata: 'not json at all',
    hostports: ['web.example.com:443'],
    tls_termination: { min_version: '1.3' },
    mutual_tls: { certificate_authority_ids: ['ca_one', 'ca_two'] },
  });
  await client.createRoute(web.id, {
    match_type: 'path_prefix',
    match: '/',
    description: 'root',
    backend: { backend_id: 'bkdhr_web' },
    ip_restriction: { ip_policy_ids: ['ipp_a'] },
    circuit_breaker: {
      tripped_duration: 10,
      rolling_window: 10,
      volume_threshold: 20,
      error_threshold_percentage: 0.5,
      num_buckets: 10,
    },
    request_headers: {
      add: {
        'X-Team': 'web',
        Authorization: 'Bearer upstream-token-value',
        'X-Api-Key': 'api-key-value',
      },
      remove: ['X-Debug'],
    },
    response_headers: { add: { 'X-Served-By': 'edge', 'Set-Cookie': 'cookie-value' } },
    user_agent_filter: { deny: ['badbot'] },
    oauth: {
      provider: {
        github: {
          client_id: 'gh-id',
          client_secret: 'gh-secret-value',
          organizations: ['acme'],
          teams: ['acme/web'],
        },
      },
      options_passthrough: true,
      inactivity_timeout: 300,
    },
  });
  await client.createRoute(web.id, {
    match_type: 'exact_path',
    match: '/hook',
    description: 'legacy hook, password=hunter22 (rotate me)',
    webhook_verification: { provider: 'stripe', secret: 'whsec-value' },
    backend: { backend_id: 'bkdhr_hook', enabled: false },
    traffic_policy: { value: '{"on_http_request":[]}' },
  });
  // One route per edge may carry an auth module: SSO and OIDC have edges of their own.
  const sso = await client.createHttpsEdge({ hostports: ['sso.example.com:443'] });
  await client.createRoute(sso.id, {
    match_type: 'exact_path',
    match: '/sso',
    saml: { idp_metadata: SAML_XML, force_authn: true },
    compression: { enabled: true },
    websocket_tcp_converter: {},
  });
  const oidc = await client.createHttpsEdge({ hostports: ['oidc.example.com:443'] });
  await client.createRoute(oidc.id, {
    match_type: 'exact_path',
    match: '/oidc',
    oidc: {
      issuer: 'https://issuer.example.com',
      client_id: 'oidc-id',
      client_secret: 'oidc-secret-value',
      scopes: ['openid', 'email'],
    },
  });
  await client.createTlsEdge({
    hostports: ['10.0.0.9:9000'],
    backend: { backend_id: 'bkdtg_tcp' },
    tls_termination: { terminate_at: 'upstream' },
    traffic_policy: { value: 'policy' },
  });
  await client.createTlsEdge({
    metadata: JSON.stringify({ 'edgesync/owner': 'other', 'edgesync/name': 'theirs' }),
    hostports: ['theirs.example.com:443'],
  });
  await client.createBotUser({ name: 'deployer', active: false });
}

describe('edgesync import', () => {
  let server: Server;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let client: ApiClient;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir();
    client = apiClient(server.url, server.apiKey);
    env = apiEnv(server.url, server.apiKey);
    await seedForeign(client);
    // And one edge edgesync owns already.
    const dir = path.join(tmp.dir, 'seed');
    await writeManifests(dir, [
      {
        kind: 'HTTPSEdge',
        name: 'owned',
        protect: true,
        metadata: { team: 'core' },
        hostports: ['owned.example.com:443'],
        routes: [{ match_type: 'path_prefix', match: '/', backend: { backend_id: 'bkdhr_x' } }],
      },
    ]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await tmp.cleanup();
  });

  it('imports owned edges only by default, and the plan right after shows no change', async () => {
    const out = path.join(tmp.dir, 'owned-only');
    const run = await runCli(['import', '--out', out], { env });
    expect(run.code).toBe(0);
    const files = (await readdir(out)).sort();
    expect(files).toEqual(['.edgesync-owner', 'bot-deployer.yaml', 'https-owned.yaml']);
    // The owner the manifests were imported for, where every command reads it.
    expect(await readFile(path.join(out, '.edgesync-owner'), 'utf8')).toBe('default\n');
    // Unmanaged edges are not imported without --all, and the output says how many.
    expect(run.stderr).toMatch(
      /^note: \d+ edges not managed by edgesync were skipped \(import them with --all/m,
    );
    const text = await readFile(path.join(out, 'https-owned.yaml'), 'utf8');
    expect(text.split('\n')[0]).toMatch(
      /^# yaml-language-server: \$schema=.*edgesync\.schema\.json$/,
    );
    expect(text).toContain('protect: true');
    expect(text).not.toMatch(/^id:/m);

    const loaded = await loadManifests(out, { env: {} });
    expect(loaded.diagnostics).toEqual([]);
    if (!loaded.ok) return;
    const plan = buildPlan(loaded.set, await snapshotOf(server.url, server.apiKey));
    expect(plan.changes.filter((c) => c.action !== 'noop')).toEqual([]);
  });

  it('imports foreign edges with --all; the files validate and applying adopts them to convergence', async () => {
    const out = path.join(tmp.dir, 'all');
    const run = await runCli(['import', '--all', '--out', out], { env });
    expect(run.code).toBe(0);
    // Secrets never reach a file or the output; their variables are listed.
    const texts = await Promise.all(
      (await readdir(out)).map((f) => readFile(path.join(out, f), 'utf8')),
    );
    expect(texts).toContain('default\n');
    for (const secret of [
      'hunter22',
      'gh-secret-value',
      'whsec-value',
      'oidc-secret-value',
      'upstream-token-value',
      'api-key-value',
      'cookie-value',
    ]) {
      expect(run.stderr).not.toContain(secret);
      for (const t of texts) expect(t).not.toContain(secret);
    }
    expect(run.stderr).toMatch(/owned by "other", skipped/);
    expect(run.stderr).toMatch(/metadata is not a set of labels/);
    const vars = [...run.stderr.matchAll(/^ {2}(EDGESYNC_[A-Z0-9_]+) {2}\((\S+) (\S+)\)$/gm)];
    expect(vars.map((m) => m[3]).sort()).toEqual([
      'description',
      'oauth.provider.github.client_secret',
      'oidc.client_secret',
      'request_headers.add.Authorization',
      'request_headers.add.X-Api-Key',
      'response_headers.add.set-cookie',
      'webhook_verification.secret',
    ]);
    // A header that is no credential stays in clear; a description that looks like one is
    // moved out to a variable too, with a warning.
    expect(texts.join('\n')).toContain('X-Team: web');
    // A policy sent as JSON text is written as the YAML mapping it holds, not as a string; one
    // that is not a document stays the text it is.
    expect(texts.join('\n')).toMatch(/traffic_policy:\n\s+value:\n\s+on_http_request: \[\]\n/);
    expect(texts.join('\n')).not.toContain('{"on_http_request":[]}');
    expect(texts.join('\n')).toMatch(/traffic_policy:\n\s+value: policy\n/);
    expect(run.stderr).toMatch(
      /^warning: https_edge\.[a-z0-9.-]+\.route\["\/hook"\] description looks like it holds an assignment of a secret/m,
    );
    // Set each variable to the live value it stands for.
    const live = await snapshotOf(server.url, server.apiKey);
    const routes = live.httpsEdges.flatMap((e) => e.routes);
    const secretsEnv: Record<string, string> = {};
    for (const [, name, address, field] of vars) {
      const match = JSON.parse(/route\[(.*)\]$/.exec(address ?? '')?.[1] ?? '""') as string;
      // Several edges have a "/" route: the one where the field holds a string is the one.
      for (const route of routes.filter((r) => r.match === match)) {
        let value: unknown = route;
        for (const key of (field ?? '').split('.')) {
          value = (value as Record<string, unknown> | null)?.[key];
        }
        if (typeof value === 'string') secretsEnv[name as string] = value;
      }
    }

    const validate = await runCli(['validate', out], { env: secretsEnv });
    expect(validate.stderr).toMatch(/valid/);
    expect(validate.code).toBe(0);

    const applied = await runCli(['apply', out, '--yes'], { env: { ...env, ...secretsEnv } });
    expect(applied.stderr).toMatch(/adopt/);
    expect(applied.stderr).toContain('converged');
    expect(applied.code).toBe(0);
    const again = await runCli(['apply', out, '--yes'], { env: { ...env, ...secretsEnv } });
    expect(again.stderr).toContain('nothing to apply');
    expect(again.code).toBe(0);
    // The other owner's edge was left alone.
    const after = await snapshotOf(server.url, server.apiKey);
    expect(after.tlsEdges.find((e) => e.hostports.includes('theirs.example.com:443'))).toEqual(
      live.tlsEdges.find((e) => e.hostports.includes('theirs.example.com:443')),
    );
  });

  it.each([
    ['an invalid --owner', ['--owner', 'not an owner'], 64, /invalid owner id "not an owner"/],
    ['a line break in --schema-url', ['--schema-url', 'x\nkind: TLSEdge'], 64, /--schema-url/],
    ['an --out under a file', ['--out', '<file>/sub'], 1, /cannot create .*: ENOTDIR/],
    ['an --out under /proc', ['--out', '/proc/edgesync-no-such'], 1, /cannot create \/proc/],
  ])('refuses %s with a clear message and writes nothing', async (_what, flags, code, message) => {
    const file = path.join(tmp.dir, 'a-file');
    await writeFile(file, 'x');
    const argv = ['import', ...flags.map((f) => f.replace('<file>', file))];
    const run = await runCli(argv, { env });
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(run.code).toBe(code);
  });

  it('writes the owner once: plan and apply read it from the directory, another --owner is a conflict', async () => {
    const out = path.join(tmp.dir, 'team');
    const { EDGESYNC_OWNER: _chosen, ...noOwner } = env;
    const first = await runCli(['import', '--out', out, '--owner', 'team-web'], { env: noOwner });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(`wrote ${path.join(out, '.edgesync-owner')}`);
    expect(await readFile(path.join(out, '.edgesync-owner'), 'utf8')).toBe('team-web\n');
    // No flag or variable: the owner comes from the file the import wrote.
    const plan = await runCli(['plan', out, '--output', 'json'], { env: noOwner });
    expect(plan.code).toBe(0);
    expect(JSON.parse(plan.stdout).owner).toBe('team-web');
    expect(plan.stderr).not.toContain('no owner chosen');
    const applied = await runCli(['apply', out, '--yes'], { env: noOwner });
    expect(applied.code).toBe(0);
    // Importing again into it as that owner is no conflict over the owner file; another is.
    const other = await runCli(['import', '--out', out, '--owner', 'team-api'], { env: noOwner });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('  .edgesync-owner');
    expect(await readFile(path.join(out, '.edgesync-owner'), 'utf8')).toBe('team-web\n');
  });

  it('refuses to overwrite existing files without --force', async () => {
    const out = path.join(tmp.dir, 'owned-only');
    const before = await readFile(path.join(out, 'https-owned.yaml'), 'utf8');
    const run = await runCli(['import', '--out', out], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/already exist.*--force/s);
    expect(await readFile(path.join(out, 'https-owned.yaml'), 'utf8')).toBe(before);
    const forced = await runCli(['import', '--out', out, '--force'], { env });
    expect(forced.code).toBe(0);
  });
});

describe('edgesync import: cloud endpoints', () => {
  let server: Server;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  const owned = JSON.stringify({ 'edgesync/name': 'site', 'edgesync/owner': 'default' });
  beforeAll(async () => {
    server = await startTestServer({
      agentEndpoints: [{ url: 'https://agent.example.com', metadata: owned }],
    });
    tmp = await tempDir('edgesync-import-ep-');
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('writes ours as CloudEndpoint with the secret as an env reference, never the agent one', async () => {
    const client = apiClient(server.url, server.apiKey);
    try {
      await client.createEndpoint({
        url: 'https://site.example.com',
        metadata: owned,
        traffic_policy: [
          'on_http_request:',
          '  - actions:',
          '      - type: oauth',
          '        config: { provider: google, client_id: cid, client_secret: endpoint-secret-42 }',
          '      - type: custom-response',
          '        config: { status_code: 200 }',
        ].join('\n'),
      });
    } finally {
      await client.close();
    }
    const out = path.join(tmp.dir, 'out');
    const env = apiEnv(server.url, server.apiKey);
    const run = await runCli(['import', '--out', out], { env });
    expect(run.code, run.stderr).toBe(0);
    const files = (await readdir(out)).filter((f) => f.endsWith('.yaml'));
    expect(files).toEqual(['endpoint-site.yaml']);
    const text = await readFile(path.join(out, 'endpoint-site.yaml'), 'utf8');
    expect(text).toContain('kind: CloudEndpoint');
    expect(text).toContain('env: EDGESYNC_CLOUD_ENDPOINT_SITE_');
    for (const output of [text, run.stdout, run.stderr]) {
      expect(output).not.toContain('endpoint-secret-42');
    }
  });
});
