import { describe, expect, it } from 'vitest';
import { cycleEvents, EventLog, NO_CONDITIONS } from '../../../src/daemon/events.js';
import { EMPTY_SUMMARY, type ReconcileReport } from '../../../src/daemon/types.js';

const report = (r: Partial<ReconcileReport>): ReconcileReport => ({
  result: 'drift',
  summary: EMPTY_SUMMARY,
  writes: 0,
  ...r,
});
const drifting = (reason = 'changed description') =>
  report({
    observed: true,
    resources: {
      changes: [
        {
          address: 'tls_edge.db',
          kind: 'tls_edge',
          action: 'update',
          reason,
          fields: ['description'],
        },
      ],
      blocked: [],
      noop: [],
    },
  });

describe('cycle events', () => {
  it('a drift is an event when it starts and when it clears, not every cycle', () => {
    let c = NO_CONDITIONS;
    const types: string[] = [];
    for (const r of [
      drifting(),
      drifting(),
      drifting(),
      report({ result: 'converged', resources: { changes: [], blocked: [], noop: [] } }),
    ]) {
      const out = cycleEvents(c, r, 0, 'rev');
      c = out.conditions;
      types.push(...out.events.map((e) => `${e.type} ${e.resource}`));
    }
    expect(types).toEqual(['drift tls_edge.db', 'recovered tls_edge.db']);
  });

  it('a different reason is a new drift event', () => {
    const first = cycleEvents(NO_CONDITIONS, drifting('a'), 0, undefined);
    const second = cycleEvents(first.conditions, drifting('b'), 0, undefined);
    expect(second.events.map((e) => e.message)).toEqual(['update: b']);
  });

  it('an invalid set or an error is an event once, and its end is recovered', () => {
    let c = NO_CONDITIONS;
    const seen: string[] = [];
    for (const r of [
      report({ result: 'invalid', error: '2 manifest error(s)' }),
      report({ result: 'invalid', error: '2 manifest error(s)' }),
      report({ result: 'error', error: 'GET /edges/tls: 503' }),
      report({ result: 'converged', resources: { changes: [], blocked: [], noop: [] } }),
    ]) {
      const out = cycleEvents(c, r, 0, undefined);
      c = out.conditions;
      seen.push(...out.events.map((e) => e.type));
    }
    expect(seen).toEqual(['invalid', 'error', 'recovered']);
  });

  it('applied changes are changed events; superseded and standby cycles change nothing', () => {
    const applied = cycleEvents(
      NO_CONDITIONS,
      report({
        result: 'changed',
        writes: 1,
        resources: {
          changes: [
            {
              address: 'bot_user.ci',
              kind: 'bot_user',
              action: 'create',
              reason: 'not found live',
              fields: [],
            },
          ],
          blocked: [{ address: 'tls_edge.x', kind: 'conflict', reason: 'held by edgtls_9' }],
          noop: [],
        },
      }),
      0,
      undefined,
    );
    expect(applied.events.map((e) => `${e.type} ${e.resource}`)).toEqual([
      'changed bot_user.ci',
      'blocked tls_edge.x',
    ]);
    expect(
      cycleEvents(applied.conditions, report({ result: 'superseded' }), 0, undefined).events,
    ).toEqual([]);
    expect(
      cycleEvents(applied.conditions, report({ result: 'standby' }), 0, undefined).events,
    ).toEqual([]);
  });

  it('the log keeps the last 200 and tells its subscribers', () => {
    const log = new EventLog(200);
    let told = 0;
    log.subscribe(() => {
      told += 1;
    });
    for (let i = 0; i < 250; i++) {
      log.push({ time: '', type: 'changed', resource: `r${i}`, message: '', revision: null });
    }
    expect(log.list()).toHaveLength(200);
    expect(log.list()[0]?.resource).toBe('r50');
    expect(told).toBe(250);
  });
});
