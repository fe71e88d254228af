/**
 * Issue 14, the operator's CLI against the real local server over HTTP: `--exclude`,
 * `apply --output json`, `help <command>` and "did you mean" for unknown flags.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReconciler } from '../../../src/engine/index.js';
import { createLogger } from '../../../src/log.js';
import { manifestJsonSchemaText } from '../../../src/manifest/jsonschema.js';
import { createValueMask } from '../../../src/manifest/secrets.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, tempDir, writeManifests } from './helpers.js';

describe('operator CLI', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir('edgesync-ops-');
    env = apiEnv(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('--exclude leaves other YAML beside the edges unread (validate, plan, apply)', async () => {
    const dir = path.join(tmp.dir, 'exclude');
    await writeManifests(dir, [{ kind: 'TLSEdge', name: 'ex', hostports: ['ex.example.com:443'] }]);
    await mkdir(path.join(dir, 'k8s'), { recursive: true });
    await writeFile(
      path.join(dir, 'k8s', 'deploy.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\n',
    );
    await writeFile(path.join(dir, 'build.ci.yaml'), 'on: push\n');

    const plain = await runCli(['validate', dir], { env });
    expect(plain.code).toBe(1);
    const excluded = await runCli(
      ['validate', '--exclude', 'k8s/**', '--exclude', '**/*.ci.yaml', dir],
      { env },
    );
    expect(excluded.code, excluded.stderr).toBe(0);
    expect(excluded.stderr).toContain('1 manifest valid');
    const fromEnv = await runCli(['plan', '--owner', 'ex', dir], {
      env: { ...env, EDGESYNC_EXCLUDE: 'k8s/**,*.ci.yaml' },
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toContain('tls_edge.ex');

    const json = await runCli(
      [
        'apply',
        '--yes',
        '--owner',
        'ex',
        '--output',
        'json',
        '--exclude',
        'k8s/**',
        '--exclude',
        '*.ci.yaml',
        dir,
      ],
      { env },
    );
    expect(json.code, json.stderr).toBe(0);
    const result = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(result).toMatchObject({
      format_version: 1,
      status: 'converged',
      converged: true,
      operations: { total: 1, done: 1, failed: 0, skipped: 0 },
      writes: 1,
      errors: [],
    });
  });

  it('import: $schema is relative inside one repository, else a copy travels with the files', async () => {
    const dir = path.join(tmp.dir, 'imp-src');
    await writeManifests(dir, [
      { kind: 'TLSEdge', name: 'imp', hostports: ['imp.example.com:443'] },
    ]);
    expect((await runCli(['apply', '--yes', '--owner', 'imp', dir], { env })).code).toBe(0);

    // Another repository than this package's: a relative path would break once committed.
    const repo = path.join(tmp.dir, 'infra');
    await mkdir(path.join(repo, '.git'), { recursive: true });
    const out = path.join(repo, 'edges', 'prod');
    const first = await runCli(['import', '--owner', 'imp', '--out', out], { env });
    expect(first.code, first.stderr).toBe(0);
    const text = await readFile(path.join(out, 'tls-imp.yaml'), 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./edgesync.schema.json');
    expect(await readFile(path.join(out, 'edgesync.schema.json'), 'utf8')).toBe(
      manifestJsonSchemaText(),
    );
    expect(first.stderr).toContain('imported 1 resource(s)');
    // The same copy already there is no conflict.
    const again = await runCli(['import', '--owner', 'imp', '--out', path.join(repo, 'other')], {
      env,
    });
    expect(again.code).toBe(0);

    // Inside this package's own repository: a relative path to schema/ (it is committed there).
    const own = await mkdtemp(path.join(process.cwd(), 'test-import-'));
    try {
      const inRepo = await runCli(['import', '--owner', 'imp', '--out', own], { env });
      expect(inRepo.code, inRepo.stderr).toBe(0);
      const line = (await readFile(path.join(own, 'tls-imp.yaml'), 'utf8')).split('\n')[0];
      expect(line).toBe('# yaml-language-server: $schema=../schema/edgesync.schema.json');
      // No schema copy: the manifest and the owner file only.
      expect((await readdir(own)).sort()).toEqual(['.edgesync-owner', 'tls-imp.yaml']);
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it('apply --output json reports manifest errors and nothing-to-do', async () => {
    const dir = path.join(tmp.dir, 'json');
    await writeManifests(dir, [{ kind: 'TLSEdge', name: 'bad', hostports: ['nope'] }]);
    const invalid = await runCli(['apply', '--yes', '--owner', 'js', '-o', 'json', dir], { env });
    expect(invalid.code).toBe(1);
    const report = JSON.parse(invalid.stdout) as { status: string; diagnostics: unknown[] };
    expect(report.status).toBe('invalid');
    expect(report.diagnostics.length).toBeGreaterThan(0);

    await writeManifests(dir, []);
    const none = await runCli(
      ['apply', '--yes', '--owner', 'js', '--allow-empty', '-o', 'json', dir],
      {
        env,
      },
    );
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ status: 'converged', writes: 0 });
  });

  it("help <command> prints that command's help; unknown flags get a suggestion", async () => {
    const help = await runCli(['help', 'plan']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: edgesync plan/);
    for (const name of ['run', 'server', 'validate', 'apply', 'import', 'schema', 'release']) {
      const out = await runCli(['help', name]);
      expect(out.code, name).toBe(0);
      expect(out.stdout, name).toMatch(new RegExp(`^usage: edgesync ${name}`));
    }
    const unknown = await runCli(['help', 'plna']);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('did you mean "plan"?');

    for (const [argv, hint] of [
      [['plan', '--max-delete', '3'], '--max-deletes'],
      [['run', '--intervall', '5s'], '--interval'],
      [['server', '--prot', '0'], '--port'],
      [['validate', '--exclud', 'x'], '--exclude'],
    ] as const) {
      const out = await runCli(argv, { env });
      expect(out.code, argv.join(' ')).toBe(64);
      expect(out.stderr, argv.join(' ')).toContain(`did you mean ${hint}?`);
    }
  });
});

