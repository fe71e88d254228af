/**
 * createDaemon on a hand-driven clock (the real file system, no HTTP, no watcher): the status
 * document follows the backoff sequence exactly, and a success resets it.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import type { ReconcileReport } from '../../../src/daemon/types.js';
import { ManualClock } from '../../unit/daemon/manual-clock.js';
import { CONVERGED, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

let daemon: Daemon | undefined;
let tmp: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  await removeDir(tmp);
});

it('reports the backoff sequence in /status and resets it on success', async () => {
  tmp = await makeTempDir('daemon-clock');
  const dir = path.join(tmp, 'm');
  await fs.mkdir(dir);
  const clock = new ManualClock();
  let answer: ReconcileReport = { ...CONVERGED, result: 'error', error: 'GET /edges/tls: 503' };
  const { calls, reconcile } = recorder(() => answer);
  daemon = createDaemon({
    dir,
    reconcile,
    listen: false,
    watch: false,
    intervalMs: 60_000,
    resyncJitter: 0,
    backoff: { baseMs: 1000, maxMs: 4000 },
    timers: clock,
    now: clock.now,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
  });
  await daemon.start();
  // Resolution and the reconcile are real I/O: wait for the next cycle to be recorded and the
  // loop to be idle again before reading the clock (a condition, never a fixed time).
  let cycles = 0;
  const settle = async () => {
    cycles += 1;
    const want = cycles;
    await waitFor(`cycle ${want} recorded`, async () => {
      await clock.advance(0);
      return (
        calls.length >= want &&
        daemon?.status().in_flight === false &&
        daemon.status().last_reconcile !== null
      );
    });
  };
  const seen: Array<[number, number, string | null]> = [];
  for (let i = 0; i < 5; i++) {
    await settle();
    const s = daemon.status();
    seen.push([s.consecutive_failures, s.backoff_ms, s.next_resync_at]);
    if (i < 4) await clock.advance(s.backoff_ms);
  }
  expect(seen).toEqual([
    [1, 1000, new Date(1000).toISOString()],
    [2, 2000, new Date(3000).toISOString()],
    [3, 4000, new Date(7000).toISOString()],
    [4, 4000, new Date(11_000).toISOString()],
    [5, 4000, new Date(15_000).toISOString()],
  ]);
  expect(daemon.status().last_error?.message).toBe('GET /edges/tls: 503');

  answer = CONVERGED;
  await clock.advance(4000);
  await settle();
  const s = daemon.status();
  expect(s).toMatchObject({
    consecutive_failures: 0,
    backoff_ms: 0,
    ready: true,
    last_error: null,
    next_resync_at: new Date(15_000 + 60_000).toISOString(),
  });
  expect(calls.map((c) => c.reason)).toEqual([
    'startup',
    'retry',
    'retry',
    'retry',
    'retry',
    'retry',
  ]);
});

it('stretches the resync interval so resyncs use at most their share of the API budget', async () => {
  tmp = await makeTempDir('daemon-clock');
  const dir = path.join(tmp, 'm');
  await fs.mkdir(dir);
  const clock = new ManualClock();
  // 10,000 edges: 50 + 50 edge list pages and one of bot users.
  const { calls, reconcile } = recorder(() => ({ ...CONVERGED, listCalls: 101 }));
  daemon = createDaemon({
    dir,
    reconcile,
    listen: false,
    watch: false,
    intervalMs: 60_000,
    resyncJitter: 0,
    resyncBudget: { share: 0.25, budget: { limit: 120, windowMs: 60_000 } },
    timers: clock,
    now: clock.now,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
  });
  await daemon.start();
  await waitFor('the first cycle', async () => {
    await clock.advance(0);
    return calls.length === 1 && daemon?.status().in_flight === false;
  });
  // 101 calls in a quarter of 120 per minute: one resync every 202 s, not every 60 s.
  const s = daemon.status();
  expect(s.resync_interval_ms).toBe(202_000);
  expect(s.next_resync_at).toBe(new Date(clock.now() + 202_000).toISOString());
  expect(await daemon.metrics.render()).toMatch(/^edgesync_resync_interval_seconds 202$/m);
});

it('spreads each resync interval by up to 10% either way (seeded)', async () => {
  tmp = await makeTempDir('daemon-clock');
  const dir = path.join(tmp, 'm');
  await fs.mkdir(dir);
  const clock = new ManualClock();
  const draws = [0.75, 0, 0.999];
  const { calls, reconcile } = recorder(() => CONVERGED);
  daemon = createDaemon({
    dir,
    reconcile,
    listen: false,
    watch: false,
    intervalMs: 60_000,
    random: () => draws.shift() ?? 0.5,
    timers: clock,
    now: clock.now,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
  });
  await daemon.start();
  const gaps: number[] = [];
  for (let n = 1; n <= 3; n++) {
    await waitFor(`cycle ${n}`, async () => {
      await clock.advance(0);
      return calls.length === n && daemon?.status().in_flight === false;
    });
    const next = Date.parse(daemon.status().next_resync_at ?? '');
    gaps.push(next - clock.now());
    await clock.advance(next - clock.now());
  }
  expect(gaps).toEqual([63_000, 54_000, 65_988]);
});
