/**
 * The planner: (desired set, live snapshot, options) -> Plan. Pure: no I/O, no clock, no client.
 *
 * Steps: ownership (./ownership.ts) matches manifests to live edges; the deletion guards
 * (./guards.ts: exclusion, protect, empty set, max deletes) decide which orphans may go; hostport conflicts
 * are resolved to a fixpoint (a hostport is claimable when it is free, already ours, or released
 * in this plan by an edge that is itself not blocked); then each resource gets its diff and the
 * typed API operations that realise it (design section 4):
 *
 * - edges (./edges.ts): create is one POST with every module in the body (it binds the
 *   address); an HTTPS edge's routes follow as one POST each on the edge it creates. Update and
 *   adopt are one PATCH with every changed scalar and `set` module, then one DELETE per removed
 *   module: one changed module is exactly one operation.
 * - routes (./routes.ts): the same, plus the fail-closed auth-kind swap.
 * - hostports are released before they are claimed: an edge that drops a hostport another edge
 *   of this plan claims has its PATCH in phase `release`, or, when that PATCH also claims a
 *   hostport some other edge holds now, a release PATCH dropping only the claimed hostports
 *   followed by the normal PATCH in `main`; an edge being deleted whose hostports another edge
 *   claims gets such a release PATCH before its DELETE.
 * - bot users (./bot-users.ts), by name.
 * - deletions (routes, edges, bot users) are in phase `delete`, last.
 */

import { compareCodeUnits } from '../compare.js';
import type { Readiness, Reference } from '../kinds/index.js';
import type { DesiredSet } from '../manifest/schema.js';
import { botUserAddress, planBotUsers } from './bot-users.js';
import {
  type EndpointMatch,
  type EndpointOrphan,
  type EndpointPlanInput,
  planEndpoint,
  planEndpointDelete,
  resolveEndpoints,
  withReferences,
} from './cloud-endpoints.js';
import {
  type LiveState,
  NO_WAIT_FLAG,
  type PlanBasis,
  PlanContext,
  type PlanMemo,
  type PlanOptions,
  type ResolveReference,
} from './context.js';
import { cutoverList } from './cutover.js';
import { planCreate, planDelete, planUpdate } from './edges.js';
import { blockHeldUrls, endpointClaims, urlHandovers } from './endpoint-claims.js';
import { holdReferencedDeletes, planGenericKinds } from './generic.js';
import { addDeleteEdges, assertAcyclic, hoistRequiredCreates } from './graph.js';
import { type Deletable, guardDeletions, leaveExcluded, resolveHostports } from './guards.js';
import { type Cutover, leftAlone, PLAN_FORMAT_VERSION, type Plan } from './model.js';
import { canonicalHostports } from './normalize.js';
import { outlineOf } from './outline.js';
import {
  classifyLive,
  desiredEdges,
  type EdgeMatch,
  type Orphan,
  type Ownership,
  resolveOwnership,
} from './ownership.js';
import { mayFitLater, patchPlan } from './patch.js';
import { releaseAuthFirst } from './routes.js';

export { DEFAULT_MAX_DELETES, type LiveState, PlanMemo, type PlanOptions } from './context.js';

/** The plan's note on an account without access to edges (its edges read as none). */
export const EDGES_UNAVAILABLE_WARNING =
  'the account has no access to edges: its edges read as none; cloud endpoints and bot users are managed as usual';

/**
 * A plan that creates edges: the hosted service no longer accepts new ones (an account that still
 * has edges may keep and change them), so the way forward is said where the create is planned.
 */
export function newEdgesWarning(addresses: readonly string[]): string {
  const shown = addresses.slice(0, 3).join(', ');
  const more = addresses.length > 3 ? ` and ${addresses.length - 3} more` : '';
  const what = addresses.length === 1 ? 'a new edge' : `${addresses.length} new edges`;
  return (
    `${what} (${shown}${more}): the hosted service no longer accepts new edges; ` +
    'write a CloudEndpoint manifest instead (edgesync migrate translates edge manifests; see docs/migrate.md)'
  );
}

type Deletion =
  | { readonly kind: 'edge'; readonly orphan: Orphan }
  | { readonly kind: 'endpoint'; readonly orphan: EndpointOrphan };

function deletable(d: Deletion): Deletable {
  const { orphan } = d;
  return {
    address: orphan.address,
    id: orphan.live.record.id,
    protect: orphan.live.meta?.protect === true,
    noun: d.kind,
  };
}

