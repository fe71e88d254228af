/**
 * The plan's dependency graph: every ordering of the plan is an edge between its operations, and
 * the executor (../apply/executor.ts) orders by nothing else. Pure.
 *
 * The plan value states the graph compactly and `planGraph` reads it back as edges:
 * - `Operation.after` (references: a resource is created before what refers to it, ./generic.ts;
 *   a delete waits for the deletes of the kinds that may refer to it, `KindDefinition.refersTo`,
 *   added here by `addDeleteEdges`);
 * - `Operation.requires` (a host and port or URL released before an endpoint claims it,
 *   ./endpoint-claims.ts; in the cut-over, the edge's delete before the endpoints that take its
 *   hosts and ports);
 * - `Operation.phase`, the operation's role: `release` (drops what another operation claims;
 *   an auth module a route loses before the one another route of its edge gains), `cutover`,
 *   `main`, `delete`. Each role is a set of edges (`EdgeReason`), through three join nodes so
 *   that "every release before every later write" costs one edge per operation, not one per pair.
 * The executor runs the graph in waves of units (a root's operations of one role, in order; a
 * cut-over unit: an edge's delete with the endpoints that take over from it); a cycle is a
 * located error before anything is sent (`assertAcyclic`).
 */
import { ManifestError } from '../errors.js';
import { KINDS } from '../kinds/index.js';
import type { Operation, Phase, ResourceChange } from './model.js';

/** Kind -> the kinds that may refer to it. */
const REFERRERS: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const k of KINDS) {
    for (const to of k.refersTo ?? []) out.set(to, [...(out.get(to) ?? []), k.kind]);
  }
  return out;
})();

/** The roles in the order their edges put them: a root's operations run role by role. */
const RANK: Readonly<Record<Phase, number>> = { release: 0, cutover: 1, main: 2, delete: 3 };

/**
 * Moves the creates a referrer of an earlier phase needs into phase `release`, first of all: an
 * endpoint created in the cut-over (right after its edge's delete) on a domain this plan
 * reserves needs the reservation before it, and the cut-over runs before every `main` write
 * (edge `cutover`): left in `main`, the create would close a cycle.
 */
export function hoistRequiredCreates(changes: readonly ResourceChange[]): void {
  const rank = (p: Phase) => RANK[p];
  const needed = new Map<string, number>();
  for (const c of changes) {
    for (const op of c.operations) {
      for (const r of op.after ?? []) {
        needed.set(r, Math.min(needed.get(r) ?? rank(op.phase), rank(op.phase)));
      }
    }
  }
  for (const c of changes) {
    const by = needed.get(c.root);
    if (by === undefined) continue;
    for (const op of c.operations) {
      if (op.method === 'POST' && op.binds !== undefined && rank(op.phase) > by) {
        op.phase = 'release';
      }
    }
  }
}

/**
 * Adds the delete edges: each delete of a resource waits for the deletes, in the same plan, of
 * resources of the kinds that may refer to it (an endpoint's, before its domain's).
 */
export function addDeleteEdges(changes: readonly ResourceChange[]): void {
  const deletesByKind = new Map<string, string[]>();
  for (const c of changes) {
    if (c.operations.some((op) => op.method === 'DELETE' && op.phase === 'delete')) {
      deletesByKind.set(c.kind, [...(deletesByKind.get(c.kind) ?? []), c.root]);
    }
  }
  if (deletesByKind.size < 2) return;
  for (const c of changes) {
    const referrers = (REFERRERS.get(c.kind) ?? []).flatMap((k) => deletesByKind.get(k) ?? []);
    if (referrers.length === 0) continue;
    for (const op of c.operations) {
      if (op.method !== 'DELETE' || op.phase !== 'delete') continue;
      op.after = [...new Set([...(op.after ?? []), ...referrers])].sort();
    }
  }
}

/** One operation of the plan; `index` is its place in plan order (changes, then operations). */
export interface GraphStep {
  readonly index: number;
  readonly change: ResourceChange;
  readonly op: Operation;
}

