/**
 * The plan after a small change, made from the last one (the daemon's `PlanMemo`): a plan of
 * 50,000 resources after one saved edge, or after the GET that verifies its PATCH, plans that
 * edge, not the set.
 *
 * Every step of the planner that reads the whole set (ownership, the deletion guards, hostport
 * claims and conflicts, endpoint claims and cut-overs, bot users, the generic kinds) reads of an
 * edge only its key: its name, `id:`, hostports and `suspend:`, and of a live edge its ID, age,
 * hostports and ownership mark. When the only objects that differ from the last plan's inputs
 * are edges (manifests or live records) in the same places, each with the same key, and each is
 * an edge the last plan updated (matched, not blocked), those steps give exactly what they gave
 * last time; only the differing edges are diffed again (`planUpdate`), and their changes take
 * the place of theirs in the last plan. Anything else gives undefined: the caller plans the whole
 * set. Proven equal to a plan made afresh by `test/unit/plan/patch.property.test.ts`.
 */
import type { HttpsEdge, TlsEdge } from '../api/schemas.js';
import { compareCodeUnits } from '../compare.js';
import { everyReplaced } from '../in-place.js';
import { KINDS } from '../kinds/index.js';
import type { DesiredSet, HttpsEdgeManifest, TlsEdgeManifest } from '../manifest/schema.js';
import { type LiveState, type PlanBasis, PlanContext, type PlanOptions } from './context.js';
import { planUpdate } from './edges.js';
import { addDeleteEdges, assertAcyclic } from './graph.js';
import type { Plan, ResourceChange } from './model.js';
import { canonicalHostports } from './normalize.js';
import { lowerBound, outlineOf, patchedOutline, samePlaces } from './outline.js';
import {
  desiredEdgeOf,
  type EdgeKind,
  type EdgeMatch,
  edgeAddress,
  type LiveEdge,
  liveEdgeOf,
} from './ownership.js';
import { releaseAuthFirst } from './routes.js';

/** The plan of `desired` against `live` from `basis`, or undefined when the whole set must be planned. */
export function patchPlan(
  basis: PlanBasis | undefined,
  desired: DesiredSet,
  live: LiveState,
  options: PlanOptions,
): { plan: Plan; basis: PlanBasis } | undefined {
  if (basis === undefined || !sameOptions(basis.options, options)) return undefined;
  if (!sameOthers(basis.desired, desired) || !sameOtherRecords(basis.live, live)) return undefined;
  const ctx = new PlanContext(options);
  const changed = new Map<string, EdgeMatch>();
  const found =
    changedManifests(basis, 'tls_edge', basis.desired.tlsEdges, desired.tlsEdges, changed) &&
    changedManifests(basis, 'https_edge', basis.desired.httpsEdges, desired.httpsEdges, changed) &&
    changedRecords(basis, ctx.owner, 'tls_edge', basis.live.tlsEdges, live.tlsEdges, changed) &&
    changedRecords(basis, ctx.owner, 'https_edge', basis.live.httpsEdges, live.httpsEdges, changed);
  if (!found) return undefined;
  // Nothing differs (the same file read again): the last plan is this one.
  if (changed.size === 0) {
    return { plan: basis.plan, basis: { ...basis, desired, live, options } };
  }
  // A blocked entry of the edge may come from its own diff: plan the whole set to be sure.
  if (basis.plan.blocked.some((b) => changed.has(b.address))) return undefined;
  const addresses = [...changed.keys()].sort(compareCodeUnits);
  // The basis's maps are updated in place (shared with the basis returned); a patch that gives
  // up puts them back, so the basis stays true to its own plan (the caller may keep it).
  const undo: (() => void)[] = [];
  for (const address of addresses) {
    const m = changed.get(address) as EdgeMatch;
    const record = (m.live as LiveEdge).record;
    for (const h of canonicalHostports(record.hostports)) {
      const held = basis.holders.get(h);
      if (held?.record.id === record.id) {
        undo.push(() => basis.holders.set(h, held));
        basis.holders.set(h, m.live as LiveEdge);
      }
    }
    const last = basis.updated.get(address) as EdgeMatch;
    undo.push(() => basis.updated.set(address, last));
    basis.updated.set(address, m);
  }
  for (const address of addresses) {
    planUpdate(ctx, changed.get(address) as EdgeMatch, basis.claims, basis.holders);
  }
  const https = addresses.flatMap((a) => {
    const m = changed.get(a) as EdgeMatch;
    return m.desired.kind === 'https_edge' ? [(m.live as LiveEdge).record as HttpsEdge] : [];
  });
  releaseAuthFirst(ctx, https);
  if (ctx.blocked.length + ctx.warnings.length + ctx.impacts.length > 0) {
    for (let k = undo.length - 1; k >= 0; k--) (undo[k] as () => void)();
    return undefined;
  }
  const { changes, dropped } = merged(basis.plan.changes, addresses, ctx.changes);
  const summary = summaryOf(basis.plan.summary, dropped, ctx.changes);
  const plan: Plan = { ...basis.plan, changes, summary };
  patchedOutline(basis.plan, plan, dropped, ctx.changes);
  // Only changes that write take part in the graph: those of the outline.
  const { writing } = outlineOf(plan);
  addDeleteEdges(writing);
  assertAcyclic(writing);
  return { plan, basis: { ...basis, desired, live, options, plan } };
}