/** `suspend: true`: matched (so never an orphan to delete), then left exactly as it is live. */
function suspended(
  ctx: PlanContext,
  address: string,
  manifest: { readonly suspend?: boolean | undefined },
  liveId: string | undefined,
): boolean {
  if (manifest.suspend !== true) return false;
  ctx.blocked.push({
    address,
    kind: 'suspended',
    reason:
      liveId === undefined
        ? 'suspend: true: not created while suspended'
        : `${liveId}: suspend: true: left exactly as it is live`,
  });
  return true;
}

/**
 * The plan that makes `live` match `desired`. Pure and deterministic (sorted by address). With
 * a memo, a change to a few edges since the memo's last plan is planned from that plan
 * (./patch.ts): the same plan, for the cost of those edges.
 */
export function buildPlan(desired: DesiredSet, live: LiveState, options: PlanOptions = {}): Plan {
  const { memo } = options;
  if (memo === undefined) return planAll(desired, live, options).plan;
  const patched = patchFromMemo(memo, desired, live, options);
  if (patched !== undefined) return patched;
  const made = planAll(desired, live, options);
  memo.basis = made;
  return made.plan;
}

/**
 * The plan patched from the memo's basis or its fallback, or undefined. Both are forgotten
 * while planning (a plan that throws leaves no half-updated basis behind); when neither fits,
 * the basis becomes the fallback of the whole plan the caller makes next, if it may still fit a
 * later set: the set may be passing through a state the next plan leaves (a file read half
 * written), and the plan after it is then patched from the basis before, not made whole. A
 * basis made against other live records of another count (the plan before a cycle's creates)
 * can never fit again, and is dropped before the whole plan, not kept beside it: at 10,000 edges
 * the start-up cycle's plan of 25,000 creates is some 45 MB.
 */
function patchFromMemo(
  memo: PlanMemo,
  desired: DesiredSet,
  live: LiveState,
  options: PlanOptions,
): Plan | undefined {
  const { basis, fallback } = memo;
  memo.basis = undefined;
  memo.fallback = undefined;
  const patched =
    patchPlan(basis, desired, live, options) ?? patchPlan(fallback, desired, live, options);
  if (patched !== undefined) {
    memo.basis = patched.basis;
    return patched.plan;
  }
  if (basis !== undefined && mayFitLater(basis, live)) memo.fallback = basis;
  return undefined;
}

/** Plans the whole set; returns the plan with what a later patch of it reuses. */
function planAll(desired: DesiredSet, live: LiveState, options: PlanOptions): PlanBasis {
  const ctx = new PlanContext(options);
  const { targets } = options;
  if (live.edgesUnavailable === true) ctx.warnings.push(EDGES_UNAVAILABLE_WARNING);
  if (options.targets !== undefined) ctx.warnings.push(targetedWarning(options.targets));
  // Every kind without a planner of its own, from its definition (src/kinds/); references to
  // those resolve through it.
  const resolve = planGenericKinds(ctx, desired, live);
  const liveEdges = classifyLive(live, ctx.owner);
  // Matched over the whole set, then narrowed to `--target`: what is not targeted is neither
  // planned nor an orphan to delete; its live hostports and URLs stay held.
  const ownership = narrowOwnership(
    resolveOwnership(desiredEdges(desired), liveEdges),
    options.targets,
  );
  ctx.blocked.push(...ownership.blocked);

  const endpoints = narrowEndpoints(
    resolveEndpoints(desired.cloudEndpoints, live.cloudEndpoints ?? [], ctx.owner),
    options.targets,
  );
  ctx.blocked.push(
    ...endpoints.blocked.filter((b) => targets === undefined || targets.has(b.address)),
  );
  const allowed = allowedDeletions(ctx, desired, ownership, endpoints.orphans);
  const deletions = allowed.flatMap((d) => (d.kind === 'edge' ? [d.orphan] : []));
  // Suspended resources keep everything they hold live (an edge its hostports).
  const matches = ownership.matches.filter(
    (m) => !suspended(ctx, m.desired.address, m.desired.manifest, m.live?.record.id),
  );
  const endpointMatches = endpoints.matches.filter(
    (m: EndpointMatch) => !suspended(ctx, m.address, m.desired, m.live?.record.id),
  );
  const active = resolveHostports(ctx, matches, deletions, ownership.hostportHolders);
  const claims = edgeClaimsOf(ctx, active);
  // What other edges claim, before the endpoints' claims join: an edge being deleted releases
  // these by a PATCH first, and the endpoints' by its DELETE (a cut-over).
  const edgeClaims = new Map(claims);
  // Endpoints claiming a host and port an edge of this plan releases: the edge goes first; a
  // URL passing between endpoints: the one leaving it goes first.
  const endpointOrphans = allowed.flatMap((d) => (d.kind === 'endpoint' ? [d.orphan] : []));
  const handovers = urlHandovers(
    blockHeldUrls(
      ctx,
      endpointClaims(ctx, endpointMatches, {
        active,
        deletions,
        holders: ownership.hostportHolders,
        claims,
      }),
      live.cloudEndpoints ?? [],
      keptOrphans(endpoints.orphans, endpointOrphans),
    ),
    endpointOrphans,
  );

  for (const m of active) {
    if (m.live === undefined) planCreate(ctx, m.desired);
    else planUpdate(ctx, m, claims, ownership.hostportHolders);
  }
  const newEdges = active.filter((m) => m.live === undefined).map((m) => m.desired.address);
  if (newEdges.length > 0) ctx.warnings.push(newEdgesWarning(newEdges));
  const cutovers = cutoverList(handovers.plans, deletions);
  const cutoverEdges = new Set(cutovers.map((c) => c.edge));
  for (const d of deletions) planDelete(ctx, d, edgeClaims, cutoverEdges.has(d.address));
  for (const e of handovers.plans) planEndpointWithReferences(ctx, e, resolve);
  for (const o of endpointOrphans) {
    planEndpointDelete(ctx, o, handovers.releasing.has(o.address));
  }
  planBotUsers(
    ctx,
    targets === undefined
      ? desired.botUsers
      : desired.botUsers.filter((b) => targets.has(botUserAddress(b.name))),
    live.botUsers,
  );
  releaseAuthFirst(ctx, live.httpsEdges);
  holdReferencedDeletes(ctx, desired, live, resolve);
  const plan = finishPlan(ctx, cutovers);
  if (options.memo === undefined) {
    return {
      desired,
      live,
      options,
      plan,
      updated: new Map(),
      addressOf: new Map(),
      claims,
      holders: ownership.hostportHolders,
    };
  }
  const updated = new Map<string, EdgeMatch>();
  const addressOf = new Map<string, string>();
  for (const m of active) {
    if (m.live === undefined) continue;
    updated.set(m.desired.address, m);
    addressOf.set(m.live.record.id, m.desired.address);
  }
  return {
    desired,
    live,
    options,
    plan,
    updated,
    addressOf,
    claims,
    holders: ownership.hostportHolders,
  };
}

