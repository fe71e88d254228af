/**
 * The daemon plans a change to a few edges from its last plan (`patchPlan`, src/plan/patch.ts):
 * the whole-set steps are skipped when nothing they read changed. The plan must be exactly
 * what planning the whole set afresh gives: after any sequence of random edits to manifests and
 * live records (edits the patch takes, and edits that must fall back to the whole set), each
 * plan made with the memo equals the plan of deep copies made without one. Both plans of a
 * daemon edit are made: on the kept snapshot, then on the snapshot with the edited record
 * read back; the outline its readers take from it (the changes that write, the counts) equals a
 * walk of it, and so do the report's entries made from the last plan's. The set also holds resources of the kinds defined as data (a reserved domain, an
 * IP policy with its rules) and a cloud endpoint on the domain, edited too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HttpsEdge, TlsEdge } from '../../../src/api/schemas.js';
import { type Conditions, cycleEvents, NO_CONDITIONS } from '../../../src/daemon/events.js';
import { type CycleRecord, INITIAL_STATUS, reduceStatus } from '../../../src/daemon/status.js';
import { resourcesOf } from '../../../src/engine/report.js';
import type { Declared, LiveRecord } from '../../../src/kinds/index.js';
import { IpPolicySchema } from '../../../src/kinds/ip-policy.js';
import { ReservedDomainSchema } from '../../../src/kinds/reserved-domain.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import type {
  DesiredSet,
  HttpsEdgeManifest,
  TlsEdgeManifest,
} from '../../../src/manifest/schema.js';
import type { Plan } from '../../../src/plan/model.js';
import { outlineOf } from '../../../src/plan/outline.js';
import { buildPlan, type LiveState, PlanMemo } from '../../../src/plan/plan.js';
import {
  botManifest,
  desiredSet,
  endpointManifest,
  httpsManifest,
  liveEndpoint,
  liveFromDesired,
  routeManifest,
  tlsManifest,
} from './builders.js';

const EDGES = 5;
/** The values the report masks (the same array from cycle to cycle, as the daemon keeps it). */
const VALUES: readonly string[] = ['TCP 3'];

function base(): DesiredSet {
  const tls = Array.from({ length: EDGES }, (_, n) =>
    tlsManifest({
      name: `tcp-${n}`,
      description: `TCP ${n}`,
      hostports: [`tcp-${n}.example.com:443`],
      backend: { backend_id: `bkdtg_${n}` },
    }),
  );
  const https = Array.from({ length: EDGES }, (_, n) =>
    httpsManifest({
      name: `web-${n}`,
      hostports: [`web-${n}.example.com:443`],
      routes: [
        routeManifest({ match: '/', backend: { backend_id: `bkdhr_${n}` }, compression: {} }),
        routeManifest({
          match: '/login',
          oauth: { provider: { google: {} } },
          backend: { backend_id: `bkdhr_${n}x` },
        }),
      ],
    }),
  );
  return {
    ...desiredSet({
      tls,
      https,
      bots: [botManifest({ name: 'ci' })],
      endpoints: [endpointManifest({ name: 'app', url: 'https://app.example.com' })],
    }),
    resources: {
      reserved_domain: [
        declared(ReservedDomainSchema, {
          kind: 'ReservedDomain',
          name: 'app',
          domain: 'app.example.com',
        }),
      ],
      ip_policy: [
        declared(IpPolicySchema, {
          kind: 'IPPolicy',
          name: 'office',
          rules: [{ cidr: '203.0.113.0/24', action: 'allow' }],
        }),
      ],
    },
  };
}

const SOURCE = { file: 'account.yaml', line: 1, column: 1 };

function declared(schema: { parse(v: unknown): unknown }, fields: object): Declared {
  return { ...(schema.parse(fields) as Declared), source: SOURCE, sensitive: [] };
}

const ours = (name: string) => storedMetadata({}, { owner: 'default', name, protect: false });

