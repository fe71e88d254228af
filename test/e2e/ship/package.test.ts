/**
 * The package installs: `npm pack` of the built tree, installed into an empty project as a user
 * would (`npm i ./edgesync-<version>.tgz`, offline: the npm cache that `npm ci` filled holds every
 * dependency), gives a working `npx edgesync`: --version, validate, plan against a spawned
 * `npx edgesync server`, and the daemon converging the account against it.
 */
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ServerChild,
  startDaemonChild,
  startServerChild,
  waitForCycle,
} from '../../../bench/harness.js';
import { assertFreshBuild } from '../../helpers/built.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
};

let tmp: string;
let project: string;
let server: ServerChild | undefined;
const env = { ...process.env, npm_config_offline: 'true', NO_COLOR: '1' };
const opts = (): SpawnSyncOptions => ({ cwd: project, env, encoding: 'utf8' });

function npx(...argv: string[]) {
  return spawnSync('npx', ['edgesync', ...argv], { ...opts(), encoding: 'utf8' });
}

function sh(command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.status}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  assertFreshBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'edgesync-pack-'));
  chmodSync(tmp, 0o755);
  // --ignore-scripts: `prepare` would rebuild dist/ under the other test files' feet; the
  // freshness check above stands in for it.
  sh('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp], ROOT);
  project = path.join(tmp, 'consumer');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), '{ "name": "consumer", "private": true }\n');
  const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack wrote no tarball');
  sh('npm', ['i', '--no-audit', '--no-fund', path.join('..', tarball)], project);
  cpSync(path.join(ROOT, 'config-examples', 'edges'), path.join(project, 'edges'), {
    recursive: true,
  });
}, 600_000);

afterAll(async () => {
  await server?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 120_000);

describe('the packed package, installed into an empty project', () => {
  it('ships the executable, the bundle and the schema, and no sources or tests', () => {
    const installed = path.join(project, 'node_modules', 'edgesync');
    const files = readdirSync(installed, { recursive: true, encoding: 'utf8' })
      .map((f) => f.split(path.sep).join('/'))
      .filter((f) => !f.startsWith('node_modules/'));
    expect(files).toEqual(
      expect.arrayContaining(['LICENSE', 'package.json', 'bin/edgesync.js', 'dist/bundle/main.js']),
    );
    expect(files.filter((f) => /^(src|test|bench|dist\/src)(\/|$)/.test(f))).toEqual([]);
  });

  it('reports the version of package.json', () => {
    const r = npx('--version');
    expect(r.stdout).toBe(`${PKG.version}\n`);
  });

  it('validates, plans against `npx edgesync server`, and runs the daemon to convergence', async () => {
    const validate = npx('validate', 'edges');
    expect(validate.status, validate.stderr).toBe(0);
    server = await startServerChild({ command: ['npx', 'edgesync'], cwd: project, env });
    const auth = ['--api-url', server.url, '--api-key', server.apiKey];
    const plan = npx('plan', 'edges', '--detailed-exitcode', ...auth);
    expect(plan.status, plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/create/);
    // The installed executable itself, which `npx edgesync` runs: SIGTERM must reach it.
    const bin = path.join(project, 'node_modules', '.bin', 'edgesync');
    const daemon = await startDaemonChild({
      command: [bin],
      args: ['edges', '--owner', 'default', ...auth],
      cwd: project,
      // The client's own budget, as a user's shell would have it.
      env: { ...env, EDGESYNC_RATE_LIMIT: process.env.EDGESYNC_RATE_LIMIT },
    });
    try {
      // Polled through /status (a plan per poll would start npx each time), then checked by a plan.
      await waitForCycle(daemon, 0, (s) => s.last_reconcile?.result === 'changed', 120_000);
      expect(npx('plan', 'edges', '--detailed-exitcode', ...auth).status).toBe(0);
    } finally {
      await daemon.stop('SIGTERM');
    }
    expect((await daemon.exited).code).toBe(0);
  }, 300_000);
});