/**
 * An endpoint whose policy names other resources (`{ ref: office }`): planned with their IDs in
 * place, after the creates of those this plan makes; blocked when one names nothing.
 */
function planEndpointWithReferences(
  ctx: PlanContext,
  input: EndpointPlanInput,
  resolve: ResolveReference,
): void {
  const m = input.match.desired;
  const { manifest, after, missing, notReady } = withReferences(m, resolve);
  if (missing.length > 0) {
    ctx.blocked.push({
      address: input.match.address,
      kind: 'guard',
      reason: missing.map(missingReference).join('; '),
    });
    return;
  }
  // Created only once what it needs is ready: an endpoint on a domain whose certificate still
  // waits for DNS would be served with a certificate browsers reject. Not one that takes over
  // an edge's host in a cut-over: the edge goes either way, and waiting would leave the host
  // unserved.
  const waits = input.match.live === undefined && input.cutover === undefined;
  if (waits && ctx.waitForReady && notReady.length > 0) {
    // Left out alone (as a conflict is): the rest of the plan goes on, and the cycle stays
    // unconverged until the next one finds the domain ready.
    ctx.blocked.push({
      address: input.match.address,
      kind: 'conflict',
      reason: `${notReady.map(waitingFor).join('; ')}; created at a later cycle once it is ready (${NO_WAIT_FLAG} creates it now)`,
      waiting_for: notReady.map(({ address, readiness: { records, ...rest } }) => ({
        address,
        ...rest,
        ...(records === undefined ? {} : { records: [...records] }),
      })),
    });
    return;
  }
  planEndpoint(
    ctx,
    manifest === m && after.length === 0
      ? input
      : { ...input, match: { ...input.match, desired: manifest }, after },
  );
}

/** A reference that names nothing, in words. */
function missingReference(r: Reference): string {
  if (r.keys === undefined)
    return `refers to ${r.kind}.${r.name}, which is neither declared nor live`;
  return `needs a ${r.kind} for ${r.name} (${r.keys.join(' or ')}), which is neither declared nor live`;
}

/** What a resource waits for, in words: the resource, its state and the records it needs. */
function waitingFor(w: { readonly address: string; readonly readiness: Readiness }): string {
  return `waits for ${w.address} to be ready (${w.readiness.state}: ${w.readiness.message})`;
}

/** The note a narrowed plan carries: like `terraform -target`, it is not the whole picture. */
function targetedWarning(targets: ReadonlySet<string>): string {
  return `--target: only ${[...targets].sort(compareCodeUnits).join(', ')} planned; every other resource is left as it is (plan without --target to see the whole)`;
}