/** The live account: the edges as applied, and the other kinds' records as the service has them. */
function liveOf(
  desired: DesiredSet,
  generic?: Pick<LiveState, 'cloudEndpoints' | 'resources'>,
): LiveState {
  return {
    ...liveFromDesired(desired),
    cloudEndpoints: generic?.cloudEndpoints ?? [
      liveEndpoint({ id: 'ep_1', url: 'https://app.example.com', name: 'app', owner: 'default' }),
    ],
    resources: generic?.resources ?? {
      reserved_domain: [
        {
          id: 'rd_1',
          created_at: '2026-01-01T00:00:00Z',
          domain: 'app.example.com',
          description: '',
          metadata: ours('app'),
          cname_target: null,
          certificate: null,
          certificate_management_policy: null,
          certificate_management_status: null,
        },
      ],
      ip_policy: [{ id: 'ipp_1', description: '', metadata: ours('office') }],
      ip_policy_rule: [
        {
          id: 'ipr_1',
          cidr: '203.0.113.0/24',
          action: 'allow',
          description: '',
          ip_policy: { id: 'ipp_1', uri: 'x' },
        },
      ],
    },
  };
}

type Side = 'tls' | 'https';
type Edit =
  | { op: 'describe' | 'protect' | 'suspend' | 'rename' | 'remove'; side: Side; n: number }
  | {
      op: 'drift' | 'reread' | 'foreign' | 'unhost' | 'delete' | 'younger' | 'duplicate';
      side: Side;
      n: number;
    }
  | { op: 'route' | 'authSwap' | 'dropRoute'; n: number }
  | { op: 'hostport'; from: number; to: number }
  | { op: 'settle' }
  | { op: 'rule' | 'ruleDrift' | 'domainReread' | 'policyGone' | 'endpointDrift' };

const n = fc.integer({ min: 0, max: EDGES - 1 });
const side = fc.constantFrom<Side>('tls', 'https');
const edit: fc.Arbitrary<Edit> = fc.oneof(
  // The edits a daemon sees most (the patch takes them) weigh more.
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('describe' as const), side, n }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('drift' as const), side, n }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('reread' as const), side, n }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('route' as const), n }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('authSwap' as const), n }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('dropRoute' as const), n }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('settle' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom(
        'protect' as const,
        'suspend' as const,
        'rename' as const,
        'remove' as const,
      ),
      side,
      n,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom('foreign' as const, 'unhost' as const, 'delete' as const),
      side,
      n,
    }),
  },
  // Namesakes: which of two owned records survives is read across the set.
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constantFrom('younger' as const, 'duplicate' as const),
      side,
      n: fc.integer({ min: 0, max: 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('hostport' as const), from: n, to: n }) },
  // The kinds defined as data and the endpoint: any change to them plans the whole set.
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom(
        'rule' as const,
        'ruleDrift' as const,
        'domainReread' as const,
        'policyGone' as const,
        'endpointDrift' as const,
      ),
    }),
  },
);

type Manifest = TlsEdgeManifest | HttpsEdgeManifest;
type Record_ = TlsEdge | HttpsEdge;

/**
 * A domain read again: waiting for its DNS record when it was ready, ready when it was waiting
 * (its readiness changes, an event; nothing the plan diffs).
 */
function reread(r: LiveRecord): LiveRecord {
  const waiting = r.cname_target === null;
  return { ...structuredClone(r), cname_target: waiting ? 'app.example.com.cname.test' : null };
}

