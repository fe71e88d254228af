/**
 * Normalization: live records (read shapes) and manifest values (write shapes) brought into one
 * comparable, canonical form, so that a live state produced by applying a manifest compares
 * equal to that manifest. Pure. The rules, in the order they apply (also in docs/internals/planner.md):
 *
 * 1. Read shape -> write shape: Refs become IDs (`backend.backend` -> `backend_id`,
 *    `ip_policies` -> `ip_policy_ids`, `certificate_authorities` -> `certificate_authority_ids`:
 *    the fields whose definition has `live`); server-made SAML fields (`entity_id`, `assertion_consumer_service_url`, `single_logout_url`,
 *    `request_signing_certificate_pem`, `metadata_url`) are dropped; so are `created_at`, `uri`,
 *    `policy` and IDs (they never reach a module value).
 * 2. Zero values mean "not set": `null`, empty lists, `false` (every boolean but `enabled`) and
 *    an empty header `add` map are dropped on both sides, so the server's `remove: []`, OAuth's
 *    `null` providers and `client_id: null`, webhook `secret: null` never show as a difference,
 *    while a list the manifest no longer has (e.g. `email_domains`) is still removed live.
 * 3. Defaults are values: a field the manifest leaves unset means the service's documented
 *    default (src/hosted/defaults.ts: `min_version` 1.2, `terminate_at` edge, cookie prefixes,
 *    SAML `allow_idp_initiated` true, session timers 0, ...), filled in before comparing, so
 *    drift away from a default shows (`diffModule`).
 * 4. Every list inside a module is a set: sorted, so order never matters. (Object keys need no
 *    order: fast-deep-equal looks keys up.) After these rules two values are the same exactly
 *    when they are deeply equal: the planner compares canonical forms with fast-deep-equal.
 * 5. Letter case: HTTP header names (`add` keys, `remove` entries) and the webhook provider are
 *    compared lower-cased (the fields whose definition says `caseInsensitive`) (the server lower-cases response header names).
 * 6. Edge scalars: hostports are a set compared case-insensitively; an absent description is
 *    the empty string; metadata is compared as the exact string edgesync stores
 *    (`storedMetadata` / `storedRouteMetadata`), `null` reading as the empty string.
 */

import type { HttpsEdge, HttpsRoute, TlsEdge } from '../api/schemas.js';
import { compareCodeUnits } from '../compare.js';
import { forEachMissingDefault } from '../hosted/defaults.js';
import { fieldsWhere, MODULES_BY_NAME } from '../hosted/modules/index.js';

/** A JSON-like value as the normalizer sees it. */
export type Plain = null | boolean | number | string | Plain[] | { [key: string]: Plain };
export type PlainObject = { [key: string]: Plain };

/** Rule 1, per module, from the definitions: live keys holding Refs, and server-made fields. */
interface LiveRules {
  readonly refs: ReadonlyMap<string, { readonly key: string; readonly many: boolean }>;
  readonly serverMade: ReadonlySet<string>;
}

const LIVE_RULES: ReadonlyMap<string, LiveRules> = new Map(
  [...MODULES_BY_NAME].map(([module, def]) => [
    module,
    {
      refs: new Map(
        Object.entries(def.fields).flatMap(([key, f]) =>
          f.live === undefined
            ? []
            : [[f.live.key, { key, many: f.live.refs === 'many' }] as const],
        ),
      ),
      serverMade: new Set(def.serverFields),
    },
  ]),
);

/** Rule 5, per module, from the definitions: the fields compared lower-cased. */
const CASE_INSENSITIVE: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  [...MODULES_BY_NAME.keys()].map((module) => [
    module,
    new Set(fieldsWhere(module, (f) => f.caseInsensitive === true).map(([name]) => name)),
  ]),
);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy into `Plain`, dropping `undefined` (absent) values. */
export function toPlain(value: unknown): Plain | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return value;
  if (Array.isArray(value)) {
    const out: Plain[] = [];
    for (const item of value) {
      const p = toPlain(item);
      if (p !== undefined) out.push(p);
    }
    return out;
  }
  if (isObject(value)) {
    const out: PlainObject = {};
    for (const [k, v] of Object.entries(value)) {
      const p = toPlain(v);
      if (p !== undefined) out[k] = p;
    }
    return out;
  }
  return undefined;
}

function refIds(value: unknown): string[] {
  const ids: string[] = [];
  if (!Array.isArray(value)) return ids;
  for (const r of value) if (isObject(r) && typeof r.id === 'string') ids.push(r.id);
  return ids;
}

/**
 * Rule 1: a module's read shape turned into its write shape (manifest shape). Values are not
 * copied: `canonicalModule` builds the compared form.
 */