/**
 * Why one operation waits for another:
 * - `sequence`: a root's operations, role by role and in plan order within a role (an edge
 *   before its routes; a route's auth module removed in `release` before another route of the
 *   edge gains one: the swap fails closed);
 * - `reference`: `after`: what is referred to is created first, a referrer deleted first;
 * - `claim`: `requires`: a host and port or URL is released before the endpoint claims it;
 * - `handover`: the cut-over: an endpoint is created as soon as the edge whose host and port it
 *   takes over is deleted (one unit, so the gap is one round trip);
 * - `release`: every release before every later write: the plan names the endpoints' claims
 *   (`requires`), not an edge's claim on a hostport another edge drops, which any later write may
 *   be;
 * - `cutover`: the cut-over before the other writes, so on an account whose edges are read-only
 *   the first refused delete stops the cycle before anything was written;
 * - `settle`: deletes after every other operation (so after all that stops referring to what
 *   they delete), and only when none of those failed.
 */
export type EdgeReason =
  | 'sequence'
  | 'reference'
  | 'claim'
  | 'handover'
  | 'release'
  | 'cutover'
  | 'settle';

/**
 * The join nodes (numbered after the operations): `released` follows every release, `cut` every
 * cut-over operation, `settled` every operation that is not a delete.
 */
export type Join = 'released' | 'cut' | 'settled';

/** `from` must have finished before `to` starts; nodes are operation indexes or join nodes. */
export interface GraphEdge {
  readonly from: number;
  readonly to: number;
  readonly reason: EdgeReason;
}

/** What the executor runs as one: a root's operations of one role, one after another. */
export interface Unit {
  readonly root: string;
  readonly lead: readonly GraphStep[];
  /**
   * A cut-over unit's endpoints (each its operations in order): sent together as soon as the
   * lead (an edge's delete) succeeded.
   */
  readonly follow: readonly (readonly GraphStep[])[];
  /** A unit of the cut-over (it stops at the first failed unit: see ../apply/cutover.ts). */
  readonly cutover: boolean;
  /**
   * Started only when no operation before this join failed (a clean cycle): the cut-over
   * (`released`), the deletes (`settled`).
   */
  readonly clean?: Join | undefined;
}

export interface PlanGraph {
  readonly steps: readonly GraphStep[];
  readonly edges: readonly GraphEdge[];
  /** The node number of each join. */
  readonly joins: Readonly<Record<Join, number>>;
  /** The units in waves: each unit's predecessors are all in earlier waves. */
  readonly waves: readonly (readonly Unit[])[];
  /**
   * Units on a cycle or behind one, run in a last wave where their unmet predecessors fail them
   * closed; none from a plan (the planner refuses a cycle: `assertAcyclic`).
   */
  readonly cycle?: readonly Unit[] | undefined;
}

/** The operation graph of a plan's changes (sorted by address, as `buildPlan` leaves them). */
export function planGraph(changes: readonly ResourceChange[]): PlanGraph {
  const steps: GraphStep[] = [];
  for (const change of changes) {
    for (const op of change.operations) steps.push({ index: steps.length, change, op });
  }
  const joins = { released: steps.length, cut: steps.length + 1, settled: steps.length + 2 };
  const byRoot = new Map<string, GraphStep[]>();
  for (const s of steps) {
    const list = byRoot.get(s.change.root);
    if (list === undefined) byRoot.set(s.change.root, [s]);
    else list.push(s);
  }
  const edges: GraphEdge[] = [];
  for (const list of byRoot.values()) {
    list.sort((a, b) => RANK[a.op.phase] - RANK[b.op.phase] || a.index - b.index);
    for (let i = 1; i < list.length; i += 1) {
      edges.push({
        from: (list[i - 1] as GraphStep).index,
        to: (list[i] as GraphStep).index,
        reason: 'sequence',
      });
    }
  }
  for (const s of steps) {
    const rank = RANK[s.op.phase];
    const link = (from: number, reason: EdgeReason) => edges.push({ from, to: s.index, reason });
    for (const root of s.op.after ?? []) {
      if (root === s.change.root) continue;
      for (const t of byRoot.get(root) ?? [])
        if (RANK[t.op.phase] <= rank) link(t.index, 'reference');
    }
    for (const root of s.op.requires ?? []) {
      if (root === s.change.root) continue;
      for (const t of byRoot.get(root) ?? []) {
        const r = RANK[t.op.phase];
        if (r < rank) link(t.index, 'claim');
        else if (r === rank && s.op.phase === 'cutover') link(t.index, 'handover');
      }
    }
    roleEdges(s, joins, edges);
  }
  const { waves, cycle } = wavesOf(unitsOf(steps, byRoot), edges, joins);
  return { steps, edges, joins, waves, ...(cycle === undefined ? {} : { cycle }) };
}

