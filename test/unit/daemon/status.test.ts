import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LoopSnapshot } from '../../../src/daemon/loop.js';
import {
  type CycleRecord,
  countResources,
  INITIAL_STATUS,
  parseResourceQuery,
  RESOURCE_PAGE,
  reduceStatus,
  renderStatus,
  resourcePage,
} from '../../../src/daemon/status.js';
import { EMPTY_SUMMARY, type ReconcileReport } from '../../../src/daemon/types.js';

const idle: LoopSnapshot = {
  inFlight: undefined,
  queued: undefined,
  nextAt: undefined,
  nextReason: undefined,
  failures: 0,
  backoffMs: 0,
  stopped: false,
};
const resolved = { realDir: '/repo/rev-a', revision: 'rev-a' };

function cycle(report: Partial<ReconcileReport>, extra: Partial<CycleRecord> = {}): CycleRecord {
  return {
    report: { result: 'converged', summary: EMPTY_SUMMARY, writes: 0, ...report },
    reason: 'resync',
    startedAt: 1_000,
    at: 1_250,
    resolved,
    superseded: false,
    ...extra,
  };
}

const invalid = cycle({
  result: 'invalid',
  diagnostics: [
    {
      file: '/repo/rev-a/team/a.yaml',
      line: 3,
      column: 5,
      path: 'hostports[0]',
      message: 'bad',
      severity: 'error',
    },
  ],
});

describe('status reducer', () => {
  it('starts not ready, with nothing recorded', () => {
    const s = renderStatus(INITIAL_STATUS, '/m', idle);
    expect(s).toMatchObject({
      ready: false,
      last_reconcile: null,
      last_error: null,
      revision: null,
    });
  });

  it('a success makes it ready (sticky), records the cycle and clears the last error', () => {
    let s = reduceStatus(INITIAL_STATUS, cycle({ result: 'error', error: 'boom' }));
    expect(s.lastError?.message).toBe('boom');
    expect(s.everReady).toBe(false);
    s = reduceStatus(s, cycle({ result: 'changed', writes: 3 }, { at: 2_000 }));
    expect(s.everReady).toBe(true);
    expect(s.lastError).toBeUndefined();
    expect(s.lastSuccessAt).toBe(2_000);
    s = reduceStatus(s, cycle({ result: 'error', error: 'later' }));
    expect(s.everReady).toBe(true);
    const doc = renderStatus(s, '/m', idle);
    expect(doc.last_reconcile).toMatchObject({
      result: 'error',
      duration_ms: 250,
      revision: 'rev-a',
    });
    expect(doc.last_error?.message).toBe('later');
  });

  it('groups diagnostics by file relative to the checkout, and an invalid set names its count', () => {
    const s = reduceStatus(INITIAL_STATUS, invalid);
    expect(Object.keys(s.diagnostics)).toEqual(['team/a.yaml']);
    expect(s.lastError?.message).toBe('1 error in 1 file: the manifests are invalid');
  });

  it('diagnostics of an earlier set do not linger once a cycle read a new set', () => {
    let s = reduceStatus(INITIAL_STATUS, invalid);
    s = reduceStatus(s, cycle({ result: 'converged' }));
    expect(s.diagnostics).toEqual({});
  });

  it('a superseded cycle or one that resolved nothing keeps the diagnostics and the last error', () => {
    const before = reduceStatus(INITIAL_STATUS, invalid);
    const superseded = reduceStatus(before, cycle({ result: 'superseded' }, { superseded: true }));
    expect(superseded.diagnostics).toEqual(before.diagnostics);
    expect(superseded.lastError).toEqual(before.lastError);
    const unresolved = reduceStatus(
      before,
      cycle({ result: 'error', error: 'gone' }, { resolved: undefined }),
    );
    expect(unresolved.diagnostics).toEqual(before.diagnostics);
    expect(unresolved.resolved).toEqual(resolved);
  });

  it('renders the loop snapshot: in flight, next resync, backoff', () => {
    const doc = renderStatus(INITIAL_STATUS, '/m', {
      ...idle,
      inFlight: 'file',
      nextAt: 0,
      failures: 2,
      backoffMs: 4_000,
    });
    expect(doc).toMatchObject({
      in_flight: true,
      next_resync_at: '1970-01-01T00:00:00.000Z',
      consecutive_failures: 2,
      backoff_ms: 4_000,
    });
  });

  it('keeps the last warnings until a cycle reports new ones', () => {
    let s = reduceStatus(INITIAL_STATUS, cycle({ warnings: ['2 bot users named "ci"'] }));
    s = reduceStatus(s, cycle({ result: 'error', error: 'x' }));
    expect(s.warnings).toEqual(['2 bot users named "ci"']);
    s = reduceStatus(s, cycle({ warnings: [] }));
    expect(s.warnings).toEqual([]);
  });
});

