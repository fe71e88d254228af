/**
 * `edgesync run`'s control flags (in-process, against the local server over loopback): the
 * token from a file or the environment, the admin listener, and the refusals at start.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { main } from '../../../src/cli/main.js';
import type { RunningServer } from '../../../src/server/index.js';
import { Capture } from '../../helpers/capture.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir } from './helpers.js';

const TOKEN = 'run-control-token-abcdef0123456789';

let api: RunningServer & { apiKey: string };
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  api = await startTestServer();
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await api.close();
  await cleanup();
});

function start(extra: string[], env: Record<string, string> = {}) {
  const stdout = new Capture();
  const stderr = new Capture();
  const controller = new AbortController();
  const exited = main({
    argv: ['run', '.', '--listen', '127.0.0.1:0', '--interval', '1h', ...extra],
    stdout,
    stderr,
    env: {
      EDGESYNC_API_URL: api.url,
      EDGESYNC_API_KEY: api.apiKey,
      EDGESYNC_RATE_LIMIT: 'none',
      EDGESYNC_OWNER: 'control-test',
      ...env,
    },
    cwd: dir,
    signal: controller.signal,
  });
  const started = async () =>
    waitFor('the daemon to start', () => stdout.lines().find((l) => l.msg === 'daemon started'));
  return { stdout, stderr, controller, exited, started };
}

const suspend = (base: string, authorization?: string) =>
  fetch(`${base}/-/suspend`, {
    method: 'POST',
    ...(authorization === undefined ? {} : { headers: { authorization } }),
  });

it.each([
  ['--control-token-file', 'file'],
  ['EDGESYNC_CONTROL_TOKEN', 'env'],
])('takes the token from %s and refuses the POSTs without it', async (_name, source) => {
  const file = path.join(dir, 'token');
  await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
  const d =
    source === 'file'
      ? start(['--control-token-file', file])
      : start([], { EDGESYNC_CONTROL_TOKEN: TOKEN });
  const line = await d.started();
  expect(line.control).toBe('token');
  const base = `http://${String(line.listen)}`;
  expect((await suspend(base)).status).toBe(401);
  expect((await suspend(base, 'Bearer nope-nope-nope-nope-nope')).status).toBe(401);
  expect((await suspend(base, `Bearer ${TOKEN}`)).status).toBe(200);
  d.controller.abort();
  expect(await d.exited).toBe(0);
  expect(d.stdout.text + d.stderr.text).not.toContain(TOKEN);
});

it('serves the POSTs on --admin-listen and refuses them on --listen', async () => {
  const d = start(['--admin-listen', '127.0.0.1:0']);
  const line = await d.started();
  expect(line.control).toBe('off');
  const base = `http://${String(line.listen)}`;
  const admin = `http://${String(line.admin_listen)}`;
  expect((await suspend(base)).status).toBe(403);
  expect((await suspend(admin)).status).toBe(200);
  d.controller.abort();
  expect(await d.exited).toBe(0);
});

it.each([
  [['--admin-listen', '0.0.0.0:9091'], {}, 64, /--admin-listen must be a loopback address/],
  [['--admin-listen', '10.1.2.3:9091'], {}, 64, /--admin-listen must be a loopback address/],
  [['--control-token-file', 'missing'], {}, 1, /--control-token-file .*missing: cannot read it/],
  [['--control-token-file', 'empty'], {}, 1, /--control-token-file .*empty: the file is empty/],
  [[], { EDGESYNC_CONTROL_TOKEN: 'short' }, 1, /EDGESYNC_CONTROL_TOKEN: .*at least 16/],
])('refuses %j %j at start (exit %i)', async (argv, env, code, message) => {
  await writeFile(path.join(dir, 'empty'), '\n');
  const d = start(argv, env);
  expect(await d.exited).toBe(code);
  expect(d.stderr.text).toMatch(message);
  expect(d.stderr.text).not.toContain('short');
});

it.each([
  ['--mode observe against a configured API', ['--mode', 'observe'], {}],
  [
    'the embedded server (npm start)',
    ['--embedded-port', '0'],
    { EDGESYNC_API_URL: '', EDGESYNC_API_KEY: '' },
  ],
])(
  'starts without an owner chosen: %s (the default, never writing elsewhere)',
  async (_n, argv, env) => {
    const d = start(argv, { EDGESYNC_OWNER: '', ...env });
    const line = await d.started();
    expect(line.msg).toBe('daemon started');
    d.controller.abort();
    expect(await d.exited).toBe(0);
  },
);
