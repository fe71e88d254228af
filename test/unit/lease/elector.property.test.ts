/**
 * A model test of the elector (fast-check, fixed seed): three replicas on a simulated clock
 * share an in-memory Lease store whose requests take random time (the change lands somewhere
 * inside the request), replicas crash, restart, stop gracefully, have their wall clocks
 * stepped, and lose requests. Invariant: at no instant do two live replicas both consider
 * themselves the leader (their valid windows never overlap), and some replica leads at the end
 * once the storm is over.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeaseConflictError } from '../../../src/errors.js';
import {
  createElector,
  type Elector,
  type LeaseRecord,
  type LeaseSpec,
  type LeaseStore,
} from '../../../src/lease/elector.js';

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

class Sim {
  t = 0;
  #seq = 0;
  #queue: Event[] = [];
  at(ms: number, run: () => void): Event {
    const e = { at: this.t + Math.max(0, ms), seq: this.#seq++, run };
    this.#queue.push(e);
    return e;
  }
  cancel(e: unknown): void {
    this.#queue = this.#queue.filter((x) => x !== e);
  }
  /** Runs events in time order until `until`, settling promise chains between events. */
  async runUntil(until: number, check: () => void): Promise<void> {
    for (;;) {
      await flush();
      check();
      this.#queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#queue[0];
      if (next === undefined || next.at > until) break;
      this.#queue.shift();
      this.t = next.at;
      next.run();
    }
    this.t = until;
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** The Lease in memory; each request lands after `d1` and answers after `d2` more. */
function memoryStore(
  sim: Sim,
  state: { lease: LeaseRecord | undefined; version: number },
  delays: () => [number, number],
  alive: () => boolean,
  dropped: () => boolean,
): LeaseStore {
  const request = <T>(apply: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const [d1, d2] = delays();
      const lost = dropped();
      sim.at(d1, () => {
        if (lost) {
          sim.at(d2, () => reject(new Error('network')));
          return;
        }
        let result: { ok: true; value: T } | { ok: false; err: unknown };
        try {
          result = { ok: true, value: apply() };
        } catch (err) {
          result = { ok: false, err };
        }
        sim.at(d2, () => {
          if (!alive()) return; // a crashed replica never sees the answer
          if (result.ok) resolve(result.value);
          else reject(result.err);
        });
      });
    });
  const write = (spec: LeaseSpec): LeaseRecord => {
    state.version += 1;
    state.lease = { ...spec, version: String(state.version) };
    return state.lease;
  };
  return {
    description: 'memory',
    get: () => request(() => state.lease),
    create: (spec) =>
      request(() => {
        if (state.lease !== undefined) throw new LeaseConflictError('exists');
        return write(spec);
      }),
    replace: (spec, version) =>
      request(() => {
        if (state.lease?.version !== version) throw new LeaseConflictError('conflict');
        return write(spec);
      }),
  };
}

const LEASE = 3000;
const DEADLINE = 2000;
const RETRY = 500;

type Action =
  | { kind: 'crash'; replica: number; at: number }
  | { kind: 'restart'; replica: number; at: number }
  | { kind: 'stop'; replica: number; at: number }
  | { kind: 'step'; replica: number; at: number; byMs: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('crash' as const),
    replica: fc.integer({ min: 0, max: 2 }),
    at: fc.integer({ min: 0, max: 20_000 }),
  }),
  fc.record({
    kind: fc.constant('restart' as const),
    replica: fc.integer({ min: 0, max: 2 }),
    at: fc.integer({ min: 0, max: 20_000 }),
  }),
  fc.record({
    kind: fc.constant('stop' as const),
    replica: fc.integer({ min: 0, max: 2 }),
    at: fc.integer({ min: 0, max: 20_000 }),
  }),
  fc.record({
    kind: fc.constant('step' as const),
    replica: fc.integer({ min: 0, max: 2 }),
    at: fc.integer({ min: 0, max: 20_000 }),
    byMs: fc.integer({ min: -3_600_000, max: 3_600_000 }),
  }),
);

describe('elector model', () => {
  it('never lets two replicas lead at once, through crashes, stops, slow and lost requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(actionArb, { maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 900 }), { minLength: 64, maxLength: 64 }),
        fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 3, maxLength: 3 }),
        async (actions, delayPool, lossPool, startOffsets) => {
          const sim = new Sim();
          const state = { lease: undefined as LeaseRecord | undefined, version: 0 };
          let d = 0;
          let l = 0;
          let storm = true;
          const delays = (): [number, number] => {
            const a = delayPool[d++ % delayPool.length] ?? 0;
            const b = delayPool[d++ % delayPool.length] ?? 0;
            return storm ? [a, b] : [5, 5];
          };
          const dropped = () => storm && (lossPool[l++ % lossPool.length] ?? false) && l % 3 === 0;
          const replicas: Array<{ elector: Elector | undefined; alive: boolean; wall: number }> = [
            0, 1, 2,
          ].map(() => ({ elector: undefined, alive: false, wall: 0 }));

          const boot = (i: number) => {
            const r = replicas[i];
            if (r === undefined || r.alive) return;
            r.alive = true;
            const mine = { alive: true };
            const timers = {
              setTimeout: (fn: () => void, ms: number) => sim.at(ms, () => mine.alive && fn()),
              clearTimeout: (h: unknown) => sim.cancel(h),
            };
            r.elector = createElector({
              store: memoryStore(sim, state, delays, () => mine.alive, dropped),
              identity: `replica-${i}`,
              leaseDurationMs: LEASE,
              renewDeadlineMs: DEADLINE,
              retryPeriodMs: RETRY,
              monotonic: () => sim.t,
              wallClock: () => new Date(1_800_000_000_000 + sim.t + r.wall),
              timers,
            });
            // The crash switch of this incarnation.
            (r as { kill?: () => void }).kill = () => {
              mine.alive = false;
            };
            void r.elector.start().catch(() => undefined);
          };
          for (const i of [0, 1, 2]) sim.at(startOffsets[i] ?? 0, () => boot(i));
          for (const a of actions) {
            sim.at(a.at, () => {
              const r = replicas[a.replica];
              if (r === undefined) return;
              if (a.kind === 'restart') boot(a.replica);
              else if (a.kind === 'step') r.wall += a.byMs;
              else if (r.alive) {
                r.alive = false;
                if (a.kind === 'stop')
                  void r.elector?.stop().then(() => (r as { kill?: () => void }).kill?.());
                else (r as { kill?: () => void }).kill?.();
              }
            });
          }
          const check = () => {
            const leaders = replicas.filter((r) => r.alive && r.elector?.isLeader());
            expect(leaders.length).toBeLessThanOrEqual(1);
          };
          await sim.runUntil(22_000, check);
          // After the storm: everyone up, requests fast and reliable: someone leads.
          storm = false;
          for (const i of [0, 1, 2]) boot(i);
          await sim.runUntil(22_000 + LEASE + 4 * RETRY, check);
          expect(replicas.filter((r) => r.alive && r.elector?.isLeader()).length).toBe(1);
        },
      ),
      { seed: 20261125, numRuns: 60 },
    );
  }, 120_000);
});
