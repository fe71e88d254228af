/**
 * Field paths inside a manifest document: the segments form used internally and the one string
 * form shown in diagnostics and stored in `sensitive` (`routes[0].oauth.provider`,
 * `metadata["edgesync/owner"]`). Pure.
 */

export type Segment = string | number;
export type FieldPath = readonly Segment[];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['routes', 0, 'request_headers', 'add', 'X-Key']` -> `routes[0].request_headers.add["X-Key"]`. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const segment of path) out = appendSegment(out, segment);
  return out;
}

/** A formatted path one segment longer: `formatPath([...path, segment])` from `formatPath(path)`. */
export function appendSegment(formatted: string, segment: Segment): string {
  if (typeof segment === 'number') return `${formatted}[${segment}]`;
  if (IDENTIFIER.test(segment)) return formatted === '' ? segment : `${formatted}.${segment}`;
  return `${formatted}[${JSON.stringify(segment)}]`;
}
