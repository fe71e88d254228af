/**
 * Field paths inside a manifest document: kept as segments (`['routes', 0, 'oauth']`) from where
 * they are found to where they are used, and formatted to the one string form only where they
 * are shown (diagnostics, plan output, the saved plan file): `routes[0].oauth.provider`,
 * `metadata["edgesync/owner"]`. Nothing reads that form back. Pure.
 */
import { z } from 'zod';

export type Segment = string | number;
export type FieldPath = readonly Segment[];

/** A field path as data: string keys and list indices. */
export const fieldPathSchema = z.array(z.union([z.string(), z.int().nonnegative()])).readonly();

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['routes', 0, 'request_headers', 'add', 'X-Key']` -> `routes[0].request_headers.add["X-Key"]`. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const segment of path) out = appendSegment(out, segment);
  return out;
}

/** A formatted path one segment longer: `formatPath([...path, segment])` from `formatPath(path)`. */
function appendSegment(formatted: string, segment: Segment): string {
  if (typeof segment === 'number') return `${formatted}[${segment}]`;
  if (IDENTIFIER.test(segment)) return formatted === '' ? segment : `${formatted}.${segment}`;
  return `${formatted}[${JSON.stringify(segment)}]`;
}

/**
 * A total order of paths, segment by segment: an index before a key, indices by value, keys by
 * code unit, a path before the paths below it. Only for a stable order in memory: what is shown
 * is sorted by its formatted form where it is formatted.
 */
export function comparePaths(a: FieldPath, b: FieldPath): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] as Segment;
    const y = b[i] as Segment;
    if (x === y) continue;
    if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The paths sorted (`comparePaths`), each once. */
export function uniquePaths(paths: readonly FieldPath[]): FieldPath[] {
  const sorted = [...paths].sort(comparePaths);
  return sorted.filter((p, i) => i === 0 || comparePaths(sorted[i - 1] as FieldPath, p) !== 0);
}
