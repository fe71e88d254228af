/**
 * The elector's reports follow its fence: when a renewal hangs past the renew deadline, the
 * role turns to standby (and `onChange` says so) at the deadline, not when the request gives up.
 */
import { describe, expect, it } from 'vitest';
import {
  createElector,
  type ElectorStatus,
  type LeaseRecord,
  type LeaseSpec,
  type LeaseStore,
} from '../../../src/lease/elector.js';

/** A manual clock and timer queue. */
function manualTime() {
  let t = 0;
  let seq = 0;
  let queue: Array<{ at: number; seq: number; fn: () => void }> = [];
  return {
    now: () => t,
    timers: {
      setTimeout: (fn: () => void, ms: number) => {
        const e = { at: t + ms, seq: seq++, fn };
        queue.push(e);
        return e;
      },
      clearTimeout: (h: unknown) => {
        queue = queue.filter((e) => e !== h);
      },
    },
    async advance(ms: number) {
      const until = t + ms;
      for (;;) {
        await new Promise<void>((r) => setImmediate(r));
        queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const next = queue[0];
        if (next === undefined || next.at > until) break;
        queue.shift();
        t = next.at;
        next.fn();
      }
      t = until;
      await new Promise<void>((r) => setImmediate(r));
    },
  };
}

function hangableStore(): LeaseStore & { hang: boolean; release: () => void } {
  let lease: LeaseRecord | undefined;
  let version = 0;
  const write = (spec: LeaseSpec): LeaseRecord => {
    version += 1;
    lease = { ...spec, version: String(version) };
    return lease;
  };
  const hung: Array<(err: Error) => void> = [];
  const store = {
    hang: false,
    /** Fails the hanging requests (as a client timeout would). */
    release: () => {
      for (const reject of hung.splice(0)) reject(new Error('timeout'));
    },
    description: 'leases/test in namespace default',
    get: () =>
      store.hang ? new Promise<never>((_, reject) => hung.push(reject)) : Promise.resolve(lease),
    create: async (spec: LeaseSpec) => write(spec),
    replace: async (spec: LeaseSpec) => write(spec),
  };
  return store;
}

describe('elector', () => {
  it('reports standby at the renew deadline while a renewal hangs', async () => {
    const time = manualTime();
    const store = hangableStore();
    const changes: ElectorStatus[] = [];
    const elector = createElector({
      store,
      identity: 'a',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      monotonic: time.now,
      timers: time.timers,
      onChange: (s) => changes.push(s),
    });
    await elector.start();
    expect(elector.status()).toEqual({ role: 'leader', holder: 'a', transitions: 1 });
    await time.advance(1000);
    // Renewals went out at 500 and 1000; from t=1500 they never answer.
    store.hang = true;
    await time.advance(1900);
    expect(elector.isLeader()).toBe(true);
    expect(changes.at(-1)?.role).toBe('leader');
    await time.advance(200);
    expect(elector.isLeader()).toBe(false);
    expect(() => elector.fence()).toThrow(/not the leader/);
    expect(() => elector.fence()).toThrow(
      expect.objectContaining({ code: 'ES_LOST_LEADERSHIP', name: 'LostLeadershipError' }),
    );
    expect(changes.at(-1)).toEqual({ role: 'standby', holder: 'a', transitions: 2 });
    store.release();
    await elector.stop();
  });
});
