/**
 * The plan's dependency graph (src/plan/graph.ts) on plans the planner makes: each ordering the
 * plan needs is an edge between two operations (directly, or through one of the joins), and the
 * executor's waves put every operation after all of its predecessors.
 */
import { describe, expect, it } from 'vitest';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import {
  type EdgeReason,
  type GraphStep,
  type PlanGraph,
  planGraph,
} from '../../../src/plan/graph.js';
import type { Plan } from '../../../src/plan/model.js';
import { buildPlan } from '../../../src/plan/plan.js';
import {
  desiredSet,
  endpointManifest,
  httpsManifest,
  liveFromDesired,
  liveHttps,
  liveState,
  liveTls,
  routeManifest,
  tlsManifest,
} from './builders.js';

/** The step of `address` whose description or method matches. */
function step(graph: PlanGraph, address: string, what: string): GraphStep {
  const found = graph.steps.find(
    (s) => s.change.address === address && (s.op.method === what || s.op.description === what),
  );
  if (found === undefined) {
    const all = graph.steps.map((s) => `${s.change.address} ${s.op.method} ${s.op.description}`);
    throw new Error(`no step ${address} ${what} in:\n${all.join('\n')}`);
  }
  return found;
}

/** Why `to` waits for `from`: the reason of the edge between them, directly or through a join. */
function edgeBetween(graph: PlanGraph, from: GraphStep, to: GraphStep): EdgeReason | undefined {
  const direct = graph.edges.find((e) => e.from === from.index && e.to === to.index);
  if (direct !== undefined) return direct.reason;
  const joins = new Set(Object.values(graph.joins));
  const via = graph.edges.find(
    (e) =>
      e.from === from.index &&
      joins.has(e.to) &&
      graph.edges.some((f) => f.from === e.to && f.to === to.index),
  );
  return via?.reason;
}

/** Each step's place: its wave, and its place in its unit (lead first, then followers). */
function places(graph: PlanGraph): Map<number, { wave: number; at: number; unit: object }> {
  const out = new Map<number, { wave: number; at: number; unit: object }>();
  graph.waves.forEach((wave, w) => {
    for (const unit of wave) {
      unit.lead.forEach((s, i) => {
        out.set(s.index, { wave: w, at: i, unit });
      });
      for (const list of unit.follow) {
        list.forEach((s, i) => {
          out.set(s.index, { wave: w, at: unit.lead.length + i, unit });
        });
      }
    }
  });
  return out;
}

/** Every edge's operations, followed through the joins: the executor starts `to` after `from`. */
function expectWavesHonourEdges(graph: PlanGraph): void {
  const place = places(graph);
  const joins = new Set(Object.values(graph.joins));
  const into = (join: number) => graph.edges.filter((e) => e.to === join).map((e) => e.from);
  for (const e of graph.edges) {
    if (joins.has(e.to)) continue;
    const to = place.get(e.to);
    for (const from of joins.has(e.from) ? into(e.from) : [e.from]) {
      const before = place.get(from);
      expect(before, `step ${from}`).toBeDefined();
      expect(to, `step ${e.to}`).toBeDefined();
      if (before === undefined || to === undefined) continue;
      const ordered =
        before.wave < to.wave || (before.unit === to.unit && before.at < to.at) || from === e.to;
      expect(ordered, `${from} -> ${e.to} (${e.reason})`).toBe(true);
    }
  }
  expect(graph.cycle).toBeUndefined();
  expect(graph.waves.flat().flatMap((u) => [...u.lead, ...u.follow.flat()])).toHaveLength(
    graph.steps.length,
  );
}

function graphOf(plan: Plan): PlanGraph {
  const graph = planGraph(plan.changes);
  expectWavesHonourEdges(graph);
  return graph;
}