/** The edges of `--target` only (all of them without one). */
function narrowOwnership(
  ownership: Ownership,
  targets: ReadonlySet<string> | undefined,
): Ownership {
  if (targets === undefined) return ownership;
  return {
    ...ownership,
    matches: ownership.matches.filter((m) => targets.has(m.desired.address)),
    orphans: ownership.orphans.filter((o) => targets.has(o.address)),
    blocked: ownership.blocked.filter((b) => targets.has(b.address)),
  };
}

/** The cloud endpoints of `--target` only (all of them without one). */
function narrowEndpoints<T extends { matches: EndpointMatch[]; orphans: EndpointOrphan[] }>(
  endpoints: T,
  targets: ReadonlySet<string> | undefined,
): T {
  if (targets === undefined) return endpoints;
  return {
    ...endpoints,
    matches: endpoints.matches.filter((m) => targets.has(m.address)),
    orphans: endpoints.orphans.filter((o) => targets.has(o.address)),
  };
}

/** IDs of our endpoints no manifest keeps that stay all the same (protect, a guard). */
function keptOrphans(
  all: readonly EndpointOrphan[],
  deleted: readonly EndpointOrphan[],
): ReadonlySet<string> {
  if (all.length === deleted.length) return new Set();
  const going = new Set(deleted.map((o) => o.live.record.id));
  return new Set(all.map((o) => o.live.record.id).filter((id) => !going.has(id)));
}

/** The orphans (edges and endpoints, one managed set) the deletion guards let go. */
function allowedDeletions(
  ctx: PlanContext,
  desired: DesiredSet,
  ownership: Ownership,
  endpointOrphans: readonly EndpointOrphan[],
): Deletion[] {
  const emptySet =
    desired.tlsEdges.length + desired.httpsEdges.length + desired.cloudEndpoints.length === 0;
  const orphans = leaveExcluded(
    ctx,
    [
      ...ownership.orphans.map((orphan): Deletion => ({ kind: 'edge', orphan })),
      ...endpointOrphans.map((orphan): Deletion => ({ kind: 'endpoint', orphan })),
    ],
    deletable,
    desired.excluded,
  );
  return guardDeletions(ctx, orphans, deletable, emptySet);
}

/** Hostport -> address of the active edge that claims it and does not hold it yet. */
function edgeClaimsOf(ctx: PlanContext, active: readonly EdgeMatch[]): Map<string, string> {
  const claims = new Map<string, string>();
  for (const m of active) {
    // A list of one or two: `includes` beats building a Set per edge.
    const own = canonicalHostports(m.live?.record.hostports);
    for (const h of ctx.wanted(m.desired)) {
      if (!own.includes(h)) claims.set(h, m.desired.address);
    }
  }
  return claims;
}

/** Sorts what the context gathered and counts it into the plan value. */
function finishPlan(ctx: PlanContext, cutovers: Cutover[]): Plan {
  ctx.changes.sort((a, b) => compareCodeUnits(a.address, b.address));
  hoistRequiredCreates(ctx.changes);
  addDeleteEdges(ctx.changes);
  assertAcyclic(ctx.changes);
  ctx.blocked.sort(
    (a, b) => compareCodeUnits(a.address, b.address) || compareCodeUnits(a.reason, b.reason),
  );
  const summary = { create: 0, update: 0, delete: 0, adopt: 0, noop: 0 };
  for (const c of ctx.changes) {
    if (c.action === 'replace') {
      summary.create += 1;
      summary.delete += 1;
    } else {
      summary[c.action] += 1;
    }
  }
  return {
    format_version: PLAN_FORMAT_VERSION,
    owner: ctx.owner,
    changes: ctx.changes,
    blocked: ctx.blocked,
    warnings: ctx.warnings,
    // Only when there is one: a plan without a cut-over reads (and renders) as before.
    ...(cutovers.length === 0 ? {} : { cutovers }),
    ...(ctx.readiness.length === 0
      ? {}
      : { readiness: ctx.readiness.sort((a, b) => compareCodeUnits(a.address, b.address)) }),
    ...(ctx.impacts.length === 0
      ? {}
      : { policy_impact: ctx.impacts.sort((a, b) => compareCodeUnits(a.address, b.address)) }),
    summary,
  };
}

/** How many API operations applying the plan would issue (0: nothing to write). */
export function operationCount(plan: Plan): number {
  return outlineOf(plan).operations;
}

/** True when applying the plan would write something (or something is blocked; left alone is not).
 *
 * @internal
 */
export function planHasChanges(plan: Plan): boolean {
  return plan.blocked.some((b) => !leftAlone(b)) || plan.changes.some((c) => c.action !== 'noop');
}
