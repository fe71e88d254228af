/**
 * Values that must never be printed: everything read through `{ env }` / `{ file }` and every
 * secret field, whatever field holds it (a `name` too). The plan masks sensitive fields by
 * path; a value can still travel further than its field, into an address (`tls_edge.<name>`), a
 * conflict reason (a hostport) or a log line. So every text sink of the CLI and the daemon (plan
 * and apply output, the apply result, status errors, log lines) passes through `maskValues` with
 * the set's sensitive values as well. Pure.
 */
import { appendSegment, parsePath, type Segment } from './paths.js';
import type { DesiredSet } from './schema.js';

/** What a masked value is shown as (the plan's own mask). */
export const MASKED = '(sensitive)';

/** Shorter values are not masked: they would mangle messages and are no secret anyway. */
export const MIN_MASKED_LENGTH = 4;

/** The string values at the `sensitive` paths of every resource and route of the set. */
export function sensitiveValues(set: DesiredSet): string[] {
  const out = new Set<string>();
  // The same few paths recur on thousands of resources: each is parsed once per call.
  const parsed = new Map<string, readonly Segment[] | undefined>();
  const collect = (resource: object, sensitive: readonly string[]) => {
    if (sensitive.length === 0) return;
    for (const value of valuesOf(resource, sensitive, parsed)) out.add(value);
  };
  for (const e of set.tlsEdges) collect(e, e.sensitive);
  for (const e of set.httpsEdges) {
    collect(e, e.sensitive);
    for (const r of e.routes) collect(r, r.sensitive);
  }
  for (const b of set.botUsers) collect(b, b.sensitive);
  return [...out];
}

/**
 * One resource's sensitive values, kept per resource object: the daemon's manifests are the
 * same objects from cycle to cycle (`FileCache`), and are never changed once built.
 */
const resourceValues = new WeakMap<object, readonly string[]>();

function valuesOf(
  resource: object,
  sensitive: readonly string[],
  parsed: Map<string, readonly Segment[] | undefined>,
): readonly string[] {
  const known = resourceValues.get(resource);
  if (known !== undefined) return known;
  const out: string[] = [];
  // Straight down each sensitive path (no walk over the rest of the resource).
  for (const formatted of sensitive) {
    let path = parsed.get(formatted);
    if (path === undefined && !parsed.has(formatted)) {
      path = parsePath(formatted);
      parsed.set(formatted, path);
    }
    if (path === undefined || path.length === 0) return walkedValuesOf(resource, sensitive);
    // Never the loader's own fields, nor an edge's routes (each route has its own paths).
    if (path[0] === 'source' || path[0] === 'sensitive' || path[0] === 'routes') continue;
    let value: unknown = resource;
    for (const segment of path) {
      // A number names a list item and a string an object's key, as `formatPath` wrote them.
      const fits =
        typeof segment === 'number'
          ? Array.isArray(value)
          : typeof value === 'object' && value !== null && !Array.isArray(value);
      value =
        fits && Object.hasOwn(value as object, segment)
          ? (value as Record<string | number, unknown>)[segment]
          : undefined;
    }
    collectStrings(value, out);
  }
  resourceValues.set(resource, out);
  return out;
}

/** Every string at or below `value` (long enough to mask). */
function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    if (value.length >= MIN_MASKED_LENGTH) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collectStrings(item, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const key in value) collectStrings((value as Record<string, unknown>)[key], out);
  }
}

/** The reference: a walk over the whole resource, matching formatted paths. */
function walkedValuesOf(resource: object, sensitive: readonly string[]): readonly string[] {
  const out: string[] = [];
  const wanted = new Set(sensitive);
  const walk = (value: unknown, path: string, inside: boolean): void => {
    const here = inside || (path !== '' && wanted.has(path));
    if (typeof value === 'string') {
      if (here && value.length >= MIN_MASKED_LENGTH) out.push(value);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) walk(value[i], appendSegment(path, i), here);
      return;
    }
    for (const key in value) {
      if (path === '' && (key === 'source' || key === 'sensitive' || key === 'routes')) continue;
      walk((value as Record<string, unknown>)[key], appendSegment(path, key), here);
    }
  };
  walk(resource, '', false);
  resourceValues.set(resource, out);
  return out;
}

/**
 * Every occurrence of a value, in any case (some fields are lower-cased before they are shown)
 * and JSON-escaped, becomes `(sensitive)`. Longest first, so a value containing another is
 * masked whole.
 */
export function maskValues(text: string, values: readonly string[]): string {
  if (values.length === 0) return text;
  return maskerOf(values).apply(text);
}

