import { HEADER_MODULES } from '../hosted/modules/index.js';
import { HEADER_MAP_CONFIG_FIELDS, SECRET_CONFIG_FIELDS } from '../hosted/policy-actions.js';
import { isCredentialHeader, mayNameCredential } from './credential-headers.js';
import type { FieldPath, Segment } from './paths.js';
import { parsePolicyText } from './policy-text.js';
import type { DesiredSet } from './schema.js';

/** What a masked value is shown as, in every output. */
export const MASKED = '(sensitive)';

const HEADER_MODULE_SET: ReadonlySet<string> = new Set(HEADER_MODULES);

/**
 * Whether the field at `path` is a secret by definition, wherever the path starts (a route, a
 * module, a request body, a traffic policy): `...client_secret`, `...server_private_key`,
 * `...webhook_verification.secret`, `...config.<secret config field>` of a policy action (the
 * action table names them) and any action's `config.secret` (the path does not say the type,
 * and masking more is safe), `...request_headers.add.<credential header>` (or
 * `response_headers`), and the same credential headers in a policy action's header map
 * (`...config.headers.<credential header>`: add-headers, custom-response).
 */
export function isSecretField(path: readonly Segment[]): boolean {
  const n = path.length;
  const last = path[n - 1];
  // Every value inside a secret config field of a policy action is secret too (basic-auth's
  // credentials, ai-gateway's API keys).
  const config = path.lastIndexOf('config');
  const field = config >= 0 ? path[config + 1] : undefined;
  if (config < n - 2 && typeof field === 'string' && SECRET_CONFIG_FIELDS.has(field)) return true;
  if (typeof last !== 'string') return false;
  const key = last.toLowerCase();
  if (key === 'client_secret' || key === 'server_private_key') return true;
  const parent = typeof path[n - 2] === 'string' ? (path[n - 2] as string).toLowerCase() : '';
  if ((parent === 'webhook_verification' || parent === 'config') && key === 'secret') return true;
  // A traffic policy action's config: the action table names its secret fields.
  if (parent === 'config' && SECRET_CONFIG_FIELDS.has(last)) return true;
  const grand = typeof path[n - 3] === 'string' ? (path[n - 3] as string).toLowerCase() : '';
  if (!isCredentialHeader(last)) return false;
  // A policy action's header map: `config.<map>.<name>` (the map's field is the parent).
  if (grand === 'config' && HEADER_MAP_CONFIG_FIELDS.has(parent)) return true;
  return parent === 'add' && HEADER_MODULE_SET.has(grand);
}

/**
 * The string values of the secret fields of every live route (see `isSecretField`): secrets set
 * by hand on the live side are masked too.
 */
export function liveSecretValues(snapshot: {
  readonly httpsEdges: readonly { readonly routes: readonly object[] }[];
  readonly cloudEndpoints?: readonly { readonly traffic_policy?: string | undefined }[];
}): string[] {
  const out = new Set<string>();
  for (const edge of snapshot.httpsEdges) for (const v of liveEdgeSecrets(edge)) out.add(v);
  for (const endpoint of snapshot.cloudEndpoints ?? []) {
    for (const v of livePolicySecrets(endpoint)) out.add(v);
  }
  return [...out];
}

/**
 * The secret field values of a live edge's routes, kept per record (never changed; the daemon
 * keeps its records between cycles): an edit costs one edge's walk, not the account's.
 */
const edgeSecrets = new WeakMap<object, readonly string[]>();

function liveEdgeSecrets(edge: { readonly routes: readonly object[] }): readonly string[] {
  const known = edgeSecrets.get(edge);
  if (known !== undefined) return known;
  const found = edge.routes.flatMap((route) => secretFieldValues(route));
  const out = found.length === 0 ? NONE : found;
  edgeSecrets.set(edge, out);
  return out;
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * The secret field values of a live endpoint's policy, kept per record (the daemon keeps its
 * records between cycles). Only a policy that mentions such a field is parsed.
 */