/**
 * Whether `basis` may still be patched into a plan of a later set, `live` being the records the
 * next whole plan is made against: only if its records other than edges are those same objects
 * in the same places, with as many edges. Records are only ever replaced by newer objects (a
 * listing, a read-back), never given back, so a basis that differs from `live` there now differs
 * from every later snapshot too.
 */
export function mayFitLater(basis: PlanBasis, live: LiveState): boolean {
  return sameOtherRecords(basis.live, live);
}

/**
 * The last plan's changes without the changed roots', with theirs in address order. A root's
 * changes are its edge's and its routes' (`routeAddress`: the edge's address and a suffix), so
 * they lie among the addresses that begin with the root's: found by binary search, not a scan.
 */
function merged(
  before: readonly ResourceChange[],
  roots: readonly string[],
  fresh: readonly ResourceChange[],
): { changes: ResourceChange[]; dropped: ResourceChange[] } {
  const drop: number[] = [];
  for (const root of roots) {
    for (let i = lowerBound(before, root); i < before.length; i++) {
      const c = before[i] as ResourceChange;
      if (!c.address.startsWith(root)) break;
      if (c.root === root) drop.push(i);
    }
  }
  drop.sort((a, b) => a - b);
  const dropped = drop.map((i) => before[i] as ResourceChange);
  // A copy, then a few moves within it: no walk over the changes kept.
  const changes = before.slice();
  if (samePlaces(before, drop, fresh)) {
    // Each fresh change in the place of the one of its address: what the moves below give,
    // without growing the copy (a second copy of 50,000 at 50,000 resources).
    drop.forEach((i, k) => {
      changes[i] = fresh[k] as ResourceChange;
    });
    return { changes, dropped };
  }
  for (let k = drop.length - 1; k >= 0; k--) changes.splice(drop[k] as number, 1);
  for (const c of fresh) changes.splice(lowerBound(changes, c.address), 0, c);
  return { changes, dropped };
}

/** `summary` with `dropped` taken out and `added` counted in. */
function summaryOf(
  summary: Plan['summary'],
  dropped: readonly ResourceChange[],
  added: readonly ResourceChange[],
): Plan['summary'] {
  const out = { ...summary };
  const count = (changes: readonly ResourceChange[], by: number) => {
    for (const c of changes) {
      if (c.action === 'replace') {
        out.create += by;
        out.delete += by;
      } else {
        out[c.action] += by;
      }
    }
  };
  count(dropped, -1);
  count(added, 1);
  return out;
}

function sameOptions(a: PlanOptions, b: PlanOptions): boolean {
  return (
    a.owner === b.owner &&
    a.allowEmpty === b.allowEmpty &&
    a.maxDeletes === b.maxDeletes &&
    a.policyPreview === b.policyPreview &&
    a.waitForReady === b.waitForReady &&
    a.targets === b.targets &&
    sameSet(a.ownBotUsers, b.ownBotUsers)
  );
}

function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  const x = a ?? new Set<string>();
  const y = b ?? new Set<string>();
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/** The same objects in the same places (either list may be absent: none). */
function sameItems(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return everyReplaced(x, y, (i) => x[i] === y[i]);
}

function sameByKind(
  a: Readonly<Record<string, readonly unknown[]>> | undefined,
  b: Readonly<Record<string, readonly unknown[]>> | undefined,
): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const kinds = new Set([...Object.keys(x), ...Object.keys(y)]);
  return [...kinds].every((k) => sameItems(x[k], y[k]));
}

/** Everything of the desired set but its edges is the same objects. */
function sameOthers(a: DesiredSet, b: DesiredSet): boolean {
  return (
    a.excluded === b.excluded &&
    a.tlsEdges.length === b.tlsEdges.length &&
    a.httpsEdges.length === b.httpsEdges.length &&
    sameItems(a.botUsers, b.botUsers) &&
    sameItems(a.cloudEndpoints, b.cloudEndpoints) &&
    sameByKind(a.resources, b.resources)
  );
}

