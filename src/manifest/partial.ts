/**
 * The parts of a document that did parse, for the semantic phase: a document with shape errors
 * still takes part in the whole-set rules (duplicate names and hostports, route rules) as far
 * as its shape allows, so both kinds of error come out in one run. The fields and routes that
 * carry a shape error are left out, the rest is parsed again; if that fails too (a broken
 * `name`, a required field gone), the document sits the semantic phase out as before. Such a
 * document is never assembled into the desired set. Pure.
 */
import type { z } from 'zod';
import type { FieldPath } from './paths.js';
import type { DocumentValue } from './semantics.js';

export interface PartialDocument {
  readonly value: DocumentValue;
  /** Index in the pruned `routes` -> index in the document as written. */
  readonly routeIndex: readonly number[];
  /** What was left out: top-level fields and whole routes. */
  readonly pruned: readonly FieldPath[];
}

export function partialDocument(
  schema: z.ZodType,
  value: unknown,
  bad: readonly FieldPath[],
): PartialDocument | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const obj: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const pruned: FieldPath[] = [];
  const dropKeys = new Set<string>();
  const dropRoutes = new Set<number>();
  for (const path of bad) {
    const [head, index] = path;
    // Without its kind or name a document cannot be told apart from the others.
    if (typeof head !== 'string' || head === 'kind' || head === 'name') return undefined;
    if (head === 'routes' && typeof index === 'number' && Array.isArray(obj.routes)) {
      dropRoutes.add(index);
    } else {
      dropKeys.add(head);
    }
  }
  let routeIndex: number[] = [];
  if (Array.isArray(obj.routes) && !dropKeys.has('routes')) {
    routeIndex = obj.routes.map((_, i) => i).filter((i) => !dropRoutes.has(i));
    obj.routes = routeIndex.map((i) => (obj.routes as unknown[])[i]);
    for (const i of [...dropRoutes].sort((a, b) => a - b)) pruned.push(['routes', i]);
  }
  for (const key of dropKeys) {
    delete obj[key];
    pruned.push([key]);
  }
  const parsed = schema.safeParse(obj);
  if (!parsed.success) return undefined;
  return { value: parsed.data as DocumentValue, routeIndex, pruned };
}

/** A path in the pruned value -> the same place in the document as written. */
export function originalPath(partial: PartialDocument, path: FieldPath): FieldPath {
  const [head, index, ...rest] = path;
  if (head !== 'routes' || typeof index !== 'number') return path;
  return ['routes', partial.routeIndex[index] ?? index, ...rest];
}

/** True when an issue at `path` (as written) is about something that was left out. */
export function aboutPruned(partial: PartialDocument, path: FieldPath): boolean {
  return partial.pruned.some((p) => p.length <= path.length && p.every((s, i) => s === path[i]));
}
