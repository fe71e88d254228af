/**
 * Where each record of a live list is, by ID: kept beside the list (a snapshot's lists are
 * never changed once made), built by one walk the first time a list is asked, and handed on to
 * a list made from it with records replaced in their places (`replaced`: the read-back after a
 * write). A daemon edit at 50,000 edges looks up and replaces the few records it touched,
 * without walking or indexing the 50,000 again; the list made says where it differs
 * (`madeInPlace`, src/in-place.ts), so what compares it with the list before need not walk either.
 */

import { madeInPlace } from '../in-place.js';

interface Positions {
  readonly at: ReadonlyMap<string, number>;
  /** No ID appears twice (the API's IDs are unique; a list built by hand may repeat one). */
  readonly unique: boolean;
}

const positions = new WeakMap<readonly unknown[], Positions>();

function positionsOf<T extends { readonly id: string }>(list: readonly T[]): Positions {
  let index = positions.get(list);
  if (index === undefined) {
    const at = new Map<string, number>();
    let unique = true;
    for (let i = 0; i < list.length; i++) {
      const id = (list[i] as T).id;
      if (at.has(id)) unique = false;
      at.set(id, i);
    }
    index = { at, unique };
    positions.set(list, index);
  }
  return index;
}

/** The record of `list` with this ID (the last, should it appear twice), or undefined. */
export function recordById<T extends { readonly id: string }>(
  list: readonly T[],
  id: string,
): T | undefined {
  const at = positionsOf(list).at.get(id);
  return at === undefined ? undefined : list[at];
}

/**
 * `list` with each record of `fresh` put in the place of the record with its ID, or undefined
 * when one of them is not in `list` (or is gone), or an ID repeats: the caller walks the list.
 */
export function replaced<T extends { readonly id: string }>(
  list: readonly T[],
  fresh: ReadonlyMap<string, T | undefined>,
): readonly T[] | undefined {
  const index = positionsOf(list);
  if (!index.unique) return undefined;
  for (const [id, item] of fresh) {
    if (item === undefined || item.id !== id || !index.at.has(id)) return undefined;
  }
  const out = list.slice();
  const at: number[] = [];
  for (const [id, item] of fresh) {
    const i = index.at.get(id) as number;
    out[i] = item as T;
    at.push(i);
  }
  // The same IDs in the same places, and the same records but at `at`.
  positions.set(out, index);
  madeInPlace(list, out, at);
  return out;
}
