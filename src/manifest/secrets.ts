/**
 * Values that must never be printed: everything read through `{ env }` / `{ file }` and every
 * secret field, whatever field holds it (a `name` too). The plan masks sensitive fields by
 * path; a value can still travel further than its field, into an address (`tls_edge.<name>`), a
 * conflict reason (a hostport) or a log line. So every text sink of the CLI and the daemon (plan
 * and apply output, the apply result, status errors, log lines) passes through `maskValues` with
 * the set's sensitive values as well. Pure.
 */
import { formatPath, type Segment } from './paths.js';
import type { DesiredSet } from './schema.js';

/** What a masked value is shown as (the plan's own mask). */
export const MASKED = '(sensitive)';

/** Shorter values are not masked: they would mangle messages and are no secret anyway. */
export const MIN_MASKED_LENGTH = 4;

/** The string values at the `sensitive` paths of every resource and route of the set. */
export function sensitiveValues(set: DesiredSet): string[] {
  const out = new Set<string>();
  const collect = (resource: object, sensitive: readonly string[]) => {
    if (sensitive.length === 0) return;
    const wanted = new Set(sensitive);
    const walk = (value: unknown, path: Segment[], inside: boolean): void => {
      const here = inside || (path.length > 0 && wanted.has(formatPath(path)));
      if (typeof value === 'string') {
        if (here && value.length >= MIN_MASKED_LENGTH) out.add(value);
      } else if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) walk(v, [...path, i], here);
      } else if (typeof value === 'object' && value !== null) {
        for (const [key, v] of Object.entries(value)) {
          if (path.length === 0 && (key === 'source' || key === 'sensitive' || key === 'routes'))
            continue;
          walk(v, [...path, key], here);
        }
      }
    };
    walk(resource, [], false);
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
 * Every occurrence of a value, in any case (some fields are lower-cased before they are shown)
 * and JSON-escaped, becomes `(sensitive)`. Longest first, so a value containing another is
 * masked whole.
 */
export function maskValues(text: string, values: readonly string[]): string {
  if (values.length === 0) return text;
  const pattern = patternOf(values);
  return pattern === undefined ? text : text.replace(pattern, MASKED);
}

/**
 * The masking pattern of a value list, built once per list: every log line of a cycle is
 * masked with the same list, and building the pattern of 10,000 values per line took minutes.
 */
const patterns = new WeakMap<readonly string[], RegExp | null>();

function patternOf(values: readonly string[]): RegExp | undefined {
  let pattern = patterns.get(values);
  if (pattern === undefined) {
    const forms = [...new Set(values.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))]
      .filter((s) => s.length >= MIN_MASKED_LENGTH)
      .sort((a, b) => b.length - a.length);
    pattern =
      forms.length === 0
        ? null
        : new RegExp(forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
    patterns.set(values, pattern);
  }
  // A global pattern keeps its position between uses: String.replace resets it.
  return pattern ?? undefined;
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
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return maskValues(value, values);
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        out[maskValues(key, values)] = keep.includes(key) ? v : walk(v);
      }
      return out;
    }
    return value;
  };
  return `${JSON.stringify(walk(JSON.parse(text)), null, 2)}\n`;
}