/** New objects only for what an edit touches, as the daemon's file cache and snapshot behave. */
function applyEdit(desired: DesiredSet, live: LiveState, e: Edit): [DesiredSet, LiveState] {
  const d = { ...desired, tlsEdges: [...desired.tlsEdges], httpsEdges: [...desired.httpsEdges] };
  const l = { ...live, tlsEdges: [...live.tlsEdges], httpsEdges: [...live.httpsEdges] };
  const manifests = (s: Side): Manifest[] => (s === 'tls' ? d.tlsEdges : d.httpsEdges);
  const records = (s: Side): Record_[] => (s === 'tls' ? l.tlsEdges : l.httpsEdges);
  const at = <T>(list: T[], i: number, f: (x: T) => T | undefined) => {
    if (list.length === 0) return;
    const k = i % list.length;
    const next = f(list[k] as T);
    if (next === undefined) list.splice(k, 1);
    else list[k] = next;
  };
  switch (e.op) {
    case 'describe':
      at(manifests(e.side), e.n, (m) => ({ ...m, description: `${m.description ?? ''}+` }));
      break;
    case 'protect':
      at(manifests(e.side), e.n, (m) => ({ ...m, protect: !m.protect }));
      break;
    case 'suspend':
      at(manifests(e.side), e.n, (m) => ({ ...m, suspend: m.suspend !== true }));
      break;
    case 'rename':
      at(manifests(e.side), e.n, (m) => ({ ...m, name: `${m.name}r` }));
      break;
    case 'remove':
      at(manifests(e.side), e.n, () => undefined);
      break;
    case 'drift':
      at(records(e.side), e.n, (r) => ({ ...r, description: 'changed by hand' }));
      break;
    case 'reread':
      // The same record read back by ID: equal, but a new object.
      at(records(e.side), e.n, (r) => structuredClone(r));
      break;
    case 'foreign':
      at(records(e.side), e.n, (r) => ({ ...r, metadata: '{"edgesync/owner":"someone"}' }));
      break;
    case 'unhost':
      at(records(e.side), e.n, (r) => ({ ...r, hostports: [`drift-${r.id}.example.com:443`] }));
      break;
    case 'delete':
      at(records(e.side), e.n, () => undefined);
      break;
    case 'younger':
      at(records(e.side), e.n, (r) => ({ ...r, created_at: '2040-01-01T00:00:00Z' }));
      break;
    case 'duplicate': {
      // A create that landed twice: a younger namesake, first in the list (a `younger` edit of
      // the other then changes which one survives).
      const list = records(e.side);
      const r = list[e.n % Math.max(1, list.length)];
      if (r !== undefined)
        list.unshift({ ...r, id: `${r.id}d`, created_at: '2030-01-01T00:00:00Z' });
      break;
    }
    case 'route':
      at(d.httpsEdges, e.n, (m) => ({
        ...m,
        routes: m.routes.map((r, i) => (i === 0 ? { ...r, compression: undefined } : r)),
      }));
      break;
    case 'authSwap':
      // A route gaining an auth module another route of the edge drops: fail closed ordering.
      at(d.httpsEdges, e.n, (m) => ({
        ...m,
        routes: m.routes.map((r) =>
          r.match === '/'
            ? { ...r, oauth: { provider: { github: {} } } }
            : { ...r, oauth: undefined },
        ) as HttpsEdgeManifest['routes'],
      }));
      break;
    case 'dropRoute':
      at(d.httpsEdges, e.n, (m) => ({ ...m, routes: m.routes.slice(1) }));
      break;
    case 'hostport': {
      const from = d.tlsEdges[e.from % Math.max(1, d.tlsEdges.length)];
      const to = d.tlsEdges[e.to % Math.max(1, d.tlsEdges.length)];
      if (from !== undefined && to !== undefined && from !== to) {
        d.tlsEdges[d.tlsEdges.indexOf(from)] = {
          ...from,
          hostports: [`moved-${e.from}.example.com:443`],
        };
        d.tlsEdges[d.tlsEdges.indexOf(to)] = {
          ...to,
          hostports: [...to.hostports, ...from.hostports],
        };
      }
      break;
    }
    case 'settle':
      // The edges as the manifests want them (an apply that converged): every record new.
      return [d, liveOf(d, l)];
    case 'rule': {
      const resources = { ...d.resources };
      resources.ip_policy = (resources.ip_policy ?? []).map((p) => ({
        ...p,
        rules: [
          ...(p.rules as object[]),
          { cidr: `198.51.100.${(p.rules as object[]).length}/32`, action: 'deny' },
        ],
      }));
      return [{ ...d, resources }, l];
    }
    case 'ruleDrift':
    case 'domainReread':
    case 'policyGone': {
      const resources: Record<string, readonly LiveRecord[]> = { ...l.resources };
      const kind =
        e.op === 'ruleDrift'
          ? 'ip_policy_rule'
          : e.op === 'domainReread'
            ? 'reserved_domain'
            : 'ip_policy';
      resources[kind] =
        e.op === 'policyGone'
          ? []
          : (resources[kind] ?? []).map((r) =>
              e.op === 'ruleDrift' ? { ...r, description: 'changed by hand' } : reread(r),
            );
      if (e.op === 'policyGone') resources.ip_policy_rule = [];
      return [d, { ...l, resources }];
    }
    case 'endpointDrift':
      return [
        d,
        {
          ...l,
          cloudEndpoints: (l.cloudEndpoints ?? []).map((c) => ({ ...c, description: 'by hand' })),
        },
      ];
  }
  return [d, l];
}

