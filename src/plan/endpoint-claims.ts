/**
 * Ordering across kinds: a cloud endpoint cannot claim a host and port an edge still holds (the
 * service answers 381). When an edge of this plan releases it, the endpoint's create waits for
 * it and `requires` the edge's root, so it is not attempted when that release failed:
 * - an edge whose update drops that hostport: the host and port joins the plan's hostport
 *   claims, so the edge's PATCH runs in phase `release` (or a release PATCH before its update);
 * - an edge being deleted: a cut-over (`cutover` names the edge). Its DELETE releases the host
 *   and port, and both it and the endpoint's create are in role `cutover`: one unit of the
 *   plan's graph per edge (./graph.ts), each create sent as soon as its edge's delete is
 *   answered.
 * A host and port held by an
 * edge that keeps it (another owner's, a protected or blocked one, one whose manifest keeps it)
 * blocks the endpoint as a conflict: it is not attempted. Several endpoints may claim one host
 * and port (other URLs on it, or one URL they pool): each waits for the edge.
 *
 * Likewise a URL and binding passing between endpoints (the service refuses a second holder
 * unless both pool: 18009, 18016, 18017): the endpoint leaving it (deleted, or replaced by one on
 * another URL) has its DELETE in phase `release`, and the create or PATCH that takes it
 * `requires` that endpoint's root. A URL and binding held by an endpoint this plan does not move
 * (an agent's, another owner's, an unowned one, or one of ours the guards keep) blocks, as a
 * conflict, the endpoint whose write would take it without both pooling: it is not attempted.
 * Pure.
 */

import type { CloudEndpoint } from '../api/schemas.js';
import {
  defaultEndpointBinding,
  endpointHostport,
  normalizeEndpointUrl,
} from '../manifest/endpoint-url.js';
import { recordMetadata } from '../manifest/metadata.js';
import {
  type EndpointMatch,
  type EndpointOrphan,
  type EndpointPlanInput,
  ownedEndpoint,
} from './cloud-endpoints.js';
import type { PlanContext } from './context.js';
import { canonicalHostports } from './normalize.js';
import {
  describeHolder,
  type EdgeMatch,
  KIND_LABEL,
  type LiveEdge,
  type Orphan,
} from './ownership.js';

export interface EdgeSide {
  /** Desired edges being created or updated (not blocked). */
  readonly active: readonly EdgeMatch[];
  /** Owned edges being deleted (allowed by the guards). */
  readonly deletions: readonly Orphan[];
  /** Every live edge by lower-cased hostport. */
  readonly holders: ReadonlyMap<string, LiveEdge>;
  /** Hostport -> the address claiming it; endpoint claims are added. */
  readonly claims: Map<string, string>;
}

/** Each endpoint to plan with the edge roots it waits for; conflicts are blocked here. */
export function endpointClaims(
  ctx: PlanContext,
  matches: readonly EndpointMatch[],
  edges: EdgeSide,
): EndpointPlanInput[] {
  // The hostports edges release matter only to endpoints: without any, skip the pass over edges.
  if (matches.length === 0) return [];
  const releasedBy = new Map<string, string>();
  const deleted = new Set<string>();
  for (const o of edges.deletions) {
    deleted.add(o.address);
    for (const h of canonicalHostports(o.live.record.hostports)) releasedBy.set(h, o.address);
  }
  for (const m of edges.active) {
    if (m.live === undefined) continue;
    const wanted = ctx.wanted(m.desired);
    for (const h of canonicalHostports(m.live.record.hostports)) {
      if (!wanted.includes(h)) releasedBy.set(h, m.desired.address);
    }
  }
  const out: EndpointPlanInput[] = [];
  const claimedByEndpoints = new Set<string>();
  for (const match of matches) {
    const url = normalizeEndpointUrl(match.desired.url);
    const creates = match.live === undefined || normalizeEndpointUrl(match.live.record.url) !== url;
    const hostport = creates ? endpointHostport(url) : undefined;
    const holder = hostport === undefined ? undefined : edges.holders.get(hostport);
    if (hostport === undefined || holder === undefined) {
      out.push({ match, requires: [] });
      continue;
    }
    const releaser = releasedBy.get(hostport);
    const rival = edges.claims.get(hostport);
    if (releaser !== undefined && (rival === undefined || claimedByEndpoints.has(hostport))) {
      edges.claims.set(hostport, match.address);
      claimedByEndpoints.add(hostport);
      out.push({
        match,
        requires: [releaser],
        ...(deleted.has(releaser) ? { cutover: releaser, hostport } : {}),
      });
      continue;
    }
    const why =
      rival !== undefined
        ? `which releases it to ${rival}`
        : !holder.owned
          ? describeHolder(holder)
          : 'which is ours and keeps it (its manifest, protect, suspend or a guard)';
    ctx.blocked.push({
      address: match.address,
      kind: 'conflict',
      reason: `host and port ${hostport} of ${url} is held by ${KIND_LABEL[holder.kind]} ${holder.record.id} ${why}; not attempted`,
    });
  }
  return out;
}

/** Where an endpoint sits: the service lets two share it only if both pool. */
interface Seat {
  readonly root: string;
  readonly url: string;
  readonly binding: string;
  readonly pooling: boolean;
}

