import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, duplicates, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const shop = (hostports: string[], extra: Record<string, unknown> = {}) => ({
  kind: 'HTTPSEdge',
  name: 'shop',
  description: 'the shop',
  metadata: { team: 'web' },
  hostports,
  routes: [
    {
      match_type: 'path_prefix',
      match: '/',
      backend: { backend_id: 'bkdhr_shop' },
      compression: {},
    },
    {
      match_type: 'exact_path',
      match: '/login',
      backend: { backend_id: 'bkdhr_login' },
      oauth: {
        provider: {
          google: {
            client_id: 'id.apps.example',
            client_secret: { env: 'GOOGLE_SECRET' },
            email_domains: ['example.com'],
          },
        },
      },
    },
  ],
  ...extra,
});

describe('edgesync apply (CLI, in-process, local server)', () => {
  let server: Server;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  const secret = 'google-secret-value-123';

  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir();
    env = { ...apiEnv(server.url, server.apiKey), GOOGLE_SECRET: secret };
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('applies, converges, and the next apply has nothing to do', async () => {
    const dir = path.join(tmp.dir, 'm1');
    await writeManifests(dir, [
      shop(['shop.example.com:443']),
      {
        kind: 'TLSEdge',
        name: 'db',
        hostports: ['10.0.0.5:5432'],
        backend: { backend_id: 'bkdtg_db' },
      },
      { kind: 'BotUser', name: 'ci' },
    ]);
    const first = await runCli(['apply', dir, '--yes'], { env });
    expect(first.stderr).toContain('converged');
    expect(first.code).toBe(0);
    expect(first.stderr).not.toContain(secret);
    expect(first.stderr).not.toContain(server.apiKey);
    // one JSON line per operation: 2 edges + 2 routes + 1 bot user
    const ops = first.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string })
      .filter((l) => l.msg === 'operation');
    expect(ops).toHaveLength(5);

    const second = await runCli(['apply', dir, '--yes'], { env });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('nothing to apply');
    const live = await snapshotOf(server.url, server.apiKey);
    expect(duplicates(live)).toEqual([]);
    expect(live.httpsEdges).toHaveLength(1);
  });

  it('refuses without --yes when not on a terminal, and writes nothing', async () => {
    const dir = path.join(tmp.dir, 'm2');
    await writeManifests(dir, [shop(['shop.example.com:443'], { description: 'changed' })]);
    const before = await snapshotOf(server.url, server.apiKey);
    const run = await runCli(['apply', dir], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Pass --yes/);
    const after = await snapshotOf(server.url, server.apiKey);
    expect(after.httpsEdges).toEqual(before.httpsEdges);
  });

  it.each([
    ['no', 1, /Apply cancelled/, 'unchanged'],
    ['yes', 0, /converged/, 'asked on a terminal'],
  ])('on a terminal, answering "%s" exits %i', async (answer, code, message, description) => {
    const dir = path.join(tmp.dir, `tty-${answer}`);
    await writeManifests(dir, [
      shop(['shop.example.com:443'], { description: 'asked on a terminal' }),
    ]);
    const run = await runCli(['apply', dir], { env, tty: true, input: `${answer}\n` });
    expect(run.stderr).toMatch(/Apply these changes/);
    expect(run.stderr).toMatch(message);
    expect(run.code).toBe(code);
    if (code === 0) {
      // The progress line: [done/total] address, and no JSON log lines on a terminal.
      expect(run.stderr).toMatch(/\[\d+\/\d+\] https_edge\.shop/);
      expect(run.stderr).not.toMatch(/^\{/m);
    }
    expect(run.stderr).not.toContain(secret);
    expect(run.stderr).not.toContain(server.apiKey);
    const live = await snapshotOf(server.url, server.apiKey);
    expect(live.httpsEdges[0]?.description === description).toBe(code === 0);
  });

  it.each([
    [['apply', '--concurrency', '0'], /--concurrency must be a whole number/],
    [['apply', '--rate-limit', 'fast'], /--rate-limit must look like/],
    [['apply', '--nope'], /Unknown option/],
    [['apply', 'a', 'b'], /at most one/],
  ])('%j is a usage error (64)', async (argv, message) => {
    const run = await runCli(argv, { env });
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(message);
  });

  it('applies a saved plan, and refuses it once the live state or the manifests changed', async () => {
    const dir = path.join(tmp.dir, 'saved');
    const planFile = path.join(tmp.dir, 'plan.json');
    const docs = [shop(['shop.example.com:443'], { description: 'saved plan' })];
    await writeManifests(dir, docs);
    expect((await runCli(['plan', dir, '--out', planFile], { env })).code).toBe(0);
    const fresh = await runCli(['apply', planFile, '--dir', dir, '--yes'], { env });
    expect(fresh.stderr).toContain('converged');
    expect(fresh.code).toBe(0);

    // The live state changed since the plan (the apply above changed it).
    const staleLive = await runCli(['apply', planFile, '--dir', dir, '--yes'], { env });
    expect(staleLive.code).toBe(1);
    expect(staleLive.stderr).toMatch(/stale: the live state changed/);

    expect((await runCli(['plan', dir, '--out', planFile], { env })).code).toBe(0);
    await writeManifests(dir, [shop(['shop.example.com:443'], { description: 'edited' })]);
    const staleManifests = await runCli(['apply', planFile, '--dir', dir, '--yes'], { env });
    expect(staleManifests.code).toBe(1);
    expect(staleManifests.stderr).toMatch(/stale: the manifests changed/);
    const live = await snapshotOf(server.url, server.apiKey);
    expect(live.httpsEdges[0]?.description).toBe('saved plan');
  });

  it('applies a saved plan with the owner it was made for, without repeating --owner', async () => {
    const dir = path.join(tmp.dir, 'team-a');
    const planFile = path.join(tmp.dir, 'team-a.json');
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'team-edge', hostports: ['team-a.example.com:443'] },
    ]);
    const plan = await runCli(['plan', dir, '--owner', 'team-a', '--out', planFile], { env });
    expect(plan.code).toBe(0);
    const run = await runCli(['apply', planFile, '--dir', dir, '--yes'], { env });
    expect(run.stderr).toContain('converged');
    expect(run.code).toBe(0);
    const live = await snapshotOf(server.url, server.apiKey);
    const edge = live.tlsEdges.find((e) => e.hostports.includes('team-a.example.com:443'));
    expect(JSON.parse(edge?.metadata ?? '{}')).toMatchObject({ 'edgesync/owner': 'team-a' });
  });

  it('names the manifest directory when a saved plan was made for other manifests', async () => {
    const dir = path.join(tmp.dir, 'elsewhere');
    const planFile = path.join(tmp.dir, 'elsewhere.json');
    await writeManifests(dir, [shop(['shop.example.com:443'], { description: 'saved plan' })]);
    expect((await runCli(['plan', dir, '--out', planFile], { env })).code).toBe(0);
    const other = path.join(tmp.dir, 'empty-cwd');
    await writeManifests(other, []);
    // --dir overrides the directory the plan file recorded.
    const run = await runCli(['apply', planFile, '--yes', '--dir', other], { env, cwd: other });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`stale: the manifests changed`);
    expect(run.stderr).toContain(`(manifests read from ${other}; --dir sets it)`);
  });

  it('apply --dir DIR applies DIR, not the current directory, and refuses two directories', async () => {
    const dir = path.join(tmp.dir, 'by-dir');
    const cwd = path.join(tmp.dir, 'by-dir-cwd');
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'by-dir', hostports: ['by-dir.example.com:443'] },
    ]);
    await writeManifests(cwd, []);
    const run = await runCli(['apply', '--dir', dir, '--yes'], { env, cwd });
    expect(run.stderr).toContain('converged');
    expect(run.code).toBe(0);
    const live = await snapshotOf(server.url, server.apiKey);
    expect(live.tlsEdges.some((e) => e.hostports.includes('by-dir.example.com:443'))).toBe(true);

    const both = await runCli(['apply', cwd, '--dir', dir, '--yes'], { env, cwd });
    expect(both.code).toBe(64);
    expect(both.stderr).toMatch(/names two manifest directories/);
    // The same directory twice is no conflict.
    const same = await runCli(['apply', dir, '--dir', dir, '--yes'], { env, cwd });
    expect(same.code).toBe(0);
  });

  it.each([
    ['a secret file', 'top-secret-value-4711\n', /is not a plan file: not valid JSON/],
    ['binary bytes', '\u0000\u00ff\u0001', /is not a plan file: not valid JSON/],
    ['JSON of another shape', '{"format_version": 2}', /is not an edgesync plan file/],
  ])('refuses %s as a plan file without echoing its content', async (_what, text, message) => {
    const file = path.join(tmp.dir, 'not-a-plan.json');
    await writeFile(file, text);
    const run = await runCli(['apply', file, '--yes'], { env });
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain('top-secret');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('plan --out into a missing directory is a clear error (exit 1)', async () => {
    const dir = path.join(tmp.dir, 'out-missing');
    await writeManifests(dir, [shop(['shop.example.com:443'])]);
    const target = path.join(tmp.dir, 'no-such-dir', 'plan.json');
    const run = await runCli(['plan', dir, '--out', target], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^edgesync plan: cannot write the plan to .*no-such-dir\/plan\.json: ENOENT/m,
    );
    expect(run.stderr).not.toMatch(/internal error/);
  });

  it('writes nothing while any manifest is invalid', async () => {
    const dir = path.join(tmp.dir, 'm3');
    await writeManifests(dir, [
      shop(['shop.example.com:443'], { description: 'would change' }),
      { kind: 'TLSEdge', name: 'Bad Name', hostports: ['x:1'] },
    ]);
    const before = await snapshotOf(server.url, server.apiKey);
    const run = await runCli(['apply', dir, '--yes'], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/nothing was applied/);
    expect(await snapshotOf(server.url, server.apiKey)).toEqual(before);
  });
});
