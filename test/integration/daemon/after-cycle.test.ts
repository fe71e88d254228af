/**
 * The `afterCycle` hook (edgesync run passes a full garbage collection): it runs once after
 * every cycle, whatever the cycle's result, and a hook that throws never stops the loop. And
 * the collector itself: available without `--expose-gc`, leaving no `gc` global behind.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { fullGarbageCollector } from '../../../src/daemon/memory.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import { CONVERGED, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

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

it('offers a full collector without --expose-gc and leaves no gc global behind', () => {
  const collect = fullGarbageCollector();
  expect(collect).toBeTypeOf('function');
  collect?.();
  expect(runInNewContext('typeof gc')).toBe('undefined');
});
