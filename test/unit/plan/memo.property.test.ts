/**
 * The planner keeps the verdicts of up-to-date edges by manifest and live record in a
 * `PlanMemo` (issue 12: a daemon cycle after one file save diffs one edge, not 10,000). A kept
 * verdict must be exactly
 * what planning afresh gives: after any sequence of edits to manifests and live records, the plan
 * made with a warm memo equals the plan made from deep copies (new objects: nothing kept).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildPlan, type LiveState, PlanMemo } from '../../../src/plan/plan.js';
import {
  desiredSet,
  httpsManifest,
  liveFromDesired,
  routeManifest,
  tlsManifest,
} from './builders.js';

const EDGES = 6;

function base(): DesiredSet {
  const tls = Array.from({ length: EDGES }, (_, n) =>
    tlsManifest({
      name: `tcp-${n}`,
      description: `TCP ${n}`,
      hostports: [`tcp-${n}.example.com:443`],
      backend: { backend_id: `bkdtg_${n}` },
      tls_termination: { terminate_at: 'edge', min_version: '1.3' },
    }),
  );
  const https = Array.from({ length: EDGES }, (_, n) =>
    httpsManifest({
      name: `web-${n}`,
      hostports: [`web-${n}.example.com:443`],
      routes: [
        routeManifest({ match: '/', backend: { backend_id: `bkdhr_${n}` }, compression: {} }),
        routeManifest({
          match: '/hooks',
          match_type: 'exact_path',
          backend: { backend_id: `bkdhr_${n}b` },
          webhook_verification: { provider: 'stripe', secret: `whsec_${n}` },
        }),
      ],
    }),
  );
  return desiredSet({ tls, https });
}

type Edit =
  | { op: 'describe'; kind: 'tls' | 'https'; n: number }
  | { op: 'drift'; kind: 'tls' | 'https'; n: number }
  | { op: 'remove'; kind: 'tls' | 'https'; n: number }
  | { op: 'route'; n: number }
  | { op: 'hostport'; from: number; to: number }
  | { op: 'protect'; n: number };

const index = fc.integer({ min: 0, max: EDGES - 1 });
const kind = fc.constantFrom('tls' as const, 'https' as const);
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('describe' as const), kind, n: index }),
  fc.record({ op: fc.constant('drift' as const), kind, n: index }),
  fc.record({ op: fc.constant('remove' as const), kind, n: index }),
  fc.record({ op: fc.constant('route' as const), n: index }),
  fc.record({ op: fc.constant('hostport' as const), from: index, to: index }),
  fc.record({ op: fc.constant('protect' as const), n: index }),
);

/** New objects only for what an edit touches, as the daemon's caches behave. */
function applyEdit(desired: DesiredSet, live: LiveState, e: Edit): [DesiredSet, LiveState] {
  const d = { ...desired, tlsEdges: [...desired.tlsEdges], httpsEdges: [...desired.httpsEdges] };
  const l = { ...live, tlsEdges: [...live.tlsEdges], httpsEdges: [...live.httpsEdges] };
  const list = (k: 'tls' | 'https') => (k === 'tls' ? d.tlsEdges : d.httpsEdges);
  const records = (k: 'tls' | 'https') => (k === 'tls' ? l.tlsEdges : l.httpsEdges);
  switch (e.op) {
    case 'describe': {
      const at = list(e.kind);
      const m = at[e.n % at.length];
      if (m !== undefined) at[e.n % at.length] = { ...m, description: `${m.description ?? ''}+` };
      break;
    }
    case 'drift': {
      const at = records(e.kind);
      const r = at[e.n % at.length];
      if (r !== undefined) at[e.n % at.length] = { ...r, description: 'changed by hand' };
      break;
    }
    case 'remove':
      list(e.kind).splice(e.n % Math.max(1, list(e.kind).length), 1);
      break;
    case 'route': {
      const m = d.httpsEdges[e.n % d.httpsEdges.length];
      if (m !== undefined)
        d.httpsEdges[e.n % d.httpsEdges.length] = { ...m, routes: m.routes.slice(1) };
      break;
    }
    case 'hostport': {
      // Edge `to` claims the hostport edge `from` holds: a move (or a conflict with itself).
      const from = d.tlsEdges[e.from % d.tlsEdges.length];
      const to = d.tlsEdges[e.to % d.tlsEdges.length];
      if (from !== undefined && to !== undefined && from !== to) {
        d.tlsEdges[e.from % d.tlsEdges.length] = {
          ...from,
          hostports: [`moved-${e.from}.example.com:443`],
        };
        d.tlsEdges[e.to % d.tlsEdges.length] = {
          ...to,
          hostports: [...to.hostports, ...from.hostports],
        };
      }
      break;
    }
    case 'protect': {
      const m = d.tlsEdges[e.n % d.tlsEdges.length];
      if (m !== undefined) d.tlsEdges[e.n % d.tlsEdges.length] = { ...m, protect: !m.protect };
      break;
    }
  }
  return [d, l];
}

describe('planner memo', () => {
  it('a plan with kept verdicts equals the plan made afresh', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(edit, { maxLength: 3 }), { minLength: 1, maxLength: 4 }),
        fc.constantFrom('default', 'other'),
        (rounds, owner) => {
          let desired = base();
          let live = liveFromDesired(desired);
          const options = { owner: 'default', maxDeletes: 100, memo: new PlanMemo() };
          buildPlan(desired, live, options); // warms the memo
          for (const edits of rounds) {
            for (const e of edits) [desired, live] = applyEdit(desired, live, e);
            const warm = buildPlan(desired, live, { ...options, owner });
            const cold = buildPlan(structuredClone(desired), structuredClone(live), {
              ...options,
              owner,
              memo: undefined,
            });
            expect(warm).toEqual(cold);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps a verdict only while both the manifest and the live record are the same objects', () => {
    const desired = base();
    const live = liveFromDesired(desired);
    const memo = new PlanMemo();
    const first = buildPlan(desired, live, { memo });
    const again = buildPlan(desired, live, { memo });
    // The same change objects: the edge was not diffed again.
    expect(again.changes[0]).toBe(first.changes[0]);
    const drifted = {
      ...live,
      tlsEdges: live.tlsEdges.map((r, i) => (i === 0 ? { ...r, description: 'by hand' } : r)),
    };
    const third = buildPlan(desired, drifted, { memo });
    // Without a memo nothing is kept: every plan diffs afresh.
    expect(buildPlan(desired, live).changes[0]).not.toBe(buildPlan(desired, live).changes[0]);
    const edge = third.changes.find((c) => c.address === 'tls_edge.tcp-0');
    expect(edge?.action).toBe('update');
    expect(edge?.operations).toHaveLength(1);
  });
});