/** The edges an operation's role makes, through the joins. */
function roleEdges(s: GraphStep, joins: Readonly<Record<Join, number>>, edges: GraphEdge[]): void {
  const out = (to: number, reason: EdgeReason) => edges.push({ from: s.index, to, reason });
  const into = (from: number, reason: EdgeReason) => edges.push({ from, to: s.index, reason });
  switch (s.op.phase) {
    case 'release':
      out(joins.released, 'release');
      out(joins.settled, 'settle');
      return;
    case 'cutover':
      into(joins.released, 'release');
      out(joins.cut, 'cutover');
      out(joins.settled, 'settle');
      return;
    case 'main':
      into(joins.released, 'release');
      into(joins.cut, 'cutover');
      out(joins.settled, 'settle');
      return;
    case 'delete':
      into(joins.settled, 'settle');
      return;
  }
}

/**
 * The units: a root's operations of one role; in the cut-over, the endpoints that take over
 * from an edge (the first root their `requires` names with cut-over operations) join its unit.
 */
function unitsOf(
  steps: readonly GraphStep[],
  byRoot: ReadonlyMap<string, readonly GraphStep[]>,
): Unit[] {
  const groups = new Map<string, GraphStep[]>();
  for (const s of steps) {
    const key = `${s.change.root} ${s.op.phase}`;
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [s]);
    else list.push(s);
  }
  const inCutover = (root: string) => byRoot.get(root)?.some((t) => t.op.phase === 'cutover');
  const leadOf = (list: readonly GraphStep[]): string | undefined => {
    const first = list[0] as GraphStep;
    if (first.op.phase !== 'cutover') return undefined;
    const lead = list.flatMap((s) => s.op.requires ?? []).find((r) => inCutover(r));
    return lead === first.change.root ? undefined : lead;
  };
  // A root that follows another's lead is not a lead itself: what names it leads its own unit.
  const following = new Set<string>();
  for (const list of groups.values()) {
    if (leadOf(list) !== undefined) following.add((list[0] as GraphStep).change.root);
  }
  const followers = new Map<string, GraphStep[][]>();
  const leads: GraphStep[][] = [];
  for (const list of groups.values()) {
    const lead = leadOf(list);
    if (lead === undefined || following.has(lead)) {
      leads.push(list);
      continue;
    }
    const known = followers.get(lead);
    if (known === undefined) followers.set(lead, [list]);
    else known.push(list);
  }
  return leads.map((lead) => {
    const first = lead[0] as GraphStep;
    const { phase } = first.op;
    const cutover = phase === 'cutover';
    return {
      root: first.change.root,
      lead,
      follow: cutover ? (followers.get(first.change.root) ?? []) : [],
      cutover,
      clean: cutover ? 'released' : phase === 'delete' ? 'settled' : undefined,
    };
  });
}

/**
 * The units in waves (Kahn's levels: a join is as late as its latest predecessor, a unit one
 * wave after its latest); each wave in plan order. Units left over sit on a cycle or behind one.
 */
