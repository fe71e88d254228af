/**
 * Exclusion never turns into deletion: a resource that a file `--exclude` skips declares is left
 * as it is live by `plan`, `apply` and the daemon's cycle, for every kind that can be deleted
 * (TLS and HTTPS edges, cloud endpoints). (An excluded file that cannot be read: the loader's
 * and the plan's own tests.)
 * Real local server over HTTP, real directories.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReconciler } from '../../../src/engine/index.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir } from './helpers.js';

const STOREFRONT = `kind: HTTPSEdge
name: storefront
hostports: [shop.example.com:443]
`;

const INTERNAL = `kind: TLSEdge
name: tools-db
hostports: [tools-db.example.com:443]
---
kind: HTTPSEdge
name: tools
hostports: [tools.example.com:443]
---
kind: CloudEndpoint
name: wiki
url: https://wiki.example.com
traffic_policy:
  on_http_request:
    - actions: [{ type: deny }]
`;

describe('--exclude never deletes what the excluded files declare', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  let dir: string;

  const liveNames = async () => {
    const live = await snapshotOf(server.url, server.apiKey);
    return [
      ...live.tlsEdges.map((e) => `tls:${e.hostports.join(',')}`),
      ...live.httpsEdges.map((e) => `https:${e.hostports.join(',')}`),
      ...(live.cloudEndpoints ?? []).map((e) => `endpoint:${e.url}`),
    ].sort();
  };
  const ALL = [
    'endpoint:https://wiki.example.com',
    'https:shop.example.com:443',
    'https:tools.example.com:443',
    'tls:tools-db.example.com:443',
  ];

  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir('edgesync-exclude-keeps-');
    env = { ...apiEnv(server.url, server.apiKey), EDGESYNC_OWNER: 'web' };
    dir = path.join(tmp.dir, 'edges');
    await mkdir(path.join(dir, 'internal'), { recursive: true });
    await mkdir(path.join(dir, 'k8s'), { recursive: true });
    await writeFile(path.join(dir, 'storefront.yaml'), STOREFRONT);
    await writeFile(path.join(dir, 'internal', 'tools.yaml'), INTERNAL);
    const all = await runCli(['apply', dir, '--yes'], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(await liveNames()).toEqual(ALL);
    // Beside them, a Helm template (not YAML) that --exclude is there for: it declares nothing.
    await writeFile(path.join(dir, 'k8s', 'deploy.yaml'), 'metadata: {{ .Values.name }}\n');
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('plan --exclude plans no delete of them, and says they are left alone', async () => {
    const run = await runCli(
      ['plan', dir, '--exclude', 'internal/**', '--exclude', 'k8s/**', '--output', 'json'],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const plan = JSON.parse(run.stdout) as {
      changes: { address: string; action: string }[];
      blocked: { address: string; kind: string; reason: string }[];
    };
    expect(plan.changes.filter((c) => c.action !== 'noop')).toEqual([]);
    expect(plan.blocked.map((b) => [b.address, b.kind])).toEqual([
      ['cloud_endpoint.wiki', 'excluded'],
      ['https_edge.tools', 'excluded'],
      ['tls_edge.tools-db', 'excluded'],
    ]);
    expect(plan.blocked[0]?.reason).toContain('declared in internal/tools.yaml');
    const text = await runCli(
      ['plan', dir, '--exclude', 'internal/**', '--exclude', 'k8s/**', '--detailed-exitcode'],
      { env },
    );
    // Nothing to change: left alone is not a change.
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Excluded (declared in files --exclude skips');
    expect(text.stdout).toContain('0 to delete');
    expect(text.stdout).toContain('3 excluded');
  });

  it('apply --exclude converges and keeps them', async () => {
    const run = await runCli(
      ['apply', dir, '--exclude', 'internal/**', '--exclude', 'k8s/**', '--yes'],
      {
        env,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/converged/);
    expect(await liveNames()).toEqual(ALL);
  });

  it('the daemon cycle with --exclude keeps them', async () => {
    const client = apiClient(server.url, server.apiKey);
    try {
      const reconcile = createReconciler(
        reconcilerOptions({ client, owner: 'web', exclude: ['internal/**', 'k8s/**'] }),
      );
      const report = await reconcile({
        dir,
        revision: undefined,
        reason: 'startup',
        signal: new AbortController().signal,
        assertCurrent: async () => undefined,
      });
      expect(report.error).toBeUndefined();
      expect(report.result).toBe('converged');
      expect(await liveNames()).toEqual(ALL);
    } finally {
      await client.close();
    }
  });

  it('without --exclude, the same files are applied as usual (a removed manifest is deleted)', async () => {
    await writeFile(path.join(dir, 'internal', 'tools.yaml'), INTERNAL.split('---')[0] as string);
    const run = await runCli(['plan', dir, '--exclude', 'k8s/**', '--output', 'json'], { env });
    const plan = JSON.parse(run.stdout) as { changes: { address: string; action: string }[] };
    expect(plan.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([
      'cloud_endpoint.wiki',
      'https_edge.tools',
    ]);
  });
});
