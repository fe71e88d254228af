/**
 * What the readers of a plan take from it without walking every change: the changes that
 * write, and the resources it keeps or creates by kind. A daemon plan of 50,000 resources after
 * one saved edge has a handful of changes that write; the guards, the read-back after the write
 * and the report read those, not the 50,000.
 *
 * Made once per plan object by one walk over its changes (`outlineOf`), or, for a plan patched
 * from the last one (./patch.ts), from that plan's outline and the changes swapped
 * (`patchedOutline`): proven equal to the walk by `test/unit/plan/patch.property.test.ts`. A plan
 * is never changed once made, so the outline kept beside it stays true.
 */
import { compareCodeUnits } from '../compare.js';
import type { Plan, ResourceChange } from './model.js';

export interface PlanOutline {
  /** The changes with at least one operation, in the plan's order (by address). */
  readonly writing: readonly ResourceChange[];
  /** The changes that are not up to date: an action other than `noop`, or an operation. */
  readonly pending: readonly ResourceChange[];
  /** Their operations, all together. */
  readonly operations: number;
  /** Resources kept or created by kind: every change but deletes and routes. */
  readonly managed: Readonly<Record<string, number>>;
  /** The changes are in address order (a plan the planner made; one written by hand may not be). */
  readonly ordered: boolean;
}

const outlines = new WeakMap<Plan, PlanOutline>();

/**
 * How a plan patched from the last one was made (./patch.ts): that plan's changes, less
 * `dropped`, with each of `added` put in turn before the first change not before its address;
 * and how that plan was made, a few plans back (a daemon edit plans twice: the edit, then the
 * check after its write). Kept beside the plan, so its readers can make theirs from what they
 * made of an earlier one.
 */
export interface PlanPatch {
  readonly before: readonly ResourceChange[];
  readonly dropped: readonly ResourceChange[];
  readonly added: readonly ResourceChange[];
  readonly prior: PlanPatch | undefined;
}

/** How many patches back a plan remembers (each keeps its plan's changes array alive). */
const PATCHES_KEPT = 4;

const patches = new WeakMap<Plan, PlanPatch>();

/**
 * The patches that made `plan` from the plan whose changes are `from`, oldest first (none for
 * that plan itself), or undefined when it was not made from that one within the patches kept.
 */
export function patchesSince(
  plan: Plan,
  from: readonly ResourceChange[],
): readonly PlanPatch[] | undefined {
  // The same plan again (a file read again as it was): nothing to do since.
  if (plan.changes === from) return [];
  const out: PlanPatch[] = [];
  for (let p = patches.get(plan); p !== undefined; p = p.prior) {
    out.push(p);
    if (p.before === from) return out.reverse();
  }
  return undefined;
}

function kept(patch: PlanPatch | undefined, depth: number): PlanPatch | undefined {
  if (patch === undefined || depth === 0) return undefined;
  return { ...patch, prior: kept(patch.prior, depth - 1) };
}

/** The outline of `plan`: kept beside it, or made by one walk over its changes. */
export function outlineOf(plan: Plan): PlanOutline {
  const known = outlines.get(plan);
  if (known !== undefined) return known;
  const writing: ResourceChange[] = [];
  const pending: ResourceChange[] = [];
  const managed: Record<string, number> = {};
  let ordered = true;
  let last = '';
  for (const c of plan.changes) {
    if (c.operations.length > 0) writing.push(c);
    if (isPending(c)) pending.push(c);
    if (countsAsManaged(c)) managed[c.kind] = (managed[c.kind] ?? 0) + 1;
    if (compareCodeUnits(last, c.address) > 0) ordered = false;
    last = c.address;
  }
  const outline = { writing, pending, operations: operationsOf(writing), managed, ordered };
  outlines.set(plan, outline);
  return outline;
}

/**
 * Keeps beside `after` (the plan `before` with `dropped` taken out and `added` put in) its
 * outline, made from `before`'s and those changes only.
 */
export function patchedOutline(
  before: Plan,
  after: Plan,
  dropped: readonly ResourceChange[],
  added: readonly ResourceChange[],
): void {
  // The changes array only, not the plan: no chain of plans is kept alive.
  patches.set(after, {
    before: before.changes,
    dropped,
    added,
    prior: kept(patches.get(before), PATCHES_KEPT - 1),
  });
  const last = outlineOf(before);
  const gone = new Set(dropped);
  const writing = last.writing.filter((c) => !gone.has(c));
  const pending = last.pending.filter((c) => !gone.has(c));
  for (const c of added) {
    if (c.operations.length > 0) writing.splice(lowerBound(writing, c.address), 0, c);
    if (isPending(c)) pending.splice(lowerBound(pending, c.address), 0, c);
  }
  const counts = { ...last.managed };
  for (const c of dropped) if (countsAsManaged(c)) counts[c.kind] = (counts[c.kind] ?? 0) - 1;
  for (const c of added) if (countsAsManaged(c)) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
  // A kind counted down to none is absent, as in a walk.
  const managed = Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));
  outlines.set(after, {
    writing,
    pending,
    operations: operationsOf(writing),
    managed,
    ordered: last.ordered,
  });
}

/**
 * The change at `address` that is its own root (an edge, an endpoint: not one of its routes),
 * found by binary search (a plan's changes are in address order), or by a walk in a plan that
 * is not (one written by hand).
 */
export function rootChange(plan: Plan, address: string): ResourceChange | undefined {
  return changesAt(plan, address).find((c) => c.root === address);
}

/** The changes at `address` (binary search, or a walk in a plan whose changes are not in order). */
export function changesAt(plan: Plan, address: string): readonly ResourceChange[] {
  const { changes } = plan;
  if (!outlineOf(plan).ordered) return changes.filter((c) => c.address === address);
  const out: ResourceChange[] = [];
  for (let i = lowerBound(changes, address); i < changes.length; i++) {
    const c = changes[i] as ResourceChange;
    if (c.address !== address) break;
    out.push(c);
  }
  return out;
}

function isPending(c: ResourceChange): boolean {
  return c.action !== 'noop' || c.operations.length > 0;
}

function countsAsManaged(c: ResourceChange): boolean {
  return c.action !== 'delete' && c.kind !== 'route';
}

function operationsOf(writing: readonly ResourceChange[]): number {
  let n = 0;
  for (const c of writing) n += c.operations.length;
  return n;
}

/** The first index whose address is not before `address` (a list in address order). */
export function lowerBound(
  changes: readonly { readonly address: string }[],
  address: string,
): number {
  let lo = 0;
  let hi = changes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodeUnits((changes[mid] as { address: string }).address, address) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether putting each of `fresh` in the place of the change at `drop` (ascending) of `before`
 * (in address order) gives what taking those out and putting each of `fresh` in turn before
 * the first change not before its address gives: as many, each of the address of the one it
 * replaces, their addresses strictly ascending, and no change kept beside one of the same address.
 */
export function samePlaces(
  before: readonly { readonly address: string }[],
  drop: readonly number[],
  fresh: readonly { readonly address: string }[],
): boolean {
  if (drop.length !== fresh.length) return false;
  const dropping = new Set(drop);
  const keptAt = (i: number, address: string) =>
    i >= 0 && i < before.length && !dropping.has(i) && before[i]?.address === address;
  return drop.every((i, k) => {
    const { address } = fresh[k] as { readonly address: string };
    const previous = fresh[k - 1];
    return (
      before[i]?.address === address &&
      (previous === undefined || compareCodeUnits(previous.address, address) < 0) &&
      !keptAt(i - 1, address) &&
      !keptAt(i + 1, address)
    );
  });
}