export function liveModuleToWrite(
  module: string,
  read: unknown,
): Record<string, unknown> | undefined {
  if (!isObject(read)) return undefined;
  const out: Record<string, unknown> = {};
  const rules = LIVE_RULES.get(module);
  for (const key in read) {
    const value = read[key];
    const ref = rules?.refs.get(key);
    if (ref?.many === true) {
      out[ref.key] = refIds(value);
    } else if (ref !== undefined) {
      if (isObject(value) && typeof value.id === 'string') out[ref.key] = value.id;
    } else if (rules?.serverMade.has(key) !== true) {
      out[key] = value; // server-made fields are never compared
    }
  }
  return out;
}

function sortPlain(list: Plain[]): Plain[] {
  let strings = true;
  let sorted = true;
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'string') strings = false;
    else if (i > 0 && sorted && compareCodeUnits(list[i - 1] as string, v) > 0) sorted = false;
  }
  // Lists usually come sorted (manifests, and what the server stores from them): no sort then.
  if (strings) return sorted ? list : (list as string[]).sort(compareCodeUnits);
  const keyed = list.map((v) => ({ v, k: typeof v === 'string' ? v : JSON.stringify(v) }));
  keyed.sort((a, b) => compareCodeUnits(a.k, b.k));
  return keyed.map((e) => e.v);
}

/** Rules 2, 4 and 5 applied recursively below a module; builds a fresh value. */
function canonicalValue(value: unknown, key: string, lowerCase: boolean): Plain | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'boolean') return value || key === 'enabled' ? value : undefined;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    const items: Plain[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      items[i] =
        lowerCase && typeof v === 'string'
          ? v.toLowerCase()
          : (canonicalValue(v, '', false) ?? null);
    }
    return items.length > 1 ? sortPlain(items) : items;
  }
  if (isObject(value)) {
    const out: PlainObject = {};
    let size = 0;
    for (const k in value) {
      const v = canonicalValue(value[k], k, false);
      if (v === undefined) continue;
      out[lowerCase ? k.toLowerCase() : k] = v;
      size += 1;
    }
    return key === 'add' && size === 0 ? undefined : out;
  }
  return undefined;
}

/**
 * The canonical form of one module value (either side). With `defaults` (the manifest's side),
 * the documented defaults it leaves unset are filled in first (rule 3), without copying it.
 */
export function canonicalModule(
  module: string,
  value: Readonly<Record<string, unknown>> | undefined,
  defaults = false,
): PlainObject | undefined {
  if (value === undefined) return undefined;
  const lowerCased = CASE_INSENSITIVE.get(module);
  const out: PlainObject = {};
  const add = (key: string, raw: unknown) => {
    const lower = lowerCased?.has(key) === true;
    const v = lower && typeof raw === 'string' ? raw.toLowerCase() : raw;
    const c = canonicalValue(v, key, lower);
    if (c !== undefined) out[key] = c;
  };
  for (const key in value) add(key, value[key]);
  if (defaults) forEachMissingDefault(module, value, add);
  return out;
}

/**
 * Rule 6: hostports as a case-insensitive set, sorted. Kept per list: manifests and live records
 * are never changed, and the daemon plans the same ones cycle after cycle.
 */
export function canonicalHostports(
  hostports: readonly string[] | null | undefined,
): readonly string[] {
  if (hostports === null || hostports === undefined) return NO_HOSTPORTS;
  let canonical = canonicalLists.get(hostports);
  if (canonical === undefined) {
    // Most lists already are: lower-case and in order (one hostport, or what edgesync wrote).
    // Kept either way: a plan asks for each list several times, and a 10,000-edge plan after one
    // file changed should not lower-case 20,000 strings again to find them unchanged.
    canonical = isCanonical(hostports)
      ? hostports
      : [...new Set(hostports.map((h) => h.toLowerCase()))].sort(compareCodeUnits);
    canonicalLists.set(hostports, canonical);
  }
  return canonical;
}

const NO_HOSTPORTS: readonly string[] = Object.freeze([]);

/** Lower-case, sorted and without repeats: its own canonical form. */
function isCanonical(hostports: readonly string[]): boolean {
  for (let i = 0; i < hostports.length; i++) {
    const h = hostports[i] as string;
    if (h !== h.toLowerCase()) return false;
    if (i > 0 && compareCodeUnits(hostports[i - 1] as string, h) >= 0) return false;
  }
  return true;
}

const canonicalLists = new WeakMap<readonly string[], readonly string[]>();

export function sameHostports(
  a: readonly string[] | null | undefined,
  b: readonly string[] | null | undefined,
): boolean {
  const x = canonicalHostports(a);
  const y = canonicalHostports(b);
  return x.length === y.length && x.every((h, i) => h === y[i]);
}

/** The module values of a live record, in write shape, keyed by module name (unset omitted). */
export function liveModules(
  record: TlsEdge | HttpsEdge | HttpsRoute,
  modules: readonly string[],
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  const fields = record as unknown as Readonly<Record<string, unknown>>;
  for (const name of modules) {
    const value = liveModuleToWrite(name, fields[name]);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