function wavesOf(
  units: readonly Unit[],
  edges: readonly GraphEdge[],
  joins: Readonly<Record<Join, number>>,
): { waves: Unit[][]; cycle?: Unit[] } {
  const unitOf = new Map<number, number>();
  units.forEach((u, i) => {
    for (const s of [...u.lead, ...u.follow.flat()]) unitOf.set(s.index, i);
  });
  // Nodes: units 0..n-1, then the joins.
  const n = units.length;
  const node = (x: number) =>
    x >= joins.released ? n + (x - joins.released) : (unitOf.get(x) ?? -1);
  const preds = Array.from({ length: n + 3 }, () => new Set<number>());
  for (const e of edges) {
    const from = node(e.from);
    const to = node(e.to);
    if (from !== to && from >= 0 && to >= 0) preds[to]?.add(from);
  }
  const succs = Array.from({ length: n + 3 }, () => [] as number[]);
  const waiting = preds.map((p) => p.size);
  preds.forEach((p, to) => {
    for (const from of p) succs[from]?.push(to);
  });
  const level = new Array<number>(n + 3).fill(-1);
  const queue = waiting.flatMap((w, i) => (w === 0 ? [i] : []));
  for (let q = 0; q < queue.length; q += 1) {
    const x = queue[q] as number;
    // A unit runs one wave after its latest predecessor; a join is as late as its latest.
    let at = x < n ? 0 : -1;
    for (const p of preds[x] ?? []) at = Math.max(at, (level[p] as number) + (x < n ? 1 : 0));
    level[x] = at;
    for (const y of succs[x] ?? []) {
      waiting[y] = (waiting[y] as number) - 1;
      if (waiting[y] === 0) queue.push(y);
    }
  }
  const waves: Unit[][] = [];
  const left: Unit[] = [];
  units.forEach((u, i) => {
    if (waiting[i] !== 0) {
      left.push(u);
      return;
    }
    const at = level[i] as number;
    while (waves.length <= at) waves.push([]);
    (waves[at] as Unit[]).push(u);
  });
  const byPlanOrder = (a: Unit, b: Unit) => (a.lead[0]?.index ?? 0) - (b.lead[0]?.index ?? 0);
  const out = waves.filter((w) => w.length > 0).map((w) => w.sort(byPlanOrder));
  // Were a cycle there, its units run last, where their unmet predecessors fail them closed.
  if (left.length === 0) return { waves: out };
  return { waves: [...out, left.sort(byPlanOrder)], cycle: left };
}

/**
 * Throws a located error when the plan's graph has a cycle (naming the loop of roots). Only changes
 * with operations are nodes, so a caller holding them (a plan's outline) passes those alone.
 */
export function assertAcyclic(changes: readonly ResourceChange[]): void {
  const graph = planGraph(changes);
  if (graph.cycle === undefined) return;
  const keyOf = (s: GraphStep) => `${s.change.root} ${s.op.phase}`;
  const needs = new Map<string, Set<string>>();
  const sourceOf = new Map<string, ResourceChange['source']>();
  for (const s of graph.steps) {
    const { change } = s;
    if (change.source !== undefined && change.address === change.root) {
      sourceOf.set(change.root, change.source);
    }
    if (!needs.has(keyOf(s))) needs.set(keyOf(s), new Set());
  }
  for (const e of graph.edges) {
    const from = graph.steps[e.from];
    const to = graph.steps[e.to];
    if (from === undefined || to === undefined || keyOf(from) === keyOf(to)) continue;
    needs.get(keyOf(to))?.add(keyOf(from));
  }
  const cycle = findCycle(needs)?.map((node) => node.slice(0, node.lastIndexOf(' ')));
  if (cycle === undefined) return;
  const loop = [...cycle, cycle[0]].join(' -> ');
  throw new ManifestError(
    cycle.map((root) => {
      const at = sourceOf.get(root);
      return {
        file: at?.file ?? '',
        line: at?.line ?? 0,
        column: at?.column ?? 0,
        path: '',
        message: `${root} is part of a dependency cycle (${loop}): no order creates them`,
        severity: 'error' as const,
      };
    }),
  );
}

/** One cycle of the graph (its nodes in order), or undefined. */
function findCycle(needs: ReadonlyMap<string, ReadonlySet<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of needs.get(node) ?? []) {
      if (!needs.has(next)) continue;
      const s = state.get(next);
      if (s === 'open') return stack.slice(stack.indexOf(next));
      if (s === undefined) {
        const found = visit(next);
        if (found !== undefined) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...needs.keys()].sort()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found !== undefined) return found;
  }
  return undefined;
}
