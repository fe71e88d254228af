import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CycleOutcome } from '../../../src/apply/cycle.js';
import type { ExecuteResult } from '../../../src/apply/executor.js';
import {
  etaMs,
  formatDuration,
  progressLine,
  progressSteps,
  summarize,
} from '../../../src/apply/progress.js';
import { change } from './fake.js';

const result: ExecuteResult = {
  total: 3,
  done: 2,
  failed: 1,
  skipped: 0,
  writes: 2,
  errors: [
    {
      address: 'https_edge.a',
      root: 'https_edge.a',
      method: 'PATCH',
      path: '/edges/https/edghts_a',
      message: 'https_edge.a vanished; it will be recreated on the next run',
      code: 'ES_API',
    },
  ],
  vanished: ['https_edge.a'],
  deletesSkipped: false,
  aborted: false,
  created: {},
  messages: [],
};

describe('summarize', () => {
  it('reports counts, errors and the residual drift', () => {
    const outcome: CycleOutcome = {
      result,
      converged: false,
      residual: {
        changes: [change('https_edge.a', [], { action: 'create', reason: 'not found live' })],
        blocked: [],
      },
      verifyError: undefined,
      kept: [{ address: 'https_edge.p', kind: 'guard', reason: 'protected' }],
      conflicts: [],
    };
    expect(summarize(outcome)).toMatchInlineSnapshot(`
      "Apply: 3 operations: 2 done (2 writes), 1 failed, 0 skipped.
        error: https_edge.a vanished; it will be recreated on the next run
      Kept as they are (protected with the manifest removed, or suspend: true):
        https_edge.p: protected
      Not converged: 1 difference remains (the next run retries them):
        create https_edge.a: not found live
      "
    `);
  });

  it('says converged', () => {
    const outcome: CycleOutcome = {
      result: { ...result, done: 3, failed: 0, errors: [], vanished: [] },
      converged: true,
      residual: { changes: [], blocked: [] },
      verifyError: undefined,
      kept: [],
      conflicts: [],
    };
    expect(summarize(outcome)).toContain('converged: the live state matches the manifests.');
  });
});

describe('progressLine', () => {
  it('rewrites one line and clears it at the end', () => {
    let text = '';
    const out = new Writable({
      write(chunk, _enc, cb) {
        text += String(chunk);
        cb();
      },
    });
    const line = progressLine(out);
    const event = {
      total: 2,
      method: 'POST' as const,
      path: '/edges/https',
      status: 201,
      durationMs: 1,
    };
    line.update({ ...event, done: 1, address: 'https_edge.a', outcome: 'ok' });
    line.update({ ...event, done: 2, address: 'https_edge.b', outcome: 'failed' });
    line.end();
    expect(text).toBe('\r\x1b[2K[1/2] https_edge.a\r\x1b[2K[2/2] https_edge.b (failed)\r\x1b[2K');
  });
});

describe('ETA from the API budget', () => {
  it('formats durations', () => {
    expect([formatDuration(0), formatDuration(45_000), formatDuration(200_000)]).toEqual([
      '0s',
      '45s',
      '3m20s',
    ]);
    expect(formatDuration(2 * 3600_000 + 61_000)).toBe('2h01m');
  });

  it('is the remaining requests at the budget pace, and nothing without a budget', () => {
    expect(etaMs(3_000, { limit: 120, windowMs: 60_000 })).toBe(1_500_000);
    expect(etaMs(3_000, undefined)).toBeUndefined();
  });

  it('reports each tenth once, with the ETA', () => {
    const seen: Array<[number, number, number | undefined]> = [];
    const step = progressSteps({ limit: 120, windowMs: 60_000 }, (d, t, e) => seen.push([d, t, e]));
    for (let done = 1; done <= 100; done++) {
      step({
        done,
        total: 100,
        address: 'a',
        method: 'POST',
        path: '/x',
        outcome: 'ok',
        status: 201,
        durationMs: 1,
      });
    }
    expect(seen.map(([d]) => d)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(seen[0]?.[2]).toBe(45_000);
  });
});