/** Every live record but the edges' is the same object. */
function sameOtherRecords(a: LiveState, b: LiveState): boolean {
  return (
    (a.edgesUnavailable === true) === (b.edgesUnavailable === true) &&
    a.tlsEdges.length === b.tlsEdges.length &&
    a.httpsEdges.length === b.httpsEdges.length &&
    sameItems(a.botUsers, b.botUsers) &&
    sameItems(a.cloudEndpoints, b.cloudEndpoints) &&
    sameByKind(withoutMirrors(a), withoutMirrors(b))
  );
}

/**
 * A snapshot's records by kind without the lists that are the same arrays as its own lists
 * (`observe` and the read-back after a write put the four kinds with planners of their own
 * there too): those are compared through their lists, an edge read back by ID not being a
 * change to another kind.
 */
function withoutMirrors(live: LiveState): LiveState['resources'] {
  const { resources } = live;
  if (resources === undefined) return undefined;
  const mirrored = new Set(
    KINDS.flatMap((k) =>
      k.setKey !== undefined && resources[k.kind] === live[k.setKey] ? [k.kind] : [],
    ),
  );
  if (mirrored.size === 0) return resources;
  return Object.fromEntries(Object.entries(resources).filter(([kind]) => !mirrored.has(kind)));
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((v, i) => v === b[i]));
}

/** What the whole-set steps read of a manifest is the same. */
function sameManifestKey(
  a: TlsEdgeManifest | HttpsEdgeManifest,
  b: TlsEdgeManifest | HttpsEdgeManifest,
): boolean {
  return (
    a.name === b.name &&
    a.id === b.id &&
    a.suspend === b.suspend &&
    sameList(canonicalHostports(a.hostports), canonicalHostports(b.hostports))
  );
}

/** What the whole-set steps read of a live edge is the same. */
function sameRecordKey(a: LiveEdge, b: LiveEdge): boolean {
  return (
    a.record.id === b.record.id &&
    a.record.created_at === b.record.created_at &&
    a.owned === b.owned &&
    a.meta?.owner === b.meta?.owner &&
    a.meta?.name === b.meta?.name &&
    a.meta?.protect === b.meta?.protect &&
    (a.meta === undefined) === (b.meta === undefined) &&
    sameList(canonicalHostports(a.record.hostports), canonicalHostports(b.record.hostports))
  );
}

/**
 * Adds each manifest that differs (same key, an updated edge) to `changed`; false otherwise.
 * Only the places the loader says it replaced are compared when it says (`everyReplaced`).
 */
function changedManifests(
  basis: PlanBasis,
  kind: EdgeKind,
  before: readonly (TlsEdgeManifest | HttpsEdgeManifest)[],
  now: readonly (TlsEdgeManifest | HttpsEdgeManifest)[],
  changed: Map<string, EdgeMatch>,
): boolean {
  return everyReplaced(before, now, (i) => {
    const a = before[i] as TlsEdgeManifest;
    const b = now[i] as TlsEdgeManifest;
    if (a === b) return true;
    if (!sameManifestKey(a, b)) return false;
    const address = edgeAddress(kind, b.name);
    const last = basis.updated.get(address);
    if (last === undefined || last.desired.manifest !== a) return false;
    changed.set(address, { ...last, desired: desiredEdgeOf(kind, b) });
    return true;
  });
}

/**
 * Adds each live edge that differs (same key, an updated edge) to `changed`; false otherwise.
 * Only the places records were read back into are compared when that is known (`everyReplaced`).
 */
function changedRecords(
  basis: PlanBasis,
  owner: string,
  kind: EdgeKind,
  before: readonly (TlsEdge | HttpsEdge)[],
  now: readonly (TlsEdge | HttpsEdge)[],
  changed: Map<string, EdgeMatch>,
): boolean {
  return everyReplaced(before, now, (i) => {
    const a = before[i] as TlsEdge;
    const b = now[i] as TlsEdge;
    if (a === b) return true;
    const address = basis.addressOf.get(a.id);
    const last = address === undefined ? undefined : basis.updated.get(address);
    if (address === undefined || last?.live === undefined || last.live.record !== a) return false;
    const view = liveEdgeOf(kind, b, owner);
    if (!sameRecordKey(last.live, view)) return false;
    changed.set(address, { ...(changed.get(address) ?? last), live: view });
    return true;
  });
}
