/**
 * The `afterCycle` hook (edgesync run passes a full garbage collection): it runs once after
 * every cycle, whatever the cycle's result, and a hook that throws never stops the loop. And
 * the collector itself: present only when Node was started with `--expose-gc`.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { fullGarbageCollector } from '../../../src/daemon/memory.js';
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
