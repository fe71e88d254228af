/**
 * `--target ADDRESS` on `plan` and `apply`, in-process against the local server over loopback:
 * only the named resources are planned and written; a change elsewhere, a new manifest and an
 * orphan are left alone (never deleted unless targeted themselves); a mistyped target is a
 * usage error, never a plan of nothing.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

const tls = (name: string, description = `tcp ${name}`) => ({
  kind: 'TLSEdge',
  name,
  description,
  hostports: [`${name}.example.com:443`],
});

type Plan = { changes: { address: string; action: string }[]; warnings: string[] };

describe('--target', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let client: ApiClient;
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir('edgesync-target-');
    client = apiClient(server.url, server.apiKey);
    env = apiEnv(server.url, server.apiKey);
    dir = path.join(tmp.dir, 'edges');
    await writeManifests(dir, [tls('a'), tls('b'), tls('gone')]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);
    // Then: a and b changed, c new, gone's manifest removed.
    await writeManifests(dir, [tls('a', 'tcp a v2'), tls('b', 'tcp b v2'), tls('c')]);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await tmp.cleanup();
  });

  const described = async () =>
    Object.fromEntries(
      (await snapshotOf(server.url, server.apiKey)).tlsEdges.map((e) => [
        e.hostports[0],
        e.description,
      ]),
    );

  it('plan shows the targeted resources only, and says it is partial', async () => {
    const whole = await runCli(['plan', dir, '-o', 'json'], { env });
    const all = (JSON.parse(whole.stdout) as Plan).changes.filter((c) => c.action !== 'noop');
    expect(all.map((c) => `${c.action} ${c.address}`)).toEqual([
      'update tls_edge.a',
      'update tls_edge.b',
      'create tls_edge.c',
      'delete tls_edge.gone',
    ]);
    const one = await runCli(['plan', dir, '-o', 'json', '--target', 'tls_edge.a'], { env });
    expect(one.code).toBe(0);
    const plan = JSON.parse(one.stdout) as Plan;
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual(['update tls_edge.a']);
    expect(plan.warnings).toContain(
      '--target: only tls_edge.a planned; every other resource is left as it is (plan without --target to see the whole)',
    );
    // An orphan is deleted only when it is the target.
    const orphan = await runCli(['plan', dir, '-o', 'json', '--target', 'tls_edge.gone'], { env });
    expect(
      (JSON.parse(orphan.stdout) as Plan).changes.map((c) => `${c.action} ${c.address}`),
    ).toEqual(['delete tls_edge.gone']);
  });

  it('apply writes the targeted resources and nothing else', async () => {
    const before = await described();
    const applied = await runCli(
      ['apply', dir, '--yes', '--target', 'tls_edge.a', '--target', 'tls_edge.c'],
      { env },
    );
    expect(applied.stderr).toContain('converged');
    expect(applied.code).toBe(0);
    const after = await described();
    expect(after).toEqual({
      'a.example.com:443': 'tcp a v2',
      'b.example.com:443': before['b.example.com:443'],
      'c.example.com:443': 'tcp c',
      'gone.example.com:443': before['gone.example.com:443'],
    });
  });

  it.each([
    [
      ['--target', 'tls_edge.aa'],
      /--target tls_edge\.aa names no resource of the manifests or of owner "default" in the account; did you mean "tls_edge\.a"\?/,
    ],
    [['--target', 'edge.a'], /expected a resource address such as https_edge\.NAME/],
    [['--target', 'tls_edge.a', '--out', 'plan.json'], /--target and --out do not go together/],
  ])('plan %j is a usage error', async (flags, message) => {
    const r = await runCli(['plan', dir, ...flags], { env, cwd: tmp.dir });
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(64);
  });
});
