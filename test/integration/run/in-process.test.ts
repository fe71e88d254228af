/**
 * `edgesync run` in-process through `main()` (the child-process tests cover signals and exit;
 * these cover the command's wiring): flags to daemon, the reconcile step, the HTTP listener,
 * shutdown on the abort signal with exit code 0.
 */
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { main } from '../../../src/cli/main.js';
import { missingDaemonFlags } from '../../../src/daemon/memory.js';
import type { RunningServer } from '../../../src/server/index.js';
import { Capture } from '../../helpers/capture.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { tempDir, tlsEdge, writeYaml } from './helpers.js';

let server: RunningServer & { apiKey: string };
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  server = await startTestServer();
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await server.close();
  await cleanup();
});

it('reconciles, serves /status, and stops with exit 0 when its signal aborts', async () => {
  await writeYaml(path.join(dir, 'edges', 'db.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
  const stdout = new Capture();
  const stderr = new Capture();
  const controller = new AbortController();
  const exited = main({
    argv: ['run', 'edges', '--listen', '127.0.0.1:0', '--interval', '1h', '--concurrency', '2'],
    stdout,
    stderr,
    env: {
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
      EDGESYNC_RATE_LIMIT: 'none',
    },
    cwd: dir,
    signal: controller.signal,
  });
  await waitFor('the first cycle', () => stdout.lines().some((l) => l.msg === 'reconcile changed'));
  expect(writesAt(server)).toBe(2);
  const started = stdout.lines().find((l) => l.msg === 'daemon started');
  const status = await fetch(`http://${String(started?.listen)}/status`);
  expect(await status.json()).toMatchObject({
    ready: true,
    last_reconcile: { result: 'changed', writes: 2 },
  });
  controller.abort();
  expect(await exited).toBe(0);
  expect(stdout.lines().some((l) => l.msg === 'daemon stopped')).toBe(true);
  // This worker was not started with the daemon's Node flags: said once, naming them.
  const missing = missingDaemonFlags();
  const flagLines = stdout.lines().filter((l) => l.missing_node_flags !== undefined);
  expect(flagLines.map((l) => l.missing_node_flags)).toEqual(missing.length > 0 ? [missing] : []);
  // The API key given through the environment never reaches a log line.
  expect(stdout.text).not.toContain(server.apiKey);
  expect(stderr.text).not.toContain(server.apiKey);
});

it('a usage error exits 64 before anything starts', async () => {
  const stderr = new Capture();
  const code = await main({
    argv: ['run', '--interval', '0'],
    stdout: new Capture(),
    stderr,
    env: {},
    cwd: dir,
    signal: new AbortController().signal,
  });
  expect(code).toBe(64);
  expect(stderr.text).toContain('--interval must be greater than 0');
});
