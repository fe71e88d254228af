/**
 * The write fence is checked as each request leaves, every attempt (in-process reconciler and
 * daemon, local server over HTTP): a write that waits out a `Retry-After`, a backoff or the rate
 * limiter goes out only if this process may still write at that moment. A leader that lost its
 * Lease meanwhile, or a daemon suspended meanwhile, does not send it, and says it was not sent.
 *
 * Time is injected: the client's waits are held by the test (no real sleep), the Lease's clock
 * is a manual one.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { createExchange, type Exchange, type HttpExchange } from '../../../src/api/exchange.js';
import { type ApiClient, createApiClient } from '../../../src/api/index.js';
import { createRateLimiter } from '../../../src/api/rate-limit.js';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createReconciler } from '../../../src/engine/index.js';
import {
  createElector,
  type LeaseRecord,
  type LeaseSpec,
  type LeaseStore,
} from '../../../src/lease/elector.js';
import type { Sleep } from '../../../src/retry.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { ManualClock } from '../../unit/daemon/manual-clock.js';
import {
  cycleInput,
  liveState,
  openScene,
  type ReconcilerScene,
  tlsEdge,
  writeYaml,
} from './helpers.js';

let scene: ReconcilerScene;
let inner: Exchange;
let daemon: Daemon | undefined;

beforeEach(async () => {
  scene = await openScene(33);
  inner = createExchange();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await inner.close();
  await scene.close();
});

/**
 * The client's waits: the first is held until the test lets it end, the later ones end at once;
 * each moves the client's clock on by what it waited.
 */
function heldWaits() {
  let t = 1_000_000;
  const pending: Array<{ ms: number; end: () => void }> = [];
  const sleep: Sleep = (ms) =>
    new Promise<void>((resolve) => {
      if (pending.length > 0) {
        t += ms;
        resolve();
        return;
      }
      pending.push({
        ms,
        end: () => {
          t += ms;
          resolve();
        },
      });
    });
  return { sleep, now: () => t, pending };
}

/**
 * The local server, except that the first PATCH is answered 429 `Retry-After: 8` (not
 * forwarded); every write that reaches the wire is recorded.
 */
function throttleFirstPatch() {
  const writes: string[] = [];
  let refused = false;
  const http: HttpExchange = async (request) => {
    if (request.method !== 'GET') writes.push(`${request.method} ${new URL(request.url).pathname}`);
    if (request.method === 'PATCH' && !refused) {
      refused = true;
      return {
        status: 429,
        headers: { 'retry-after': '8', 'content-type': 'application/json' },
        text: JSON.stringify({ error_code: 'ERR_SVC_226', status_code: 429, msg: 'slow down' }),
      };
    }
    return inner.exchange(request);
  };
  return { http, writes };
}

/** A Lease kept in memory whose store can be cut off (every call then fails). */
function memoryLease(): LeaseStore & { cut: boolean } {
  let lease: LeaseRecord | undefined;
  let version = 0;
  const write = async (spec: LeaseSpec): Promise<LeaseRecord> => {
    if (store.cut) throw new Error('lease store unreachable');
    version += 1;
    lease = { ...spec, version: String(version) };
    return lease;
  };
  const store = {
    cut: false,
    description: 'leases/edgesync in namespace test',
    get: async () => {
      if (store.cut) throw new Error('lease store unreachable');
      return lease;
    },
    create: write,
    replace: write,
  };
  return store;
}

/** The account with edge `a` written as `v1`, converged by a reconciler of its own. */
async function seeded(): Promise<string> {
  const file = path.join(scene.dir, 'a.yaml');
  await writeYaml(file, [tlsEdge('a', { description: 'v1' })]);
  const seed = createReconciler(reconcilerOptions({ client: scene.client }));
  expect((await seed(cycleInput(scene.dir, 'startup'))).result).toBe('changed');
  await writeYaml(file, [tlsEdge('a', { description: 'v2' })]);
  const [edge] = (await liveState(scene.client)).tlsEdges;
  return edge?.id ?? '';
}