/**
 * The snapshot's records by kind with the four planned kinds' lists as the same arrays, as
 * `observe` and the read-back after a write make them.
 */
function mirrored(live: LiveState): LiveState {
  return {
    ...live,
    resources: {
      ...live.resources,
      tls_edge: live.tlsEdges,
      https_edge: live.httpsEdges,
      bot_user: live.botUsers,
      cloud_endpoint: live.cloudEndpoints ?? [],
    },
  };
}

/** A daemon cycle that planned `plan` and wrote nothing, as its status records it. */
function cycleOf(plan: Plan, resources: ReturnType<typeof resourcesOf>): CycleRecord {
  return {
    report: { result: 'converged', summary: plan.summary, writes: 0, resources },
    reason: 'resync',
    startedAt: 1_000,
    at: 1_250,
    resolved: undefined,
    superseded: false,
  };
}

/**
 * The conditions after a cycle reported `resources`, its events checked against those of a copy
 * of them (a list the report did not make: every entry read).
 */
function eventsOf(
  before: Conditions,
  plan: Plan,
  resources: ReturnType<typeof resourcesOf>,
): Conditions {
  const made = cycleEvents(before, cycleOf(plan, resources).report, 0, undefined);
  const walked = cycleEvents(
    before,
    cycleOf(plan, structuredClone(resources)).report,
    0,
    undefined,
  );
  expect(made).toEqual(walked);
  return made.conditions;
}

