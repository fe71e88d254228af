/**
 * The `afterCycle` hook (edgesync run passes a full garbage collection): it runs once after
 * every cycle, whatever the cycle's result, and a hook that throws never stops the loop. And
 * the collector itself: present only when Node was started with `--expose-gc`. And the daemon's
 * Node flags: the ones `npm start` and the Docker image pass, accepted by this Node.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import {
  DAEMON_NODE_FLAGS,
  fullGarbageCollector,
  missingDaemonFlags,
} from '../../../src/daemon/memory.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { CONVERGED, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

const run = promisify(execFile);

let daemon: Daemon | undefined;
let tmp: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  await removeDir(tmp);
});

it('runs the hook after every cycle, failed or thrown ones included, and survives its throws', async () => {
  tmp = await makeTempDir('daemon-after');
  const dir = path.join(tmp, 'm');
  await fs.mkdir(dir);
  const { calls, reconcile } = recorder((_input, i) => {
    if (i === 1) throw new Error('boom');
    return i === 2 ? { ...CONVERGED, result: 'error', error: 'GET /edges/tls: 503' } : CONVERGED;
  });
  let hooks = 0;
  daemon = createDaemon({
    dir,
    reconcile,
    listen: false,
    watch: false,
    intervalMs: 3_600_000,
    backoff: { baseMs: 3_600_000, maxMs: 3_600_000 },
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    afterCycle: () => {
      hooks += 1;
      // Reported cycles are recorded before the hook runs.
      expect(daemon?.status().last_reconcile).not.toBeNull();
      if (hooks === 2) throw new Error('hook failure');
    },
  });
  await daemon.start();
  for (let n = 1; n <= 4; n++) {
    await waitFor(`cycle ${n} and its hook`, () => calls.length === n && hooks === n);
    if (n < 4) daemon.trigger();
  }
  expect(daemon.status().last_reconcile?.result).toBe('converged');
});

it('offers no collector without --expose-gc, and never switches the flag on at run time', () => {
  expect(fullGarbageCollector()).toBeUndefined();
  expect(runInNewContext('typeof gc')).toBe('undefined');
});

it('offers a full collector when Node was started with --expose-gc', async () => {
  assertFreshBuild();
  const memory = pathToFileURL(path.resolve('dist/src/daemon/memory.js')).href;
  const script = `const m = await import(${JSON.stringify(memory)}); const c = m.fullGarbageCollector(); c(); console.log(typeof c);`;
  const { stdout } = await run(process.execPath, [
    '--expose-gc',
    '--input-type=module',
    '-e',
    script,
  ]);
  expect(stdout.trim()).toBe('function');
});

it("npm start and the Docker image start the daemon with exactly the daemon's Node flags", async () => {
  const pkg = JSON.parse(await fs.readFile('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  // `exec`: npm's shell hands its place to Node, so a Ctrl-C reaches the daemon alone and npm
  // exits with the daemon's status (a shell in between dies of the SIGINT itself: status 130).
  expect(pkg.scripts.start).toBe(
    `exec node ${DAEMON_NODE_FLAGS.join(' ')} bin/edgesync.js run config-examples/edges`,
  );
  const dockerfile = await fs.readFile('Dockerfile', 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  expect(JSON.parse(entrypoint ?? 'null')).toEqual([
    'node',
    ...DAEMON_NODE_FLAGS,
    '/app/bin/edgesync.js',
    'run',
  ]);
});

it("this Node accepts the daemon's flags, and a process started with them misses none", async () => {
  assertFreshBuild();
  const memory = pathToFileURL(path.resolve('dist/src/daemon/memory.js')).href;
  const script = `const m = await import(${JSON.stringify(memory)}); console.log(JSON.stringify(m.missingDaemonFlags()), typeof m.fullGarbageCollector());`;
  const { stdout } = await run(process.execPath, [
    ...DAEMON_NODE_FLAGS,
    '--input-type=module',
    '-e',
    script,
  ]);
  expect(stdout.trim()).toBe('[] function');
});

it('names the flags a process was started without, from its command line or NODE_OPTIONS', () => {
  expect(missingDaemonFlags([], '')).toEqual([...DAEMON_NODE_FLAGS]);
  expect(missingDaemonFlags([...DAEMON_NODE_FLAGS], '')).toEqual([]);
  expect(
    missingDaemonFlags(['--heap-growing-percent=25'], '--expose-gc  --max-semi-space-size=8'),
  ).toEqual([]);
  expect(missingDaemonFlags(['--heap-growing-percent=50', '--expose-gc'], '')).toEqual([
    '--heap-growing-percent=25',
    '--max-semi-space-size=8',
  ]);
});
