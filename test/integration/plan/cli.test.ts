/**
 * `edgesync plan` end to end, in process through `main` (argument parsing, the exit-code map,
 * stdout/stderr), against the local server and real manifest directories.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { main } from '../../../src/cli/main.js';
import { preparePlan } from '../../../src/engine/pipeline.js';
import { planFileSchema } from '../../../src/plan/model.js';
import { startTestServer } from '../../helpers/server.js';
import { type Api, executePlan, removeDir, tempDir, writeManifests } from './helpers.js';

class Capture extends Writable {
  text = '';
  isTTY: boolean;
  constructor(tty = false) {
    super();
    this.isTTY = tty;
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

type Server = Awaited<ReturnType<typeof startTestServer>>;
let server: Server;
let api: Api;
let dir: string;

const MANIFESTS = {
  'edges.yaml': `
kind: TLSEdge
name: db
description: "pipe | and \`ticks\`"
hostports: [10.0.0.5:5432]
backend: { backend_id: bkdtg_1 }
---
kind: HTTPSEdge
name: web
hostports: [web.example.com:443]
routes:
  - match_type: path_prefix
    match: /
    webhook_verification: { provider: stripe, secret: { env: HOOK_SECRET } }
`,
};

beforeAll(async () => {
  server = await startTestServer();
  api = { url: server.url, apiKey: server.apiKey };
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  await removeDir(dir);
});

async function run(argv: string[], env: Record<string, string> = {}, tty = false) {
  const stdout = new Capture(tty);
  const stderr = new Capture(tty);
  const code = await main({
    argv: ['plan', ...argv],
    stdout,
    stderr,
    env: {
      EDGESYNC_API_URL: server.url,
      EDGESYNC_RATE_LIMIT: 'none',
      EDGESYNC_API_KEY: server.apiKey,
      HOOK_SECRET: 'whsec_topsecret',
      ...env,
    },
    cwd: dir,
    signal: new AbortController().signal,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('edgesync plan', () => {
  beforeAll(async () => {
    dir = await tempDir();
  });

  it('prints the text plan on stdout, masks secrets, exits 2 with --detailed-exitcode', async () => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    const plain = await run(['.']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('+ tls_edge.db will be created: not found live');
    expect(plain.stdout).toContain('webhook_verification.secret = (sensitive)');
    expect(plain.stdout).toContain('Plan: 3 to create, 0 to update, 0 to delete, 0 to adopt.');
    expect(plain.stdout).not.toContain('\x1b[');
    expect(`${plain.stdout}${plain.stderr}`).not.toContain('whsec_topsecret');
    expect((await run(['--detailed-exitcode'])).code).toBe(2);
  });

  it.each([
    ['colour on a terminal', {}, true, true],
    ['NO_COLOR set (even empty)', { NO_COLOR: '' }, true, false],
    ['not a terminal', {}, false, false],
  ])('text colour: %s', async (_name, env, tty, coloured) => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    const { stdout } = await run([], env, tty);
    expect(stdout.includes('\x1b[')).toBe(coloured);
  });

  it('--output json and --out write the masked, versioned plan with fingerprints', async () => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    const { code, stdout, stderr } = await run([
      '--output',
      'json',
      '--out',
      'plan.json',
      '--owner',
      'default',
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain('Saved the plan to plan.json');
    const saved = await readFile(path.join(dir, 'plan.json'), 'utf8');
    expect(saved).not.toContain('whsec_topsecret');
    const plan = planFileSchema.parse(JSON.parse(saved));
    expect(plan.fingerprint?.live).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(plan.fingerprint?.manifests).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    // The saved file also records the manifest directory, relative to itself.
    const { manifest_dir, ...savedPlan } = JSON.parse(saved);
    expect(manifest_dir).toBe('.');
    expect(JSON.parse(stdout)).toEqual(savedPlan);
    // A changed secret changes the manifests fingerprint; the live one stays.
    const rotated = planFileSchema.parse(
      JSON.parse((await run(['--output', 'json'], { HOOK_SECRET: 'other' })).stdout),
    );
    expect(rotated.fingerprint?.manifests).not.toBe(plan.fingerprint?.manifests);
    expect(rotated.fingerprint?.live).toBe(plan.fingerprint?.live);
    // Keyed by the API key: the same run is stable, and the same manifests and secret under
    // another key (another empty account) give other digests, so a published plan is no oracle
    // for guessing the secret without the key.
    const again = planFileSchema.parse(JSON.parse((await run(['--output', 'json'])).stdout));
    expect(again.fingerprint).toEqual(plan.fingerprint);
    const other = await startTestServer();
    try {
      const foreign = planFileSchema.parse(
        JSON.parse(
          (
            await run(['--output', 'json'], {
              EDGESYNC_API_URL: other.url,
              EDGESYNC_API_KEY: other.apiKey,
            })
          ).stdout,
        ),
      );
      expect(foreign.fingerprint?.manifests).not.toBe(plan.fingerprint?.manifests);
      expect(foreign.fingerprint?.live).not.toBe(plan.fingerprint?.live);
    } finally {
      await other.close();
    }
  });

  it('--output markdown', async () => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    const md = await run(['--output', 'markdown']);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain(
      '<details><summary>+ <code>tls_edge.db</code> will be created</summary>',
    );
    expect(md.stdout).toContain('+ description = "pipe | and `ticks`"');
    expect(md.stdout).toContain('+ webhook_verification.secret = (sensitive)');
  });

  it.each([
    [
      'no API configured',
      ['.'],
      { EDGESYNC_API_URL: '', EDGESYNC_API_KEY: '' },
      1,
      'no Edge API configured',
    ],
    [
      'a bad --output',
      ['--output', 'yaml'],
      {},
      64,
      '--output must be one of text, json, markdown',
    ],
    ['an unknown flag', ['--frobnicate'], {}, 64, 'frobnicate'],
    ['a bad --max-deletes', ['--max-deletes', '-1'], {}, 64, '--max-deletes'],
    ['a bad --owner', ['--owner', 'no spaces'], {}, 64, 'invalid owner id'],
    ['a missing directory', ['does-not-exist'], {}, 1, 'does-not-exist'],
    [
      'a missing secret',
      ['.'],
      { HOOK_SECRET: '' },
      1,
      'the manifests are invalid, so no plan was made',
    ],
  ])('fails on %s', async (_name, argv, env, code, message) => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    const result = await run(argv, env as Record<string, string>);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it('summarises an invalid set in the words validate uses', async () => {
    dir = await tempDir();
    await writeManifests(dir, {
      ...MANIFESTS,
      'bad.yaml': 'kind: TLSEdge\nname: x\nhostport: [a:1]\n---\nkind: TLSEdge\nname: Y\n',
    });
    const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);
    const planned = await run([]);
    const stdout = new Capture(false);
    const stderr = new Capture(false);
    await main({
      argv: ['validate'],
      stdout,
      stderr,
      env: { HOOK_SECRET: 'whsec_topsecret' },
      cwd: dir,
      signal: new AbortController().signal,
    });
    const validated = lastLine(stderr.text);
    expect(validated).toMatch(/^\d+ errors in 1 file: the manifests are invalid$/);
    expect(lastLine(planned.stderr)).toBe(`${validated}, so no plan was made`);
  });

  it('with --output json, an invalid set is a JSON document of the diagnostics (exit 1)', async () => {
    dir = await tempDir();
    await writeManifests(dir, {
      ...MANIFESTS,
      'bad.yaml': 'kind: TLSEdge\nname: x\nhostport: [a:1]\n',
    });
    const result = await run(['--output', 'json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { valid: boolean; diagnostics: unknown[] };
    expect(report).toMatchObject({
      format_version: 1,
      valid: false,
      diagnostics: [expect.objectContaining({ file: 'bad.yaml', line: 3 })],
    });
    expect(result.stdout).not.toContain('whsec_topsecret');
    expect(result.stderr).toContain('no plan was made');
  });

  it('fails with exit 1 when the API refuses the key', async () => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    const result = await run([], { EDGESYNC_API_KEY: 'esk_wrong' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('401');
    expect(result.stderr).not.toContain('esk_wrong');
  });
});

describe('edgesync plan on a converged account', () => {
  it('exits 0 and says so, even with --detailed-exitcode', async () => {
    dir = await tempDir();
    await writeManifests(dir, MANIFESTS);
    // Converge with the in-memory plan (a saved plan is masked and never executed as such).
    const client = createApiClient({ baseUrl: server.url, apiKey: server.apiKey });
    const prepared = await preparePlan({ dir, client, env: { HOOK_SECRET: 'whsec_topsecret' } });
    await client.close();
    await executePlan(api, prepared.plan);
    const again = await run(['--detailed-exitcode']);
    expect(again.stdout).toBe(
      'edgesync plan for owner "default":\n\nNo changes. Live state matches the manifests.\n',
    );
    expect(again.code).toBe(0);
  });
});
