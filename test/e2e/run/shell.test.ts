/**
 * The CLI as a shell uses it: a pipe whose reader stops early (`schema | head`, `run | head`)
 * ends the command quietly, `npm start` stopped by Ctrl-C (SIGINT to the whole foreground
 * process group, as a terminal sends it) exits 0, a taken embedded-API port is said, and `plan`
 * with no API configured beside a running daemon names the embedded API and its key file.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { BIN, ROOT, spawnCli, stopChildren, waitFor, waitForLine } from '../../../bench/harness.js';
import { startTestServer } from '../../helpers/server.js';
import { assertBuilt, tempDir, tlsEdge, writeYaml } from '../../integration/run/helpers.js';

const exec = promisify(execFile);

let cleanups: Array<() => Promise<void>> = [];

beforeAll(() => assertBuilt());

afterEach(async () => {
  await stopChildren();
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** Only PATH and HOME from the caller: no EDGESYNC_* of the machine running the tests. */
const baseEnv = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir() });

async function pipeline(script: string, env: Record<string, string> = {}) {
  return exec('bash', ['-o', 'pipefail', '-c', script], {
    cwd: ROOT,
    env: { ...baseEnv(), ...env },
    timeout: 30_000,
  }).then(
    (r) => ({ code: 0, ...r }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

it('edgesync schema | head ends quietly, exit 0', async () => {
  const r = await pipeline(`node ${JSON.stringify(BIN)} schema | head -c 1`);
  expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
    code: 0,
    stdout: '{',
    stderr: '',
  });
});

it('edgesync run | head ends the daemon quietly, exit 0', async () => {
  const server = await startTestServer();
  const tmp = await tempDir();
  cleanups.push(tmp.cleanup, () => server.close());
  await writeYaml(path.join(tmp.dir, 'edges', 'tcp.yaml'), [tlsEdge('db')]);
  const r = await pipeline(
    `node ${JSON.stringify(BIN)} run ${JSON.stringify(path.join(tmp.dir, 'edges'))} --listen 127.0.0.1:0 | head -n 1`,
    { EDGESYNC_API_URL: server.url, EDGESYNC_API_KEY: server.apiKey, EDGESYNC_OWNER: 'default' },
  );
  expect(r.code).toBe(0);
  expect(r.stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
});

it('npm start stopped with Ctrl-C exits 0', async () => {
  const tmp = await tempDir();
  cleanups.push(tmp.cleanup);
  // The README's npm start, on ports of its own and with its state in a temp directory.
  const npm = spawnCli(
    ['--listen', '127.0.0.1:0', '--embedded-port', '0', '--state-dir', path.join(tmp.dir, 'state')],
    { command: ['npm', 'start', '--silent', '--'], cwd: ROOT, env: baseEnv() },
  );
  const status = await waitForLine(npm, /status on (http:\/\/\S+\/status)/, 'the status URL');
  await waitFor('the first reconcile', async () => {
    const res = await fetch(status);
    return ((await res.json()) as { ready: boolean }).ready;
  });
  const exit = await npm.stop('SIGINT');
  expect({ exit, stderr: npm.stderr().includes('Error') }).toEqual({
    exit: { code: 0, signal: null },
    stderr: false,
  });
});

it('says a taken embedded port, and plan beside the daemon says how to reach its API', async () => {
  const tmp = await tempDir();
  cleanups.push(tmp.cleanup);
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const taken = (holder.address() as { port: number }).port;
  await writeYaml(path.join(tmp.dir, 'edges', 'tcp.yaml'), [tlsEdge('db')]);

  const daemon = spawnCli(
    ['run', 'edges', '--listen', '127.0.0.1:0', '--embedded-port', String(taken)],
    { cwd: tmp.dir, env: baseEnv() },
  );
  const url = await waitForLine(
    daemon,
    /embedded Edge API at (http:\/\/\S+) /,
    'the embedded API line',
  );
  expect(daemon.stderr()).toContain(
    `edgesync: port ${taken} is in use by another process; the embedded Edge API listens on port ${new URL(url).port} instead (--embedded-port chooses it)`,
  );

  const plan = await exec(process.execPath, [BIN, 'plan', 'edges'], {
    cwd: tmp.dir,
    env: baseEnv(),
  }).then(
    () => ({ stderr: '' }),
    (err: { stderr: string }) => err,
  );
  expect(plan.stderr).toContain(
    `the daemon running here serves its embedded Edge API at ${url}: EDGESYNC_API_URL=${url} EDGESYNC_API_KEY="$(cat .edgesync/api-key)" edgesync ...`,
  );
  expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });

  // Once the daemon is gone, plan no longer points at it.
  const after = await exec(process.execPath, [BIN, 'plan', 'edges'], {
    cwd: tmp.dir,
    env: baseEnv(),
  }).then(
    () => ({ stderr: '' }),
    (err: { stderr: string }) => err,
  );
  expect(after.stderr).toContain('no Edge API configured');
  expect(after.stderr).not.toContain('embedded Edge API');
});
