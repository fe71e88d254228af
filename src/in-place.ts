/**
 * Lists made from another by putting a few items in the places of others, every other place
 * holding the same object: the set after a saved file (its resources in the places of theirs,
 * `src/manifest/build.ts`), a live list with records read back by ID (`src/apply/live-index.ts`).
 * Such a list says which list it was made from and at which places, so a reader comparing the two
 * lists item by item (the planner's patch, the report's values, the incremental read's check)
 * visits those places, not 50,000. The list made from is held weakly: nothing here keeps an old
 * list alive, and a list whose origin is gone is simply not known (the reader walks it).
 */

interface Origin {
  readonly from: WeakRef<readonly unknown[]>;
  /** The places that may hold another object than `from` has there, ascending. */
  readonly at: readonly number[];
}

const origins = new WeakMap<readonly unknown[], Origin>();

/** How many lists back `replacedAt` follows the origins (a cycle's lists are made once or twice). */
const MAX_LINKS = 4;

/**
 * Records that `to` is `from` (as long) with only the places `at` holding other objects.
 * The caller makes `to` and vouches for it.
 */
export function madeInPlace(
  from: readonly unknown[],
  to: readonly unknown[],
  at: readonly number[],
): void {
  if (from === to || from.length !== to.length) return;
  origins.set(to, { from: new WeakRef(from), at: [...new Set(at)].sort((a, b) => a - b) });
}

/**
 * The places (ascending) at which `now` may hold another object than `before`, every other
 * place holding the same object in both (and the two as long): `[]` for the same list; undefined
 * when `now` is not known to be made from `before` (the caller compares every place).
 */
export function replacedAt(
  before: readonly unknown[],
  now: readonly unknown[],
): readonly number[] | undefined {
  if (before === now) return [];
  let list = now;
  let at: readonly number[] = [];
  for (let link = 0; link < MAX_LINKS; link++) {
    const origin = origins.get(list);
    const from = origin?.from.deref();
    if (origin === undefined || from === undefined) return undefined;
    at = link === 0 ? origin.at : [...new Set([...at, ...origin.at])].sort((a, b) => a - b);
    if (from === before) return at;
    list = from;
  }
  return undefined;
}

/**
 * Whether `test` holds at each place where `now` may hold another object than `before` (the
 * two as long): the places `replacedAt` knows, else every place of `now`, in ascending order.
 */
export function everyReplaced(
  before: readonly unknown[],
  now: readonly unknown[],
  test: (i: number) => boolean,
): boolean {
  const at = replacedAt(before, now);
  if (at === undefined) {
    for (let i = 0; i < now.length; i++) if (!test(i)) return false;
    return true;
  }
  for (const i of at) if (!test(i)) return false;
  return true;
}