describe('/status counts the resources; /status/resources lists them a page at a time', () => {
  /** A drift cycle over `n` TLS edges (every third out of sync) and one bot user in conflict. */
  function drifted(n: number): CycleRecord {
    const noop = [];
    const changes = [];
    for (let i = 0; i < n; i++) {
      const address = `tls_edge.e${String(i).padStart(5, '0')}`;
      if (i % 3 === 0) {
        changes.push({
          address,
          kind: 'tls_edge',
          action: 'update' as const,
          reason: 'differs',
          fields: ['description'],
        });
      } else noop.push({ address, kind: 'tls_edge', id: `edgtls_${i}` });
    }
    return cycle({
      result: 'drift',
      resources: {
        changes,
        noop,
        blocked: [{ address: 'bot_user.ci', kind: 'conflict', reason: 'held' }],
      },
    });
  }
  const query = (text: string) => {
    const q = parseResourceQuery(new URLSearchParams(text));
    if ('error' in q) throw new Error(q.error);
    return q;
  };

  it('counts by state and by kind, with no resource in the document', () => {
    const doc = renderStatus(reduceStatus(INITIAL_STATUS, drifted(3_000)), '/m', idle);
    expect(doc.resource_counts).toEqual({
      total: 3_001,
      by_state: { in_sync: 2_000, out_of_sync: 1_000, conflict: 1 },
      by_kind: { tls_edge: { in_sync: 2_000, out_of_sync: 1_000 }, bot_user: { conflict: 1 } },
    });
    expect(doc).not.toHaveProperty('resources');
    // The document's size does not grow with the account.
    expect(JSON.stringify(doc).length).toBeLessThan(2_000);
  });

  it('counts out-of-sync resources as suspended while writes are stopped', () => {
    const s = reduceStatus(INITIAL_STATUS, drifted(30));
    const doc = renderStatus(s, '/m', idle, null, 0, { suspended: true, mode: 'observe' });
    expect(doc.resource_counts.by_state).toEqual({ in_sync: 20, suspended: 10, conflict: 1 });
    const page = resourcePage(s, query('state=suspended&limit=2'), true);
    expect(page.total).toBe(10);
    expect(page.resources.map((r) => [r.address, r.state])).toEqual([
      ['tls_edge.e00000', 'suspended'],
      ['tls_edge.e00003', 'suspended'],
    ]);
  });

  it('pages by address, filtered by state, kind or address', () => {
    const s = reduceStatus(INITIAL_STATUS, drifted(3_000));
    const first = resourcePage(s, query(''), false);
    expect(first).toMatchObject({ total: 3_001, offset: 0, limit: RESOURCE_PAGE.defaultLimit });
    expect(first.resources[0]?.address).toBe('bot_user.ci');
    const later = resourcePage(s, query('offset=2999&limit=1000'), false);
    expect(later.resources.map((r) => r.address)).toEqual(['tls_edge.e02998', 'tls_edge.e02999']);
    const drift = resourcePage(s, query('state=out_of_sync,conflict&limit=1000'), false);
    expect(drift.total).toBe(1_001);
    expect(resourcePage(s, query('kind=bot_user'), false).resources).toEqual([
      {
        kind: 'bot_user',
        address: 'bot_user.ci',
        id: null,
        state: 'conflict',
        reason: 'held',
        fields: [],
      },
    ]);
    const one = resourcePage(s, query('address=tls_edge.e00003'), false);
    expect(one.resources).toEqual([
      expect.objectContaining({ state: 'out_of_sync', fields: ['description'] }),
    ]);
  });

  it.each([
    ['page=2', 'unknown parameter "page"'],
    ['state=drifted', 'unknown state "drifted"'],
    ['limit=0', 'limit must be a whole number from 1 to 1000, got "0"'],
    ['limit=1001', 'limit must be a whole number from 1 to 1000'],
    ['offset=-1', 'offset must be a whole number'],
    ['offset=1.5', 'offset must be a whole number'],
  ])('refuses %s, saying why', (text, message) => {
    const q = parseResourceQuery(new URLSearchParams(text));
    expect('error' in q && q.error).toContain(message);
  });
});

