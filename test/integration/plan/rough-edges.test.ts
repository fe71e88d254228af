/**
 * Rough edges found when edgesync was tried as a new user would (issue 14, item 8, in part):
 * a protected edge whose manifest is gone does not make `plan --detailed-exitcode` report
 * changes forever; a route added by hand is "not in the manifest"; an unknown log level is a
 * usage error that lists the levels.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, tempDir, writeManifests } from '../apply/helpers.js';
import { clientFor } from '../server/client.js';

describe('new-user rough edges', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir();
    env = apiEnv(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('a protected edge whose manifest is gone is kept: exit 0, reported as kept', async () => {
    const dir = path.join(tmp.dir, 'protected');
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'keep', hostports: ['keep.example.com:443'], protect: true },
      { kind: 'TLSEdge', name: 'other', hostports: ['other.example.com:443'] },
    ]);
    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'other', hostports: ['other.example.com:443'] },
    ]);
    const plan = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect(plan.code).toBe(0);
    expect(plan.stderr).toContain(
      '1 protected edge kept (manifest gone; protect: true keeps it): tls_edge.keep',
    );
  });

  it('plan --out records the manifest directory, so the printed apply command works', async () => {
    const repo = path.join(tmp.dir, 'repo');
    const dir = path.join(repo, 'edges');
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'saved', hostports: ['saved.example.com:443'] },
    ]);
    const plan = await runCli(['plan', '--out', 'plan.json', 'edges'], { env, cwd: repo });
    expect(plan.code).toBe(0);
    expect(plan.stderr).toContain('apply it with "edgesync apply plan.json"');
    // Applied from elsewhere, by the plan file's path alone: the recorded directory is found
    // relative to the plan file.
    const applied = await runCli(['apply', '--yes', path.join(repo, 'plan.json')], {
      env,
      cwd: tmp.dir,
    });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain('converged');
  });

  it('a route added by hand is reported as not in the manifest', async () => {
    const dir = path.join(tmp.dir, 'routes');
    await writeManifests(dir, [
      {
        kind: 'HTTPSEdge',
        name: 'web',
        hostports: ['web.example.com:443'],
        routes: [{ match_type: 'path_prefix', match: '/' }],
      },
    ]);
    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    const call = clientFor(server, server.apiKey);
    const edges = (await call('GET', '/edges/https')).json.https_edges as {
      id: string;
      hostports: string[];
    }[];
    const web = edges.find((e) => e.hostports.includes('web.example.com:443'));
    await call('POST', `/edges/https/${web?.id}/routes`, {
      match_type: 'exact_path',
      match: '/by-hand',
    });
    const plan = await runCli(['plan', dir], { env });
    expect(plan.stdout).toContain('will be deleted: route not in the manifest');
    expect(plan.stdout).not.toContain('removed from the manifest');
  });

  it('--api-url with another scheme is a usage error; the same in the environment a config error', async () => {
    const flag = await runCli(['plan', '--api-url', 'ftp://x', '--api-key', 'k', tmp.dir], {
      env: {},
    });
    expect([flag.code, flag.stderr]).toEqual([
      64,
      'edgesync plan: --api-url: invalid API URL: scheme ftp: is not http: or https:\n',
    ]);
    const fromEnv = await runCli(['plan', tmp.dir], {
      env: { EDGESYNC_API_URL: 'ftp://x', EDGESYNC_API_KEY: 'k' },
    });
    expect(fromEnv.code).toBe(1);
  });

  it.each([
    [['server'], { EDGESYNC_LOG_LEVEL: 'loud' }, 'EDGESYNC_LOG_LEVEL'],
    [['run', '--log-level', 'verbose', '.'], {}, '--log-level'],
  ])(
    '%j with an unknown log level is a usage error listing the levels',
    async (argv, extra, source) => {
      const run = await runCli(argv, { env: { ...extra }, cwd: tmp.dir });
      expect(run.code).toBe(64);
      expect(run.stderr).toContain(
        `${source} must be one of fatal, error, warn, info, debug, trace, silent`,
      );
      expect(run.stderr).not.toContain('internal error');
    },
  );
});
