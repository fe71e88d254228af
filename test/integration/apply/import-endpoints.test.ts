/**
 * An account whose cloud endpoints were all made by hand comes into GitOps without deleting and
 * recreating them: `import --all` writes each as a CloudEndpoint manifest carrying `id:` (its
 * policy as a YAML mapping, its secret as an `{ env }` reference), the plan of that directory
 * adopts the endpoint (one PATCH writing the owner mark, the same ID), and the next plan is
 * empty. Without `--all` they are only counted.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir } from './helpers.js';

const WEBHOOK_SECRET = 'hand-made-webhook-secret-19';

let server: Awaited<ReturnType<typeof startTestServer>>;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let handMade: string;
beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir('edgesync-import-endpoints-');
  const client = apiClient(server.url, server.apiKey);
  try {
    const created = await client.createEndpoint({
      url: 'https://hooks.example.com',
      description: 'made in the dashboard',
      traffic_policy: [
        'on_http_request:',
        '  - actions:',
        '      - type: verify-webhook',
        `        config: { provider: github, secret: ${WEBHOOK_SECRET} }`,
        '      - type: forward-internal',
        '        config: { url: "https://hooks.internal" }',
      ].join('\n'),
    });
    handMade = created.id;
  } finally {
    await client.close();
  }
});
afterEach(async () => {
  await server.close();
  await tmp.cleanup();
});

describe('import and adoption of cloud endpoints made by hand', () => {
  it('counts them without --all, and writes nothing for them', async () => {
    const out = path.join(tmp.dir, 'out');
    const run = await runCli(['import', '--out', out], { env: apiEnv(server.url, server.apiKey) });
    expect(run.code, run.stderr).toBe(0);
    expect((await readdir(out)).filter((f) => f.endsWith('.yaml'))).toEqual([]);
    expect(run.stderr).toContain('1 cloud endpoint(s) not managed by edgesync skipped');
    expect(run.stderr).toContain('--all');
  });

  it('imports them with --all carrying id:, the plan adopts them, and the next plan is empty', async () => {
    const out = path.join(tmp.dir, 'out');
    const env = apiEnv(server.url, server.apiKey);
    const run = await runCli(['import', '--out', out, '--all'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect((await readdir(out)).filter((f) => f.endsWith('.yaml'))).toEqual([
      'endpoint-hooks.example.com.yaml',
    ]);
    const text = await readFile(path.join(out, 'endpoint-hooks.example.com.yaml'), 'utf8');
    expect(text).toContain('kind: CloudEndpoint');
    expect(text).toContain(`id: ${handMade}`);
    expect(text).toContain('type: verify-webhook');
    for (const output of [text, run.stdout, run.stderr])
      expect(output).not.toContain(WEBHOOK_SECRET);
    const variable = /env: (EDGESYNC_\w+)/.exec(text)?.[1] as string;
    expect(variable).toMatch(/^EDGESYNC_CLOUD_ENDPOINT_HOOKS_EXAMPLE_COM_/);
    const secretEnv = { [variable]: WEBHOOK_SECRET };

    const loaded = await loadManifests(out, { env: secretEnv });
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    const plan = buildPlan(loaded.set, await snapshotOf(server.url, server.apiKey));
    const change = plan.changes.find((c) => c.address === 'cloud_endpoint.hooks.example.com');
    expect(change?.action).toBe('adopt');
    expect(change?.operations.map((o) => [o.method, o.path, Object.keys(o.body ?? {})])).toEqual([
      ['PATCH', `/endpoints/${handMade}`, ['metadata']],
    ]);

    const applied = await runCli(['apply', '--yes', out], { env: { ...env, ...secretEnv } });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain('converged');
    const live = await snapshotOf(server.url, server.apiKey);
    expect(live.cloudEndpoints.map((e) => e.id)).toEqual([handMade]);
    const mark = parseStoredMetadata(live.cloudEndpoints[0]?.metadata);
    expect([mark?.owner, mark?.name]).toEqual(['default', 'hooks.example.com']);
    expect(live.cloudEndpoints[0]?.traffic_policy).toContain(WEBHOOK_SECRET);
    const next = buildPlan(loaded.set, live);
    expect(next.changes.filter((c) => c.action !== 'noop')).toEqual([]);
    expect(next.blocked).toEqual([]);
  });

  it('refuses an id: naming no endpoint, and creates nothing in its place', async () => {
    const out = path.join(tmp.dir, 'adopt');
    const env = apiEnv(server.url, server.apiKey);
    const run = await runCli(['import', '--out', out, '--all'], { env });
    expect(run.code, run.stderr).toBe(0);
    const file = path.join(out, 'endpoint-hooks.example.com.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(handMade, 'ep_2nosuchendpointnosuchendpoint'));
    const variable = /env: (EDGESYNC_\w+)/.exec(text)?.[1] as string;
    const loaded = await loadManifests(out, { env: { [variable]: WEBHOOK_SECRET } });
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    const plan = buildPlan(loaded.set, await snapshotOf(server.url, server.apiKey));
    expect(plan.blocked).toEqual([
      {
        address: 'cloud_endpoint.hooks.example.com',
        kind: 'guard',
        reason: 'id ep_2nosuchendpointnosuchendpoint: no such cloud endpoint in the account',
      },
    ]);
    expect(plan.changes.filter((c) => c.action !== 'noop')).toEqual([]);
  });
});