const policySecrets = new WeakMap<object, readonly string[]>();

function livePolicySecrets(endpoint: {
  readonly traffic_policy?: string | undefined;
}): readonly string[] {
  const known = policySecrets.get(endpoint);
  if (known !== undefined) return known;
  const text = endpoint.traffic_policy ?? '';
  // Only a text that may name a secret field or a credential header is parsed.
  const out = mayNameCredential(text) ? policySecretValues(parsePolicyText(text)) : [];
  policySecrets.set(endpoint, out);
  return out;
}

/** The string values of a traffic policy document at its secret fields (`isSecretField`). */
export function policySecretValues(doc: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown, path: Segment[]): void => {
    if (typeof value === 'string') {
      if (value.length >= MIN_MASKED_LENGTH && isSecretField(path)) out.push(value);
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, [...path, i]);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key]);
    }
  };
  walk(doc, []);
  return out;
}

/**
 * Everything an output must not show for this set and account: the set's sensitive values and
 * the live secret fields' values, without repeats. The daemon gathers the same values object by
 * object from its last cycle's (`stableValues`, held equal to this by its property test).
 *
 * @internal
 */
export function secretValues(
  set: DesiredSet,
  snapshot: Parameters<typeof liveSecretValues>[0],
): string[] {
  return [...new Set([...sensitiveValues(set), ...liveSecretValues(snapshot)])];
}

function secretFieldValues(record: object): readonly string[] {
  // Straight to the fields `isSecretField` names, no walk over the rest of the record: a plan
  // reads 10,000 routes, and this costs about what a cache lookup per route would.
  const out: string[] = [];
  const take = (value: unknown): void => {
    if (typeof value === 'string' && value.length >= MIN_MASKED_LENGTH) out.push(value);
  };
  const route = record as Readonly<Record<string, unknown>>;
  const field = (owner: unknown, key: string): unknown =>
    typeof owner === 'object' && owner !== null
      ? (owner as Record<string, unknown>)[key]
      : undefined;
  const provider = field(route.oauth, 'provider');
  if (typeof provider === 'object' && provider !== null) {
    for (const name in provider)
      take(field((provider as Record<string, unknown>)[name], 'client_secret'));
  }
  take(field(route.oidc, 'client_secret'));
  take(field(route.webhook_verification, 'secret'));
  for (const module of HEADER_MODULES) {
    const add = field(route[module], 'add');
    if (typeof add !== 'object' || add === null) continue;
    for (const name in add) {
      if (isCredentialHeader(name)) take((add as Record<string, unknown>)[name]);
    }
  }
  return out;
}

/** Shorter values are not masked: they would mangle messages and are no secret anyway. */
export const MIN_MASKED_LENGTH = 4;

/**
 * The values `secretValues` takes from each object of the set and of the account, object by
 * object (a desired HTTPS edge with its routes, a live one with its routes): their union is
 * `secretValues`. The daemon gathers them again only for the objects that changed.
 */
export const secretSources = {
  desired: {
    tlsEdges: (e: DesiredSet['tlsEdges'][number]): readonly string[] => sensitiveOf(e, e.sensitive),
    httpsEdges: (e: DesiredSet['httpsEdges'][number]): readonly string[] => [
      ...sensitiveOf(e, e.sensitive),
      ...e.routes.flatMap((r) => sensitiveOf(r, r.sensitive)),
    ],
    botUsers: (b: DesiredSet['botUsers'][number]): readonly string[] => sensitiveOf(b, b.sensitive),
    cloudEndpoints: (e: DesiredSet['cloudEndpoints'][number]): readonly string[] => [
      ...sensitiveOf(e, e.sensitive),
      ...policySecretValues(e.traffic_policy),
    ],
  },
  live: {
    httpsEdges: (edge: { readonly routes: readonly object[] }) => liveEdgeSecrets(edge),
    cloudEndpoints: (endpoint: { readonly traffic_policy?: string | undefined }) =>
      livePolicySecrets(endpoint),
  },
} as const;

