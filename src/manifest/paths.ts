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
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
