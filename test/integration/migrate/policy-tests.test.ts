/**
 * `migrate` writes the policy tests that prove it: the shipped edge examples, migrated, carry
 * cases of what each edge did (routes, logins, IP restrictions, webhook checks), and
 * `edgesync test` passes them on the migrated policies; a migrated policy that loses its IP
 * restriction fails them.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../apply/helpers.js';

const repo = path.resolve(import.meta.dirname, '../../..');
let root: string;
let out: string;
/** The migrated SNS webhook's topic owner, which `migrate` leaves as a reference to fill in. */
const SECRETS = { SNS_TOPIC_OWNER: '123456789012' };

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'edgesync-migrate-tests-'));
  out = path.join(root, 'endpoints');
  const run = await runCli(
    [
      'migrate',
      path.join(repo, 'config-examples/edges'),
      '--out',
      out,
      '--backends',
      path.join(repo, 'config-examples/migrate/backends.yaml'),
      '--exclude',
      'internal/**',
      '--exclude',
      'tcp-services.yaml',
      '--allow-lossy',
    ],
    { cwd: repo },
  );
  expect(run.code).toBe(0);
  // The examples' { file } references, beside the migrated manifests as the guide says.
  await cp(path.join(repo, 'config-examples/edges/secrets'), path.join(out, 'secrets'), {
    recursive: true,
  });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('migrate writes the tests that prove it', () => {
  it('the migrated examples pass their generated tests', async () => {
    const text = await readFile(path.join(out, 'storefront.yaml'), 'utf8');
    expect(text).toContain('name: "route /api: refused outside its IP policies"');
    expect(text).toContain('auth: google');
    const run = await runCli(['test', out], { cwd: repo, env: SECRETS });
    expect(run.stderr).toMatch(/(\d+) policy tests, \1 passed, 0 failed/);
    expect(run.code).toBe(0);
    expect((await runCli(['validate', out], { cwd: repo, env: SECRETS })).code).toBe(0);
  });

  it('a migrated policy that loses its IP restriction fails them', async () => {
    const file = path.join(out, 'storefront.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replaceAll('enforce: true', 'enforce: false'));
    const run = await runCli(['test', out], { cwd: repo, env: SECRETS });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'route /api: refused outside its IP policies: expected refused by restrict-ips, status 403; got',
    );
    await writeFile(file, text);
  });
});
