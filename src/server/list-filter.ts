/**
 * A list with a CEL `filter` over a kind whose filterable fields are fixed (the account
 * resources: each kind lists them): the filter is first held to those fields (a filter naming
 * another one is a 400 `invalid_cel_expression`), then run as the endpoints' filter is
 * (endpoints/cel.ts: bounds, slices that yield) over the records' read shapes as `obj`.
 */
import { type CelInput, parse } from '@bufbuild/cel';
import { compileFilter, firstKept } from './endpoints/cel.js';
import { ENDPOINT_ERROR_CODE } from './endpoints/codes.js';
import { RequestError } from './errors.js';
import { type Call, list, type Reply } from './handler-common.js';
import type { Renderer } from './render.js';
import type { Collection } from './store.js';

interface Node {
  readonly exprKind?: { readonly case?: string; readonly value?: unknown };
}

/** `obj.a.b` as `['a', 'b']` when `node` is such a select chain down to `obj`; else undefined. */
function objPath(node: Node): string[] | undefined {
  const path: string[] = [];
  let at: Node | undefined = node;
  while (at?.exprKind?.case === 'selectExpr') {
    const select = at.exprKind.value as { operand?: Node; field: string };
    path.unshift(select.field);
    at = select.operand;
  }
  const kind = at?.exprKind;
  if (kind?.case !== 'identExpr' || (kind.value as { name: string }).name !== 'obj')
    return undefined;
  return path;
}

/**
 * The fields of `obj` a parsed filter names, each as a dotted path cut to the depth of the
 * allowed field it matches; `obj` used other than through `.field` (bare, indexed) is refused,
 * since what it reads could then not be told.
 */
function checkFields(root: unknown, allowed: readonly string[]): void {
  const roots = new Set(allowed.map((f) => f.split('.')[0]));
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const path = objPath(node as Node);
    if (path !== undefined) {
      const [first, second] = path;
      const nested = allowed.filter((f) => f.startsWith(`${first}.`));
      const ok =
        first !== undefined &&
        roots.has(first) &&
        (nested.length === 0 ||
          allowed.includes(first) ||
          (second !== undefined && nested.includes(`${first}.${second}`)));
      if (!ok) {
        const named = path.length === 0 ? 'obj itself' : `obj.${path.join('.')}`;
        throw new RequestError(
          400,
          ENDPOINT_ERROR_CODE.invalidCel,
          `filter names ${named}; it may name only obj.${allowed.join(', obj.')}`,
        );
      }
      continue;
    }
    for (const value of Array.isArray(node) ? node : Object.values(node)) stack.push(value);
  }
}

/**
 * A page of `collection` for the call, filtered when the call has a `filter` (which may name
 * only `fields`), each record rendered by `one`, in the `{key, uri, next_page_uri}` envelope.
 */
export async function filteredList<T extends { readonly id: string }>(
  render: Renderer,
  call: Call,
  collection: Collection<T>,
  where: { readonly key: string; readonly path: string; readonly fields: readonly string[] },
  one: (rec: T) => string,
): Promise<Reply> {
  const filter = call.page?.filter;
  if (filter === undefined) return list(render, call, collection, where.key, where.path, one);
  const matches = compileFilter(filter);
  // compileFilter parsed it already, so it parses here too.
  checkFields(parse(filter).expr, where.fields);
  const page = call.page ?? { beforeId: undefined, limit: 100 };
  const { items } = collection.page(page.beforeId, Number.MAX_SAFE_INTEGER);
  const kept = await firstKept(
    items,
    (rec) => matches(JSON.parse(one(rec)) as CelInput),
    page.limit + 1,
  );
  return list(render, call, collection, where.key, where.path, one, {
    found: { items: kept.slice(0, page.limit), more: kept.length > page.limit },
    query: new URLSearchParams({ filter }).toString(),
  });
}
