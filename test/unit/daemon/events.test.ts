import { describe, expect, it } from 'vitest';
import {
  cycleEvents,
  type DaemonEvent,
  EventLog,
  NO_CONDITIONS,
} from '../../../src/daemon/events.js';
import { EMPTY_SUMMARY, type ReconcileReport } from '../../../src/daemon/types.js';
import type { Readiness } from '../../../src/kinds/index.js';

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

  it("a domain's readiness is an event when it changes; a create waiting for it is one when held and when let go", () => {
    const RECORD = {
      name: 'app.example.com',
      type: 'CNAME' as const,
      target: 'x1.cname.example.net',
    };
    const pending = {
      state: 'pending' as const,
      message: `needs DNS: app.example.com CNAME ${RECORD.target}; then certificate provisioning`,
      records: [RECORD],
    };
    const waitingFor = [{ address: 'reserved_domain.app', ...pending }];
    const held = {
      address: 'cloud_endpoint.app',
      kind: 'conflict',
      reason: `waits for reserved_domain.app to be ready (pending: ${pending.message})`,
      waiting_for: waitingFor,
    } as const;
    const domain = (readiness?: typeof pending | { state: 'ready'; message: string }) => ({
      address: 'reserved_domain.app',
      kind: 'reserved_domain',
      id: 'rd_1',
      ...(readiness === undefined ? {} : { readiness }),
    });
    const created = {
      address: 'cloud_endpoint.app',
      kind: 'cloud_endpoint',
      action: 'create',
      reason: 'not found live',
      fields: [],
    };
    const cycles: ReconcileReport[] = [
      // Not ready: the domain's state, and the endpoint held back, naming the record.
      report({
        result: 'drift',
        resources: { changes: [], blocked: [held], noop: [domain(pending)] },
      }),
      // The same again: nothing new.
      report({
        result: 'drift',
        resources: { changes: [], blocked: [held], noop: [domain(pending)] },
      }),
      // An incremental cycle that did not read the domain: its condition stands.
      report({ result: 'drift', resources: { changes: [], blocked: [held], noop: [domain()] } }),
      // Ready: the endpoint is created.
      report({
        result: 'changed',
        writes: 1,
        resources: {
          changes: [created],
          blocked: [],
          noop: [domain({ state: 'ready', message: 'certificate cert_1 issued' })],
        },
      }),
      // Still ready: no news.
      report({
        result: 'converged',
        resources: {
          changes: [],
          blocked: [],
          noop: [domain({ state: 'ready', message: 'certificate cert_1 issued' })],
        },
      }),
    ];
    let c = NO_CONDITIONS;
    const seen: DaemonEvent[][] = [];
    for (const r of cycles) {
      const out = cycleEvents(c, r, 0, 'rev');
      c = out.conditions;
      seen.push(out.events);
    }
    expect(seen[0]).toMatchObject([
      {
        type: 'readiness',
        resource: 'reserved_domain.app',
        message: `pending: ${pending.message}`,
        readiness: pending,
      },
      {
        type: 'waiting',
        resource: 'cloud_endpoint.app',
        message: held.reason,
        waiting_for: waitingFor,
      },
    ]);
    expect(seen[1]).toEqual([]);
    expect(seen[2]).toEqual([]);
    expect(seen[3]?.map((e) => `${e.type} ${e.resource}: ${e.message}`)).toEqual([
      'readiness reserved_domain.app: ready: certificate cert_1 issued',
      'changed cloud_endpoint.app: create: not found live',
      'recovered cloud_endpoint.app: no longer waiting',
    ]);
    expect(seen[3]?.[0]?.readiness).toEqual({
      state: 'ready',
      message: 'certificate cert_1 issued',
    });
    expect(seen[4]).toEqual([]);
  });

  it('a domain first seen ready is no news; a new DNS error on a pending domain is', () => {
    const ready = cycleEvents(
      NO_CONDITIONS,
      report({
        result: 'converged',
        resources: {
          changes: [],
          blocked: [],
          noop: [
            {
              address: 'reserved_domain.app',
              kind: 'reserved_domain',
              readiness: { state: 'ready', message: 'certificate cert_1 issued' },
            },
          ],
        },
      }),
      0,
      undefined,
    );
    expect(ready.events).toEqual([]);
    const withReadiness = (readiness: Readiness) =>
      report({
        resources: {
          changes: [],
          blocked: [],
          noop: [{ address: 'reserved_domain.api', kind: 'reserved_domain', readiness }],
        },
      });
    const records = [{ name: 'api.example.com', type: 'CNAME' as const, target: 't.example.net' }];
    const first = cycleEvents(
      ready.conditions,
      withReadiness({ state: 'pending', message: 'needs DNS', records }),
      0,
      undefined,
    );
    const second = cycleEvents(
      first.conditions,
      withReadiness({ state: 'error', message: 'DNS error: CNAME points elsewhere', records }),
      0,
      undefined,
    );
    expect(second.events).toMatchObject([
      {
        type: 'readiness',
        message: 'error: DNS error: CNAME points elsewhere',
        readiness: { state: 'error', records },
      },
    ]);
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