describe('the resources made from the last cycle', () => {
  type Noop = NonNullable<ReconcileReport['resources']>['noop'][number];
  const ADDRESSES = Array.from(
    { length: 12 },
    (_, n) => `${n % 3 === 0 ? 'bot_user' : 'tls_edge'}.r${n}`,
  ).sort();

  it('equal those of the same cycle made afresh, after any sequence of cycles', () => {
    // Each cycle: per address in sync (the last cycle's entry object, or a new one), changed, blocked, or gone.
    const step = fc.array(fc.constantFrom('keep', 'new', 'change', 'block', 'gone', 'both'), {
      minLength: ADDRESSES.length,
      maxLength: ADDRESSES.length,
    });
    const result = fc.constantFrom(
      'converged',
      'changed',
      'drift',
      'error',
      'superseded',
    ) as fc.Arbitrary<ReconcileReport['result']>;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(step, result), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (cycles, shuffled) => {
          let state = INITIAL_STATUS;
          let entries = new Map<string, Noop>();
          for (const [fates, res] of cycles) {
            const noop: Noop[] = [];
            const changes: NonNullable<ReconcileReport['resources']>['changes'][number][] = [];
            const blocked: NonNullable<ReconcileReport['resources']>['blocked'][number][] = [];
            const next = new Map<string, Noop>();
            ADDRESSES.forEach((address, i) => {
              const kind = address.slice(0, address.indexOf('.'));
              const fate = fates[i];
              if (fate === 'keep' || fate === 'new') {
                const kept = fate === 'keep' ? entries.get(address) : undefined;
                const entry = kept ?? { address, kind, id: `id-${address}` };
                next.set(address, entry);
                noop.push(entry);
              } else if (fate === 'change' || fate === 'both') {
                changes.push({
                  address,
                  kind,
                  action: 'update',
                  reason: 'drift',
                  fields: ['description'],
                });
              }
              if (fate === 'block' || fate === 'both')
                blocked.push({ address, kind: 'conflict', reason: 'held' });
            });
            entries = next;
            // A plan written by hand may not be in address order.
            if (shuffled) noop.reverse();
            const rec = cycle({
              result: res,
              writes: res === 'changed' ? 1 : 0,
              resources: { noop, changes, blocked },
            });
            state = reduceStatus(state, rec);
            // The cycle folded into a status without a last cycle: every status made afresh.
            const fresh = reduceStatus({ ...state, inSync: undefined }, rec);
            expect(state.resources).toEqual(fresh.resources);
            expect(state.resourceCounts).toEqual(countResources(state.resources));
            const sorted = [...state.resources].sort((a, b) =>
              a.address < b.address ? -1 : a.address > b.address ? 1 : 0,
            );
            expect(state.resources).toEqual(sorted);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