async function description(client: ApiClient): Promise<string | null | undefined> {
  return (await liveState(client)).tlsEdges[0]?.description;
}

describe('the fence, as each attempt leaves', () => {
  it('a leader whose PATCH was answered 429 and which then lost its Lease does not send the retry', async () => {
    const id = await seeded();
    const clock = new ManualClock();
    const store = memoryLease();
    const elector = createElector({
      store,
      identity: 'old-leader',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      monotonic: clock.now,
      timers: clock,
    });
    await elector.start();
    expect(elector.isLeader()).toBe(true);
    const waits = heldWaits();
    const wire = throttleFirstPatch();
    const client = createApiClient({
      baseUrl: scene.server.url,
      apiKey: scene.server.apiKey,
      http: wire.http,
      sleep: waits.sleep,
      now: waits.now,
    });
    const step = createReconciler(reconcilerOptions({ client, leadership: elector }));
    const cycle = step(cycleInput(scene.dir, 'resync'));
    await waitFor('the retry to wait out Retry-After', () => waits.pending.length > 0);
    expect(waits.pending[0]?.ms).toBe(8_000);
    expect(wire.writes).toEqual([`PATCH /edges/tls/${id}`]);

    // The Lease cannot be renewed: past the renew deadline this replica no longer leads, and
    // the standby that took over writes.
    store.cut = true;
    await clock.advance(12_000);
    expect(elector.isLeader()).toBe(false);
    await scene.client.updateTlsEdge(id, { description: 'written by the new leader' });

    waits.pending[0]?.end();
    const report = await cycle;
    expect(report).toMatchObject({ result: 'lost_leadership', writes: 0 });
    expect(report.error).toMatch(/not the leader/);
    // The retry never reached the wire: one writer.
    expect(wire.writes).toEqual([`PATCH /edges/tls/${id}`]);
    expect(await description(scene.client)).toBe('written by the new leader');
    await elector.stop();
  });

  it.each([
    ['out a retry', false],
    ['in the rate limiter', true],
  ])(
    'a write waiting %s does not go out after POST /-/suspend answered suspended: true',
    async (_, limited) => {
      const id = await seeded();
      const waits = heldWaits();
      const wire = throttleFirstPatch();
      const client = createApiClient({
        baseUrl: scene.server.url,
        apiKey: scene.server.apiKey,
        http: wire.http,
        sleep: waits.sleep,
        now: waits.now,
        ...(limited
          ? {
              rateLimiter: createRateLimiter(
                { limit: 100, windowMs: 60_000 },
                { now: waits.now, sleep: waits.sleep },
              ),
            }
          : {}),
      });
      const reconcile = createReconciler(
        reconcilerOptions({ client, mode: () => daemon?.mode() ?? 'enforce' }),
      );
      daemon = createDaemon({
        dir: scene.dir,
        reconcile,
        listen: { host: '127.0.0.1', port: 0 },
        watch: false,
        intervalMs: 3_600_000,
      });
      await daemon.start();
      await waitFor('the PATCH to wait out its 429', () => waits.pending.length > 0);
      expect(waits.pending[0]?.ms).toBe(8_000);

      const answer = await fetch(`http://127.0.0.1:${daemon.address?.port}/-/suspend`, {
        method: 'POST',
      });
      expect(await answer.json()).toMatchObject({ suspended: true });
      waits.pending[0]?.end();
      const d = daemon;
      await waitFor('the cycle to end', () => d.status().last_reconcile !== null);
      expect(d.status().last_reconcile).toMatchObject({ result: 'drift', writes: 0 });
      expect(wire.writes).toEqual([`PATCH /edges/tls/${id}`]);
      expect(await description(scene.client)).toBe('v1');
    },
  );
});