describe('every ordering of the plan is an edge of its graph', () => {
  it('hostports are released before they are claimed: edge to edge', () => {
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'a', hostports: ['keep.example.com:443'] })],
        https: [httpsManifest({ name: 'b', hostports: ['h.example.com:443'] })],
      }),
      liveState({
        tls: [
          liveTls({
            id: 'edgtls_a',
            name: 'a',
            hostports: ['h.example.com:443', 'keep.example.com:443'],
          }),
        ],
        https: [liveHttps({ id: 'edghts_b', name: 'b' })],
      }),
    );
    const graph = graphOf(plan);
    const release = step(graph, 'tls_edge.a', 'PATCH');
    const claim = step(graph, 'https_edge.b', 'PATCH');
    expect(edgeBetween(graph, release, claim)).toBe('release');
    expect(edgeBetween(graph, claim, release)).toBeUndefined();
  });

  it('a hostport swap: the release PATCH, then the claims of both edges', () => {
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({ name: 'a', hostports: ['two.example.com:443'] }),
          tlsManifest({ name: 'b', hostports: ['one.example.com:443'] }),
        ],
      }),
      liveState({
        tls: [
          liveTls({ id: 'edgtls_a', name: 'a', hostports: ['one.example.com:443'] }),
          liveTls({ id: 'edgtls_b', name: 'b', hostports: ['two.example.com:443'] }),
        ],
      }),
    );
    const graph = graphOf(plan);
    const [releaseA, claimA] = graph.steps.filter((s) => s.change.address === 'tls_edge.a');
    const b = graph.steps.filter((s) => s.change.address === 'tls_edge.b');
    if (releaseA === undefined || claimA === undefined) throw new Error('no steps of a');
    expect(edgeBetween(graph, releaseA, claimA)).toBe('sequence');
    for (const s of b) {
      if (s.op.phase === 'release') expect(edgeBetween(graph, s, claimA)).toBe('release');
      else expect(edgeBetween(graph, releaseA, s)).toBe('release');
    }
  });

  it('an endpoint claims a host and port after the edge update that drops it', () => {
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'keep', hostports: ['other.example.com:443'] })],
        endpoints: [endpointManifest({ name: 'h', url: 'tls://h.example.com:443' })],
      }),
      liveState({
        tls: [liveTls({ id: 'edgtls_1', name: 'keep', hostports: ['h.example.com:443'] })],
      }),
    );
    const graph = graphOf(plan);
    expect(
      edgeBetween(
        graph,
        step(graph, 'tls_edge.keep', 'PATCH'),
        step(graph, 'cloud_endpoint.h', 'POST'),
      ),
    ).toBe('claim');
  });

  it('the cut-over: each endpoint right after the delete of the edge whose host it takes, before the other writes', () => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [
          endpointManifest({ name: 'a1', url: 'https://a1.example.com' }),
          endpointManifest({ name: 'b', url: 'https://b.example.com' }),
        ],
        tls: [tlsManifest({ name: 'other', hostports: ['o.example.com:443'] })],
      }),
      liveState({
        https: [
          liveHttps({ id: 'edghts_a', name: 'a', hostports: ['a1.example.com:443'] }),
          liveHttps({ id: 'edghts_b', name: 'b', hostports: ['b.example.com:443'] }),
        ],
      }),
    );
    const graph = graphOf(plan);
    const a = step(graph, 'https_edge.a', 'DELETE');
    const a1 = step(graph, 'cloud_endpoint.a1', 'POST');
    expect(edgeBetween(graph, a, a1)).toBe('handover');
    expect(edgeBetween(graph, a, step(graph, 'cloud_endpoint.b', 'POST'))).toBeUndefined();
    // The other writes wait for the cut-over: a refused delete stops the cycle first.
    expect(edgeBetween(graph, a, step(graph, 'tls_edge.other', 'POST'))).toBe('cutover');
    const units = graph.waves.flat().filter((u) => u.cutover);
    expect(units.map((u) => [u.root, u.follow.flat().map((s) => s.change.address)])).toEqual([
      ['https_edge.a', ['cloud_endpoint.a1']],
      ['https_edge.b', ['cloud_endpoint.b']],
    ]);
    expect(units.every((u) => u.clean === 'released')).toBe(true);
  });

  it('deletes come after what stops referring to them: a domain after the endpoint on it', () => {
    const ours = (name: string) => storedMetadata({}, { owner: 'default', name, protect: false });
    const plan = buildPlan(
      {
        ...desiredSet({ tls: [tlsManifest({ name: 't', hostports: ['t.example.com:443'] })] }),
        resources: {
          reserved_domain: [
            {
              kind: 'reserved_domain',
              name: 'app',
              domain: 'app.example.com',
              source: { file: 'd.yaml', line: 1, column: 1 },
              sensitive: [],
              metadata: {},
              ensure: 'absent',
            },
          ] as never,
        },
      },
      {
        tlsEdges: [],
        httpsEdges: [],
        botUsers: [],
        cloudEndpoints: [
          {
            id: 'ep_1',
            type: 'cloud',
            url: 'https://app.example.com',
            metadata: ours('app'),
            bindings: ['public'],
            traffic_policy: '{}',
          } as never,
        ],
        resources: {
          reserved_domain: [
            {
              id: 'rd_1',
              domain: 'app.example.com',
              metadata: ours('app'),
              cname_target: null,
              certificate: { id: 'cert_1' },
            },
          ],
        },
      },
      { allowEmpty: true },
    );
    const graph = graphOf(plan);
    const domain = step(graph, 'reserved_domain.app', 'DELETE');
    expect(edgeBetween(graph, step(graph, 'cloud_endpoint.app', 'DELETE'), domain)).toBe(
      'reference',
    );
    // Every write that is not a delete goes first, and the deletes run only on a clean cycle.
    expect(edgeBetween(graph, step(graph, 'tls_edge.t', 'POST'), domain)).toBe('settle');
    const deletes = graph.waves.flat().filter((u) => u.lead.some((s) => s.op.method === 'DELETE'));
    expect(deletes.every((u) => u.clean === 'settled')).toBe(true);
  });

  it('an auth module a route loses goes before the one another route of its edge gains', () => {
    const before = desiredSet({
      https: [
        httpsManifest({
          name: 'w',
          routes: [
            routeManifest({ match: '/a', oauth: { provider: { google: {} } } }),
            routeManifest({ match: '/b' }),
          ],
        }),
      ],
    });
    const plan = buildPlan(
      desiredSet({
        https: [
          httpsManifest({
            name: 'w',
            routes: [
              routeManifest({ match: '/a' }),
              routeManifest({
                match: '/b',
                oidc: { issuer: 'https://i.example', client_id: 'c', client_secret: 's' },
              }),
            ],
          }),
        ],
      }),
      liveFromDesired(before),
    );
    const graph = graphOf(plan);
    const loses = step(graph, 'https_edge.w.route["/a"]', 'DELETE');
    const gains = step(graph, 'https_edge.w.route["/b"]', 'PATCH');
    expect(loses.op.phase).toBe('release');
    expect(edgeBetween(graph, loses, gains)).toBe('sequence');
  });

  it('the same plan gives the same graph and waves', () => {
    const plan = buildPlan(
      desiredSet({ tls: [tlsManifest({ name: 'a' }), tlsManifest({ name: 'b' })] }),
      liveState({}),
    );
    const one = planGraph(plan.changes);
    const two = planGraph(plan.changes);
    expect(two.edges).toEqual(one.edges);
    expect(two.waves.map((w) => w.map((u) => u.root))).toEqual(
      one.waves.map((w) => w.map((u) => u.root)),
    );
  });
});