/**
 * The masker of a value list, built once per list: every log line of a cycle is masked with the
 * same list. A scan, not a regular expression: an alternation of 10,000 values costs time per
 * character in proportion to the values (seeding 25,000 resources took twice as long with every
 * log line masked so); the scan looks up each position's first few characters in a table and
 * compares only the values that start so. Leftmost, then longest, like the alternation.
 */
const maskers = new WeakMap<readonly string[], Masker>();

function maskerOf(values: readonly string[]): Masker {
  let masker = maskers.get(values);
  if (masker === undefined) {
    masker = new Masker(values);
    maskers.set(values, masker);
  }
  return masker;
}

class Masker {
  /**
   * Lower-cased ASCII forms by their first four characters (7 bits each, one number), then by
   * length, longest first. Values often share their first characters (`secret-1`, `secret-2`,
   * ...): a bucket is a set per length, so a position costs a lookup per distinct length, not a
   * comparison per value. A form with a character beyond ASCII can only match text that has one
   * too, and such text takes the alternation.
   */
  readonly #byPrefix = new Map<number, { lengths: number[]; forms: Set<string> }>();
  /** Every form, longest first, for the alternation. */
  readonly #forms: readonly string[];
  /** For text beyond ASCII (rare): the alternation, built at its first use. */
  #pattern: RegExp | undefined;

  constructor(values: readonly string[]) {
    const forms = [...new Set(values.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))]
      .filter((s) => s.length >= MIN_MASKED_LENGTH)
      .sort((a, b) => b.length - a.length);
    for (const form of forms) {
      const lower = form.toLowerCase();
      if (!isAscii(lower)) continue;
      const key = prefixKey(lower, 0);
      let bucket = this.#byPrefix.get(key);
      if (bucket === undefined) {
        bucket = { lengths: [], forms: new Set() };
        this.#byPrefix.set(key, bucket);
      }
      bucket.forms.add(lower);
      // Forms come longest first: a new length is the shortest so far.
      if (!bucket.lengths.includes(lower.length)) bucket.lengths.push(lower.length);
    }
    this.#forms = forms;
  }

  apply(text: string): string {
    if (this.#forms.length === 0 || text.length < MIN_MASKED_LENGTH) return text;
    if (!isAscii(text)) {
      this.#pattern ??= new RegExp(
        this.#forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
        'gi',
      );
      return text.replace(this.#pattern, MASKED);
    }
    const lower = text.toLowerCase();
    let out = '';
    let copied = 0;
    const last = text.length - MIN_MASKED_LENGTH;
    for (let i = 0; i <= last; ) {
      const bucket = this.#byPrefix.get(prefixKey(lower, i));
      const length =
        bucket?.lengths.find(
          (n) => i + n <= lower.length && bucket.forms.has(lower.slice(i, i + n)),
        ) ?? 0;
      if (length === 0) {
        i += 1;
        continue;
      }
      out += text.slice(copied, i) + MASKED;
      i += length;
      copied = i;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }
}

/** The first four characters at `i` of an ASCII string, as one number. */
function prefixKey(s: string, i: number): number {
  return (
    ((s.charCodeAt(i) * 128 + s.charCodeAt(i + 1)) * 128 + s.charCodeAt(i + 2)) * 128 +
    s.charCodeAt(i + 3)
  );
}

/**
 * ASCII only. Beyond it, a case-insensitive regular expression and `toLowerCase()` disagree
 * (the Kelvin sign, dotted capital I, final sigma and the like): such text is masked by the
 * alternation, whose matching is the reference.
 */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A mask whose values are known only later (a logger made before the manifests are read). */
export interface ValueMask {
  set(values: readonly string[]): void;
  apply(text: string): string;
}

export function createValueMask(): ValueMask {
  let current: readonly string[] = [];
  return {
    set(values) {
      current = values;
    },
    apply(text) {
      return maskValues(text, current);
    },
  };
}

/**
 * `maskValues` for a JSON document, string by string, leaving the subtrees under `keep` alone
 * (a plan's `fingerprint`: hex digests a short value could otherwise match inside). The text is
 * re-serialised with two-space indentation, as every JSON output of the CLI is.
 */
export function maskJson(
  text: string,
  values: readonly string[],
  keep: readonly string[] = [],
): string {
  if (values.length === 0) return text;
  return `${JSON.stringify(maskTree(JSON.parse(text), values, keep), null, 2)}\n`;
}

/**
 * `maskValues` over every string and key of a JSON-like value, leaving the subtrees under `keep`
 * alone. A fresh copy; the input is not changed.
 */
export function maskTree<T>(value: T, values: readonly string[], keep: readonly string[] = []): T {
  if (values.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskValues(v, values);
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(v)) {
        out[maskValues(key, values)] = keep.includes(key) ? inner : walk(inner);
      }
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
