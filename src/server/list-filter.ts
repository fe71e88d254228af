/**
 * A list with an optional CEL `filter` (./endpoints/cel.ts), for every kind that takes one: the
 * filter is first held to the kind's filterable fields when it lists them (a filter naming
 * another one is a 400 `invalid_cel_expression`), then run over the records as they are at the
 * request, newest first, scanned in slices that let other requests through; the page is the
 * first `limit` the filter keeps, one more telling that a next page exists, whose URI carries
 * the filter too.
 */
import type { CelInput } from '@bufbuild/cel';
import { compileFilter, firstKept } from './endpoints/cel.js';
import { type Call, list, type Reply } from './handler-common.js';
import type { Renderer } from './render.js';
import type { Collection } from './store.js';

export interface FilteredList<T extends { readonly id: string }> {
  readonly collection: Collection<T>;
  /** The page's key holding the items, and the collection's path. */
  readonly key: string;
  readonly path: string;
  /** A record's JSON. */
  readonly one: (rec: T) => string;
  /** What a filter sees as `obj`; the record's read shape when absent. */
  readonly cel?: (rec: T) => CelInput;
  /**
   * The kind's filterable fields (`a.b`: that member of `a` only); every field of `obj` when
   * absent.
   */
  readonly fields?: ReadonlySet<string>;
}

export async function filteredList<T extends { readonly id: string }>(
  render: Renderer,
  call: Call,
  kind: FilteredList<T>,
): Promise<Reply> {
  const { collection, key, path, one } = kind;
  const filter = call.page?.filter;
  if (filter === undefined) return list(render, call, collection, key, path, one);
  const matches = compileFilter(filter, kind.fields);
  const cel = kind.cel ?? ((rec: T) => JSON.parse(one(rec)) as CelInput);
  const page = call.page ?? { beforeId: undefined, limit: 100 };
  const { items } = collection.page(page.beforeId, Number.MAX_SAFE_INTEGER);
  const kept = await firstKept(items, (rec) => matches(cel(rec)), page.limit + 1);
  return list(render, call, collection, key, path, one, {
    found: { items: kept.slice(0, page.limit), more: kept.length > page.limit },
    query: new URLSearchParams({ filter }).toString(),
  });
}
