/**
 * The survivor among look-alikes, one rule for every place that must pick one: the planner's
 * duplicate edges and namesake bot users, and the applier's lookup after a create whose outcome
 * was unknown. They must agree, or a recovery could converge on one record while the
 * next plan deletes it as a duplicate. Oldest = earliest `created_at` as an instant (RFC 3339
 * with any offset or precision), then the smaller ID by code unit (whatever the ID format; IDs
 * of one kind never tie). A `created_at` that does not parse sorts after every one that does.
 * Pure.
 */

export interface Aged {
  readonly created_at: string;
  readonly id: string;
}

function instant(value: string): number {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/** Sort comparator: the survivor (the oldest) first. */
export function survivorFirst(a: Aged, b: Aged): number {
  const ta = instant(a.created_at);
  const tb = instant(b.created_at);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The survivor of `items` (the oldest), or undefined when there is none. */
export function survivor<T extends Aged>(items: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const item of items) if (best === undefined || survivorFirst(item, best) < 0) best = item;
  return best;
}
