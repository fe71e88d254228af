import { describe, expect, it } from 'vitest';
import type { LoopSnapshot } from '../../../src/daemon/loop.js';
import {
  type CycleRecord,
  INITIAL_STATUS,
  reduceStatus,
  renderStatus,
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