function liveSeat(root: string, r: CloudEndpoint): Seat {
  return {
    root,
    url: normalizeEndpointUrl(r.url),
    binding: r.bindings?.[0] ?? defaultEndpointBinding(r.url),
    pooling: r.pooling_enabled ?? false,
  };
}

/** Where the desired endpoint of `plan` sits, and whether its live record already sits there. */
function wantedSeat(plan: EndpointPlanInput): { seat: Seat; seated: boolean } {
  const d = plan.match.desired;
  const seat: Seat = {
    root: plan.match.address,
    url: normalizeEndpointUrl(d.url),
    binding: d.bindings[0] ?? defaultEndpointBinding(d.url),
    pooling: d.pooling_enabled,
  };
  const live = plan.match.live === undefined ? undefined : liveSeat('', plan.match.live.record);
  const seated =
    live?.url === seat.url && live.binding === seat.binding && live.pooling === seat.pooling;
  return { seat, seated };
}

/** Whether two endpoints may not share one URL and binding (the service's pooling rule). */
function clash(a: Seat, b: Seat): boolean {
  return a.url === b.url && a.binding === b.binding && !(a.pooling && b.pooling);
}

/**
 * The plans minus those whose write would take a URL and binding an endpoint this plan leaves
 * in place holds: live endpoints not ours, and our orphans the guards keep (`kept`, by ID).
 * Those are blocked as conflicts, as an edge held by another owner is, and never sent (the
 * service would answer 18009, 18016 or 18017).
 */
export function blockHeldUrls(
  ctx: PlanContext,
  plans: readonly EndpointPlanInput[],
  live: readonly CloudEndpoint[],
  kept: ReadonlySet<string>,
): EndpointPlanInput[] {
  const claiming = plans.map((plan) => ({ plan, ...wantedSeat(plan) })).filter((c) => !c.seated);
  if (claiming.length === 0 || live.length === 0) return [...plans];
  const byUrl = new Map<string, CloudEndpoint[]>();
  for (const r of live) {
    if (ownedEndpoint(r, ctx.owner) && !kept.has(r.id)) continue;
    const url = normalizeEndpointUrl(r.url);
    const list = byUrl.get(url);
    if (list === undefined) byUrl.set(url, [r]);
    else list.push(r);
  }
  const blocked = new Set<EndpointPlanInput>();
  for (const { plan, seat } of claiming) {
    // The endpoint it is (one `id:` adopts) holds nothing against itself.
    const own = plan.match.live?.record.id;
    const holder = byUrl.get(seat.url)?.find((r) => r.id !== own && clash(seat, liveSeat('', r)));
    if (holder === undefined) continue;
    blocked.add(plan);
    ctx.blocked.push({
      address: plan.match.address,
      kind: 'conflict',
      reason: `url ${seat.url} (${seat.binding}) is held by endpoint ${holder.id} ${describeEndpointHolder(holder, ctx.owner)}, ${poolingWhy(seat.pooling, holder.pooling_enabled ?? false)}; not attempted`,
    });
  }
  return plans.filter((p) => !blocked.has(p));
}

function describeEndpointHolder(r: CloudEndpoint, owner: string): string {
  if (r.type !== 'cloud') return `(an ${r.type} endpoint: its agent holds it)`;
  const meta = recordMetadata(r);
  if (meta === undefined) return "which edgesync does not manage (its metadata is not edgesync's)";
  if (meta.owner === undefined) return 'which has no edgesync owner';
  if (meta.owner === owner) return 'which is ours and is kept (protect or a guard)';
  return `which belongs to owner "${meta.owner}"`;
}

function poolingWhy(ours: boolean, theirs: boolean): string {
  if (theirs) return 'which pools on it: set pooling_enabled: true to join the pool';
  if (ours) return 'which does not pool';
  return 'and neither pools';
}

/**
 * The endpoints' plans with the URL handovers added: a desired endpoint whose seat a leaving
 * endpoint of this plan holds (an allowed deletion, or the old record of a replacement) without
 * both pooling waits for that endpoint's delete, which moves to phase `release`. An endpoint
 * that already sits where it should claims nothing (namesakes pooling on its URL are deleted
 * last, as duplicates).
 */
export function urlHandovers(
  plans: readonly EndpointPlanInput[],
  orphans: readonly EndpointOrphan[],
): { plans: EndpointPlanInput[]; releasing: ReadonlySet<string> } {
  const leaving = orphans.map((o) => liveSeat(o.address, o.live.record));
  for (const { match } of plans) {
    const live = match.live;
    if (live === undefined || match.desired.protect || live.meta?.protect === true) continue;
    if (normalizeEndpointUrl(live.record.url) !== normalizeEndpointUrl(match.desired.url)) {
      leaving.push(liveSeat(match.address, live.record));
    }
  }
  const releasing = new Set<string>();
  const out = plans.map((plan): EndpointPlanInput => {
    const { seat, seated } = wantedSeat(plan);
    // Already seated there (a PATCH of other fields, or nothing): no write claims the seat.
    const held = (seated ? [] : leaving).filter(
      (l) => l.root !== plan.match.address && clash(seat, l),
    );
    for (const l of held) releasing.add(l.root);
    return held.length === 0
      ? plan
      : { ...plan, requires: [...plan.requires, ...held.map((l) => l.root)] };
  });
  return {
    plans: out.map((p) => (releasing.has(p.match.address) ? { ...p, releasesUrl: true } : p)),
    releasing,
  };
}