describe('a name read from env', () => {
  it('is masked in plan (text, JSON, Markdown, --out), apply output and its JSON result', async () => {
    const server = await startTestServer();
    const tmp = await tempDir('edgesync-mask-');
    try {
      const env = { ...apiEnv(server.url, server.apiKey), EDGE_NAME: 'hidden-shop-7f3a' };
      const dir = path.join(tmp.dir, 'edges');
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, 'edge.yaml'),
        'kind: TLSEdge\nname: { env: EDGE_NAME }\nhostports: [shop.example.com:443]\n',
      );
      const outputs: string[] = [];
      for (const output of ['text', 'json', 'markdown']) {
        const plan = await runCli(['plan', '--output', output, dir], { env });
        expect(plan.code, plan.stderr).toBe(0);
        expect(plan.stdout).toContain('(sensitive)');
        outputs.push(plan.stdout, plan.stderr);
      }
      const saved = await runCli(['plan', '--out', path.join(tmp.dir, 'plan.json'), dir], { env });
      expect(saved.code).toBe(0);
      outputs.push(await readFile(path.join(tmp.dir, 'plan.json'), 'utf8'));
      const applied = await runCli(['apply', '--yes', '--output', 'json', dir], { env });
      expect(applied.code, applied.stderr).toBe(0);
      expect(JSON.parse(applied.stdout)).toMatchObject({ status: 'converged' });
      // Not on a terminal: one JSON log line per operation on stderr, masked too.
      expect(applied.stderr).toContain('"address":"tls_edge.(sensitive)"');
      outputs.push(applied.stdout, applied.stderr);
      const again = await runCli(['apply', '--yes', path.join(tmp.dir, 'plan.json')], { env });
      expect(again.code, again.stderr).toBe(1); // stale: the live state changed since
      outputs.push(again.stdout, again.stderr);
      for (const text of outputs) expect(text).not.toContain('hidden-shop-7f3a');
    } finally {
      await server.close();
      await tmp.cleanup();
    }
  });
});

describe('a daemon cycle', () => {
  it('masks a name read from env in its log lines and its report (per-resource status), and reads no excluded file', async () => {
    const server = await startTestServer();
    const tmp = await tempDir('edgesync-cycle-');
    const client = apiClient(server.url, server.apiKey);
    try {
      const dir = path.join(tmp.dir, 'edges');
      await mkdir(path.join(dir, 'k8s'), { recursive: true });
      await writeFile(
        path.join(dir, 'edge.yaml'),
        'kind: TLSEdge\nname: { env: EDGE_NAME }\nhostports: [cycle.example.com:443]\n',
      );
      await writeFile(path.join(dir, 'k8s', 'svc.yaml'), 'kind: Service\n');
      let lines = '';
      const destination = new Writable({
        write(chunk, _enc, cb) {
          lines += String(chunk);
          cb();
        },
      });
      const mask = createValueMask();
      const reconcile = createReconciler({
        client,
        owner: 'default',
        allowEmpty: false,
        maxDeletes: 10,
        concurrency: 1,
        env: { EDGE_NAME: 'cycle-secret-name' },
        secretDirs: [],
        exclude: ['k8s/**'],
        mask,
        logger: createLogger({ level: 'debug', destination, mask: mask.apply }),
      });
      const report = await reconcile({
        dir,
        revision: undefined,
        reason: 'startup',
        signal: new AbortController().signal,
        assertCurrent: async () => undefined,
      });
      expect(report.result, report.error).toBe('changed');
      expect(lines).toContain('tls_edge.(sensitive)');
      expect(lines).not.toContain('cycle-secret-name');
      // The per-resource status and events are made from the report: masked there too.
      expect(JSON.stringify(report.resources)).toContain('tls_edge.(sensitive)');
      expect(JSON.stringify(report)).not.toContain('cycle-secret-name');
    } finally {
      await client.close();
      await server.close();
      await tmp.cleanup();
    }
  });
});