describe('planning from the last plan', () => {
  it('equals the plan of the whole set made afresh, after any edits', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean(), fc.nat(4)),
          { minLength: 1, maxLength: 6 },
        ),
        fc.constantFrom(3, 100),
        fc.boolean(),
        (rounds, maxDeletes, mirror) => {
          const observed = (l: LiveState) => (mirror ? mirrored(l) : l);
          let desired = base();
          let live = observed(liveOf(desired));
          const options = { owner: 'default', maxDeletes, memo: new PlanMemo() };
          const first = buildPlan(desired, live, options);
          const resources0 = resourcesOf(first, VALUES, live);
          let status = reduceStatus(INITIAL_STATUS, cycleOf(first, resources0));
          let conditions = eventsOf(NO_CONDITIONS, first, resources0);
          for (const [edits, transient, cut] of rounds) {
            // A file read half written first: a plan of the set without some edges, made whole.
            if (transient) {
              const half = { ...desired, tlsEdges: desired.tlsEdges.slice(cut) };
              const warm = buildPlan(half, live, options);
              const cold = buildPlan(structuredClone(half), structuredClone(live), {
                ...options,
                memo: undefined,
              });
              expect(warm).toEqual(cold);
            }
            for (const e of edits) {
              [desired, live] = applyEdit(desired, live, e);
              live = observed(live);
              const warm = buildPlan(desired, live, options);
              const cold = buildPlan(structuredClone(desired), structuredClone(live), {
                ...options,
                memo: undefined,
              });
              expect(warm).toEqual(cold);
              // What its readers take from it (kept beside a patched plan) equals a walk of it.
              expect(outlineOf(warm)).toEqual(outlineOf(structuredClone(warm)));
              // The daemon reports one plan of several it makes (the edit's, not the check's):
              // the report of the last edit of a round only, made from that of a plan a few back.
              if (e !== edits[edits.length - 1]) continue;
              // The report's entries, made from the last report's, equal those made afresh.
              const resources = resourcesOf(warm, VALUES, live);
              expect(resources).toEqual(resourcesOf(warm, [...VALUES], live));
              // The daemon's statuses, made from the last cycle's, equal those made afresh.
              status = reduceStatus(status, cycleOf(warm, resources));
              const fresh = reduceStatus(INITIAL_STATUS, cycleOf(warm, structuredClone(resources)));
              expect(status.resources).toEqual(fresh.resources);
              expect(status.resourceCounts).toEqual(fresh.resourceCounts);
              // The events read only the entries of the kinds that read readiness: the same
              // events and conditions as a walk of every entry (a copy is walked whole).
              conditions = eventsOf(conditions, warm, resources);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    // 300 seeded runs of two plans each: about 17 s alone on the project machine, twice that
    // beside another suite.
  }, 120_000);

  it('plans an edited edge from the last plan, and the whole set when a key changed', () => {
    const desired = base();
    const live = mirrored(liveOf(desired));
    const memo = new PlanMemo();
    const first = buildPlan(desired, live, { memo });
    // The other kinds are planned too (the property above edits them).
    expect(first.changes.map((c) => `${c.action} ${c.address}`)).toEqual(
      expect.arrayContaining([
        'noop reserved_domain.app',
        'noop ip_policy.office',
        'noop cloud_endpoint.app',
      ]),
    );
    const holders = memo.basis?.holders;
    const edited = {
      ...desired,
      tlsEdges: desired.tlsEdges.map((m, i) => (i === 1 ? { ...m, description: 'new' } : m)),
    };
    const plan = buildPlan(edited, live, { memo });
    // The whole-set results were reused (a whole plan makes new ones).
    expect(memo.basis?.holders).toBe(holders);
    expect(plan.changes.find((c) => c.address === 'tls_edge.tcp-1')?.operations).toHaveLength(1);
    // The edited edge read back after its write, laid over the snapshot as the check does.
    const readBack = mirrored({
      ...live,
      tlsEdges: live.tlsEdges.map((r, i) => (i === 1 ? { ...r, description: 'new' } : r)),
    });
    const verified = buildPlan(edited, readBack, { memo });
    expect(memo.basis?.holders).toBe(holders);
    expect(verified.changes.find((c) => c.address === 'tls_edge.tcp-1')?.action).toBe('noop');
    // The same file read again (a second event of one save): the same plan, and its report
    // made again from the one made of it.
    const again = buildPlan({ ...edited }, readBack, { memo });
    expect(again).toBe(verified);
    expect(again).toEqual(buildPlan(structuredClone(edited), structuredClone(readBack)));
    const reported = resourcesOf(verified, VALUES, readBack);
    const reportedAgain = resourcesOf(again, VALUES, readBack);
    expect(reportedAgain).toEqual(reported);
    expect(reportedAgain.noop).not.toBe(reported.noop);
    const moved = {
      ...edited,
      tlsEdges: edited.tlsEdges.map((m, i) =>
        i === 1 ? { ...m, hostports: ['elsewhere.example.com:443'] } : m,
      ),
    };
    buildPlan(moved, live, { memo });
    expect(memo.basis?.holders).not.toBe(holders);
  });

  it('plans the set after a half-written file from the plan before it', () => {
    const desired = base();
    const live = mirrored(liveOf(desired));
    const memo = new PlanMemo();
    buildPlan(desired, live, { memo });
    const holders = memo.basis?.holders;
    // The file read half written: its edges are missing, so the whole set is planned.
    buildPlan({ ...desired, tlsEdges: desired.tlsEdges.slice(1) }, live, { memo });
    expect(memo.basis?.holders).not.toBe(holders);
    expect(memo.fallback?.holders).toBe(holders);
    // Then whole, with one edge edited: patched from the plan before the half-written one.
    const edited = {
      ...desired,
      tlsEdges: desired.tlsEdges.map((m, i) => (i === 1 ? { ...m, description: 'new' } : m)),
    };
    const plan = buildPlan(edited, live, { memo });
    expect(memo.basis?.holders).toBe(holders);
    expect(plan).toEqual(buildPlan(structuredClone(edited), structuredClone(live)));
  });

  it('drops a basis that no later set can fit: the plan before a cycle created the set', () => {
    const desired = base();
    const created = mirrored(liveOf(desired));
    const memo = new PlanMemo();
    // Nothing live yet: every edge a create.
    const before = buildPlan(desired, { ...created, tlsEdges: [], httpsEdges: [] }, { memo });
    expect(before.summary.create).toBeGreaterThan(0);
    // The check after the creates plans the whole set against the records read back.
    const after = buildPlan(desired, created, { memo });
    expect(after.summary.create).toBe(0);
    expect(memo.fallback).toBeUndefined();
    expect(after).toEqual(buildPlan(structuredClone(desired), structuredClone(created)));
  });
});
