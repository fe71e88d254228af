/**
 * The plan's dependency graph: which root's operations wait for which in their phase
 * (`Operation.after`).
 * Its edges come from references: a resource is created before what refers to it (the referring
 * operation requires the create, ./generic.ts), and deleted after it: a delete of a kind waits
 * for the deletes of the kinds that may refer to it (`KindDefinition.refersTo`), added here.
 * The executor runs each phase's roots in the graph's order (../apply/executor.ts); a cycle is
 * a located error before anything is sent.
 */
import { ManifestError } from '../errors.js';
import { KINDS } from '../kinds/index.js';
import type { Phase, ResourceChange } from './model.js';

/** Kind -> the kinds that may refer to it. */
const REFERRERS: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const k of KINDS) {
    for (const to of k.refersTo ?? []) out.set(to, [...(out.get(to) ?? []), k.kind]);
  }
  return out;
})();

/** The phases in the order the executor runs them. */
const PHASE_ORDER: readonly Phase[] = ['release', 'cutover', 'main', 'delete'];

/**
 * Moves the creates a referrer of an earlier phase needs into phase `release`, first of all: an
 * endpoint created in the cut-over (right after its edge's delete) on a domain this plan
 * reserves needs the reservation before it, and `after` orders roots within one phase only.
 */
export function hoistRequiredCreates(changes: readonly ResourceChange[]): void {
  const rank = (p: Phase) => PHASE_ORDER.indexOf(p);
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
    if (c.operations.length === 0) continue;
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

/**
 * Throws a located error when the roots' `after` edges within one phase form a cycle. Only
 * changes with operations are nodes (`writing`, when the caller has them: a 50,000-resource plan
 * after one edit has a handful).
 */
export function assertAcyclic(
  changes: readonly ResourceChange[],
  writing: readonly ResourceChange[] = changes.filter((c) => c.operations.length > 0),
): void {
  const phasesOf = new Map<string, Set<string>>();
  for (const c of writing) {
    const set = phasesOf.get(c.root) ?? new Set<string>();
    for (const op of c.operations) set.add(op.phase);
    phasesOf.set(c.root, set);
  }
  const needs = new Map<string, Set<string>>();
  for (const c of writing) {
    for (const op of c.operations) {
      const node = `${c.root} ${op.phase}`;
      const set = needs.get(node) ?? new Set<string>();
      needs.set(node, set);
      for (const r of op.after ?? []) {
        if (r !== c.root && phasesOf.get(r)?.has(op.phase) === true) set.add(`${r} ${op.phase}`);
      }
    }
  }
  const cycle = findCycle(needs)?.map((node) => node.slice(0, node.lastIndexOf(' ')));
  if (cycle === undefined) return;
  const sourceOf = new Map<string, ResourceChange['source']>();
  for (const c of changes) {
    if (c.source !== undefined && c.address === c.root) sourceOf.set(c.root, c.source);
  }
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
