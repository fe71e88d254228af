/**
 * Field paths inside a manifest document: the segments form used internally and the one string
 * form shown in diagnostics and stored in `sensitive` (`routes[0].oauth.provider`,
 * `metadata["edgesync/owner"]`), and back (`parsePath`). Pure.
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

/**
 * `formatPath`'s inverse: `oauth.provider.google.client_secret`, `add["X-Key"]`, `a[0]` to
 * segments; undefined for anything it would not write.
 */
export function parsePath(formatted: string): Segment[] | undefined {
  const out: Segment[] = [];
  let i = 0;
  while (i < formatted.length) {
    if (formatted[i] === '[') {
      const close = formatted.indexOf(']', i);
      if (formatted[i + 1] === '"') {
        // A JSON string: its end is the first `"]` whose quote is not escaped.
        let end = i + 2;
        for (; end < formatted.length; end++) {
          if (formatted[end] === '\\') end += 1;
          else if (formatted[end] === '"') break;
        }
        if (formatted[end + 1] !== ']') return undefined;
        out.push(JSON.parse(formatted.slice(i + 1, end + 1)) as string);
        i = end + 2;
      } else {
        const digits = formatted.slice(i + 1, close);
        if (close === -1 || !/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
        out.push(Number(digits));
        i = close + 1;
      }
    } else {
      if (out.length > 0) {
        if (formatted[i] !== '.') return undefined;
        i += 1;
      }
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(formatted.slice(i));
      if (match === null) return undefined;
      out.push(match[0]);
      i += match[0].length;
    }
  }
  return formatPath(out) === formatted ? out : undefined;
}
