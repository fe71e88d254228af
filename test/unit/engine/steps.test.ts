/**
 * The steps of a cycle before any write, on plans made by the real planner: each either ends the
 * cycle with its report or hands it on, and only the steps move the kept snapshot.
 */
import { describe, expect, it } from 'vitest';
import { type LiveSnapshot, NO_CALLS } from '../../../src/api/index.js';
import { newEngineState } from '../../../src/engine/context.js';
import { MANAGED_KINDS } from '../../../src/engine/contract.js';
import type { Prepared } from '../../../src/engine/incremental.js';
import { assess, holdBack } from '../../../src/engine/steps.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildPlan } from '../../../src/plan/index.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { desiredSet, tlsManifest } from '../plan/builders.js';

const options = reconcilerOptions;

const EMPTY_LIVE: LiveSnapshot = {
  tlsEdges: [],
  httpsEdges: [],
  botUsers: [],
  cloudEndpoints: [],
  calls: NO_CALLS,
};

function prepared(desired: DesiredSet): Prepared {
  return {
    plan: buildPlan(desired, EMPTY_LIVE, { owner: 'default' }),
    live: EMPTY_LIVE,
    desired,
    mode: 'full',
    stamps: new Map(),
  };
}

/** One edge to create on an empty account. */
const ONE_CREATE = desiredSet({
  tls: [tlsManifest({ name: 'api', hostports: ['api.example.com:443'] })],
});

describe('holdBack', () => {
  it('ends an observing cycle with its differences as drift, nothing written', () => {
    const opts = options({ mode: () => 'observe' });
    const state = newEngineState();
    const report = holdBack(assess(prepared(ONE_CREATE), opts, state), opts, state);
    expect(report).toMatchObject({ result: 'drift', writes: 0, outOfSync: 1, observed: true });
    expect(report?.listCalls).toBe(0);
  });

  it('ends a standby cycle as standby, nothing written', () => {
    const opts = options({ leadership: { isLeader: () => false, fence: () => undefined } });
    const state = newEngineState();
    const report = holdBack(assess(prepared(ONE_CREATE), opts, state), opts, state);
    expect(report).toMatchObject({ result: 'standby', writes: 0, outOfSync: 1 });
  });

  it('ends an empty plan as converged and keeps the account it saw', () => {
    const opts = options({ allowEmpty: true });
    const state = newEngineState();
    const ready = prepared(desiredSet());
    expect(holdBack(assess(ready, opts, state), opts, state)).toMatchObject({
      result: 'converged',
      outOfSync: 0,
    });
    expect(state.kept).toBe(ready.live);
  });

  it('hands a plan with operations on to the apply, the kept snapshot untouched', () => {
    const opts = options();
    const state = newEngineState();
    const cycle = assess(prepared(ONE_CREATE), opts, state);
    expect(holdBack(cycle, opts, state)).toBeUndefined();
    expect(state.kept).toBeUndefined();
    expect(cycle.managed).toEqual({
      ...Object.fromEntries(MANAGED_KINDS.map((k) => [k, 0])),
      tls_edge: 1,
    });
    expect(cycle.resources.changes.map((c) => c.action)).toEqual(['create']);
  });
});