function sensitiveOf(resource: object, sensitive: readonly FieldPath[]): readonly string[] {
  return sensitive.length === 0 ? NONE : valuesOf(resource, sensitive);
}

/** The string values at the `sensitive` paths of every resource and route of the set. */
export function sensitiveValues(set: DesiredSet): string[] {
  const out = new Set<string>();
  const collect = (resource: object, sensitive: readonly FieldPath[]) => {
    if (sensitive.length === 0) return;
    for (const value of valuesOf(resource, sensitive)) out.add(value);
  };
  for (const e of set.tlsEdges) collect(e, e.sensitive);
  for (const e of set.httpsEdges) {
    collect(e, e.sensitive);
    for (const r of e.routes) collect(r, r.sensitive);
  }
  for (const b of set.botUsers) collect(b, b.sensitive);
  for (const e of set.cloudEndpoints) {
    collect(e, e.sensitive);
    // Secret fields are secrets however the manifest wrote them (a literal client_secret too).
    for (const value of policySecretValues(e.traffic_policy)) out.add(value);
  }
  return [...out];
}

/**
 * One resource's sensitive values, kept per resource object: the daemon's manifests are the
 * same objects from cycle to cycle (`FileCache`), and are never changed once built.
 */
const resourceValues = new WeakMap<object, readonly string[]>();

function valuesOf(resource: object, sensitive: readonly FieldPath[]): readonly string[] {
  const known = resourceValues.get(resource);
  if (known !== undefined) return known;
  const out: string[] = [];
  // Straight down each sensitive path (no walk over the rest of the resource).
  for (const path of sensitive) {
    // Never the loader's own fields, nor an edge's routes (each route has its own paths).
    if (path.length === 0 || LOADER_FIELDS.has(path[0] as Segment)) continue;
    collectStrings(valueAt(resource, path), out);
  }
  resourceValues.set(resource, out);
  return out;
}

const LOADER_FIELDS: ReadonlySet<Segment> = new Set(['source', 'sensitive', 'routes']);

/** The value at `path`: a number names a list item, a string an object's own key. */
function valueAt(root: unknown, path: FieldPath): unknown {
  let value = root;
  for (const segment of path) {
    const fits =
      typeof segment === 'number'
        ? Array.isArray(value)
        : typeof value === 'object' && value !== null && !Array.isArray(value);
    value =
      fits && Object.hasOwn(value as object, segment)
        ? (value as Record<string | number, unknown>)[segment]
        : undefined;
  }
  return value;
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
 * alone. The input is not changed: a subtree with nothing to mask is handed back as it is (the
 * same object), anything above a masked value is a fresh copy.
 */
export function maskTree<T>(value: T, values: readonly string[], keep: readonly string[] = []): T {
  if (values.length === 0) return value;
  const masker = maskerOf(values);
  // A plan repeats the same few keys on each of its thousands of objects: each is masked once.
  const keys = new Map<string, string>();
  const maskKey = (key: string): string => {
    let masked = keys.get(key);
    if (masked === undefined) {
      masked = masker.apply(key);
      keys.set(key, masked);
    }
    return masked;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return masker.apply(v);
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const inner = walk(v[i]);
        if (inner !== v[i]) out ??= v.slice();
        if (out !== undefined) out[i] = inner;
      }
      return out ?? v;
    }
    // Entries are copied only from the first one that changes (an untouched object is no work).
    const record = v as Record<string, unknown>;
    const names = Object.keys(record);
    let out: [string, unknown][] | undefined;
    for (let i = 0; i < names.length; i++) {
      const key = names[i] as string;
      const inner = record[key];
      const k = maskKey(key);
      const w = keep.includes(key) ? inner : walk(inner);
      if (out === undefined && (k !== key || w !== inner)) {
        out = names.slice(0, i).map((n): [string, unknown] => [n, record[n]]);
      }
      out?.push([k, w]);
    }
    return out === undefined ? v : Object.fromEntries(out);
  };
  return walk(value) as T;
}
