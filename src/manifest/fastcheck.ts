/**
 * The shape check's fast path: hand-written checks of the manifest schemas (./schema.ts,
 * ./modules.ts) for the documents manifests are made of. Wherever it answers, the answer is
 * exactly zod's (the same value, with keys in the same order and defaults filled in alike);
 * anything it does not cover, and anything zod could reject, gets `undefined`: the caller asks
 * zod, which then also writes the diagnostics. It never rejects and never reports.
 *
 * Why: zod's compiled checks are large generated functions (one HTTPS edge check is 2,400
 * lines) that V8's optimizing compiler spends a good part of a short command's CPU on, and they
 * copy every level of every document. Checking 10,000 edges here instead takes about 0.15 s off
 * a whole `edgesync plan` (ARCHITECTURE.md, "A plan's CPU is the code's").
 *
 * Not covered (always zod): `saml`, `oidc` and `user_agent_filter`. A differential property test
 * (test/unit/manifest/fastcheck.property.test.ts) holds the two together: wherever this answers,
 * zod succeeds with a strictly equal value and the same key order; and every valid document
 * without the modules above gets an answer, so the fast path cannot quietly fall away.
 */
import {
  BACKEND_ID_PATTERN,
  checkCookiePrefix,
  checkHeaderValue,
  checkHostport,
  HEADER_NAME_PATTERN,
  ID_PREFIX,
  LIMITS,
  MATCH_TYPES,
  OAUTH_PROVIDERS,
  TERMINATE_AT,
  TLS_VERSIONS,
  utf8Bytes,
} from '../spec/api.js';
import { idPattern, isJsonTree, type Kind, LABEL_KEY_PATTERN, NAME_PATTERN } from './modules.js';

type Value = Record<string, unknown>;
/** A checked value, or undefined: "ask zod". */
type Checked<T> = T | undefined;

const TLS_EDGE_ID = idPattern(ID_PREFIX.tlsEdge);
const HTTPS_EDGE_ID = idPattern(ID_PREFIX.httpsEdge);
const IP_POLICY_ID = idPattern(ID_PREFIX.ipPolicy);
const CA_ID = idPattern(ID_PREFIX.certificateAuthority);
const GITHUB_TEAM = /^[^/\s]+\/[^/\s]+$/;

/** The value zod's checks for one kind return, or undefined when zod must decide. */
export function fastCheck(kind: Kind, value: unknown): Value | undefined {
  if (!isPlain(value) || value.kind !== kind) return undefined;
  switch (kind) {
    case 'TLSEdge':
      return tlsEdge(value);
    case 'HTTPSEdge':
      return httpsEdge(value);
    case 'BotUser':
      return botUser(value);
  }
}

// ---- resources --------------------------------------------------------------------------------

const TLS_EDGE_KEYS = keys(
  'kind name description metadata protect suspend id hostports backend ip_restriction mutual_tls tls_termination traffic_policy',
);
const HTTPS_EDGE_KEYS = keys(
  'kind name description metadata protect suspend id hostports mutual_tls tls_termination routes',
);
const ROUTE_KEYS = keys(
  'match_type match description metadata backend ip_restriction circuit_breaker compression request_headers response_headers webhook_verification oauth websocket_tcp_converter traffic_policy',
);
const BOT_USER_KEYS = keys('kind name active ensure suspend');

/** `edgeCommon` of ./schema.ts, then `id` and `hostports`, in the schema's order. */
function edgeStart(v: Value, kind: Kind, id: RegExp): Checked<Value> {
  const name = v.name;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) return undefined;
  const out = made();
  out.kind = kind;
  out.name = name;
  if (!optional(out, 'description', v.description, describedText)) return undefined;
  const metadata = labels(v.metadata);
  if (metadata === undefined) return undefined;
  out.metadata = metadata;
  const protect = v.protect === undefined ? false : v.protect;
  if (typeof protect !== 'boolean') return undefined;
  out.protect = protect;
  if (!optional(out, 'suspend', v.suspend, boolean)) return undefined;
  if (v.id !== undefined) {
    if (typeof v.id !== 'string' || !id.test(v.id)) return undefined;
    out.id = v.id;
  }
  const hostports = v.hostports === undefined ? [] : uniqueStrings(v.hostports, isHostport, true);
  if (hostports === undefined) return undefined;
  out.hostports = hostports;
  return out;
}

function tlsEdge(v: Value): Checked<Value> {
  if (!onlyKeys(v, TLS_EDGE_KEYS)) return undefined;
  const out = edgeStart(v, 'TLSEdge', TLS_EDGE_ID);
  if (
    out === undefined ||
    !optional(out, 'backend', v.backend, backend) ||
    !optional(out, 'ip_restriction', v.ip_restriction, ipRestriction) ||
    !optional(out, 'mutual_tls', v.mutual_tls, mutualTls) ||
    !optional(out, 'tls_termination', v.tls_termination, tlsTermination) ||
    !optional(out, 'traffic_policy', v.traffic_policy, trafficPolicy)
  ) {
    return undefined;
  }
  return out;
}

function httpsEdge(v: Value): Checked<Value> {
  if (!onlyKeys(v, HTTPS_EDGE_KEYS)) return undefined;
  const out = edgeStart(v, 'HTTPSEdge', HTTPS_EDGE_ID);
  if (
    out === undefined ||
    !optional(out, 'mutual_tls', v.mutual_tls, mutualTls) ||
    !optional(out, 'tls_termination', v.tls_termination, tlsTerminationAtEdge)
  ) {
    return undefined;
  }
  const given = v.routes === undefined ? [] : v.routes;
  if (!Array.isArray(given)) return undefined;
  const routes: Value[] = new Array(given.length);
  for (let i = 0; i < given.length; i++) {
    const checked = route(given[i]);
    if (checked === undefined) return undefined;
    routes[i] = checked;
  }
  out.routes = routes;
  return out;
}

function route(v: unknown): Checked<Value> {
  if (!isPlain(v) || !onlyKeys(v, ROUTE_KEYS)) return undefined;
  const { match_type, match } = v;
  if (typeof match_type !== 'string' || !(MATCH_TYPES as readonly string[]).includes(match_type)) {
    return undefined;
  }
  if (typeof match !== 'string' || !match.startsWith('/')) return undefined;
  const out = made();
  out.match_type = match_type;
  out.match = match;
  if (!optional(out, 'description', v.description, describedText)) return undefined;
  const metadata = labels(v.metadata);
  if (metadata === undefined) return undefined;
  out.metadata = metadata;
  const ok =
    optional(out, 'backend', v.backend, backend) &&
    optional(out, 'ip_restriction', v.ip_restriction, ipRestriction) &&
    optional(out, 'circuit_breaker', v.circuit_breaker, circuitBreaker) &&
    optional(out, 'compression', v.compression, enabledOnly) &&
    optional(out, 'request_headers', v.request_headers, headers) &&
    optional(out, 'response_headers', v.response_headers, headers) &&
    optional(out, 'webhook_verification', v.webhook_verification, webhookVerification) &&
    optional(out, 'oauth', v.oauth, oauth) &&
    optional(out, 'websocket_tcp_converter', v.websocket_tcp_converter, enabledOnly) &&
    optional(out, 'traffic_policy', v.traffic_policy, trafficPolicy);
  return ok ? out : undefined;
}

function botUser(v: Value): Checked<Value> {
  if (!onlyKeys(v, BOT_USER_KEYS)) return undefined;
  const { name } = v;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) return undefined;
  const active = v.active === undefined ? true : v.active;
  if (typeof active !== 'boolean') return undefined;
  const ensure = v.ensure === undefined ? 'present' : v.ensure;
  if (ensure !== 'present' && ensure !== 'absent') return undefined;
  const out = made();
  out.kind = 'BotUser';
  out.name = name;
  out.active = active;
  out.ensure = ensure;
  return optional(out, 'suspend', v.suspend, boolean) ? out : undefined;
}

// ---- modules, in the field order of their schemas ----------------------------------------------

/** A module's `enabled` (default true) as the first key of its value; undefined: not a module. */
function moduleStart(v: unknown, allowed: ReadonlySet<string>): Checked<Value> {
  if (!isPlain(v) || !onlyKeys(v, allowed)) return undefined;
  const enabled = v.enabled === undefined ? true : v.enabled;
  if (typeof enabled !== 'boolean') return undefined;
  const out = made();
  out.enabled = enabled;
  return out;
}

const ENABLED_KEYS = keys('enabled');

function enabledOnly(v: unknown): Checked<Value> {
  return moduleStart(v, ENABLED_KEYS);
}

const BACKEND_KEYS = keys('enabled backend_id');

function backend(v: unknown): Checked<Value> {
  const out = moduleStart(v, BACKEND_KEYS);
  if (out === undefined) return undefined;
  const id = (v as Value).backend_id;
  if (typeof id !== 'string' || !BACKEND_ID_PATTERN.test(id)) return undefined;
  out.backend_id = id;
  return out;
}

const IP_RESTRICTION_KEYS = keys('enabled ip_policy_ids');

function ipRestriction(v: unknown): Checked<Value> {
  return idListModule(v, IP_RESTRICTION_KEYS, 'ip_policy_ids', IP_POLICY_ID, 1);
}

const MUTUAL_TLS_KEYS = keys('enabled certificate_authority_ids');

function mutualTls(v: unknown): Checked<Value> {
  return idListModule(v, MUTUAL_TLS_KEYS, 'certificate_authority_ids', CA_ID, 0);
}

/** A module of `enabled` and one list of distinct IDs (at least `minLength` of them). */
function idListModule(
  v: unknown,
  allowed: ReadonlySet<string>,
  key: string,
  id: RegExp,
  minLength: number,
): Checked<Value> {
  const out = moduleStart(v, allowed);
  if (out === undefined) return undefined;
  const ids = uniqueStrings((v as Value)[key], (s) => id.test(s), false);
  if (ids === undefined || ids.length < minLength) return undefined;
  out[key] = ids;
  return out;
}

const TLS_TERMINATION_KEYS = keys('enabled terminate_at min_version');
const TLS_TERMINATION_AT_EDGE_KEYS = keys('enabled min_version');

function tlsTermination(v: unknown): Checked<Value> {
  const out = moduleStart(v, TLS_TERMINATION_KEYS);
  if (
    out === undefined ||
    !optional(out, 'terminate_at', (v as Value).terminate_at, (s) => oneOf(s, TERMINATE_AT)) ||
    !optional(out, 'min_version', (v as Value).min_version, (s) => oneOf(s, TLS_VERSIONS))
  ) {
    return undefined;
  }
  return out;
}

function tlsTerminationAtEdge(v: unknown): Checked<Value> {
  const out = moduleStart(v, TLS_TERMINATION_AT_EDGE_KEYS);
  if (
    out === undefined ||
    !optional(out, 'min_version', (v as Value).min_version, (s) => oneOf(s, TLS_VERSIONS))
  ) {
    return undefined;
  }
  return out;
}

const TRAFFIC_POLICY_KEYS = keys('enabled value');

/** `value` is a string, or a mapping of JSON values sent as compact JSON. */
function trafficPolicy(v: unknown): Checked<Value> {
  const out = moduleStart(v, TRAFFIC_POLICY_KEYS);
  if (out === undefined) return undefined;
  const value = (v as Value).value;
  if (typeof value === 'string') out.value = value;
  else if (isPlain(value) && !Object.hasOwn(value, '__proto__') && isJsonTree(value)) {
    out.value = JSON.stringify(value);
  } else return undefined;
  return out;
}

const CIRCUIT_BREAKER_KEYS = keys(
  'enabled tripped_duration rolling_window num_buckets volume_threshold error_threshold_percentage',
);

function circuitBreaker(v: unknown): Checked<Value> {
  const out = moduleStart(v, CIRCUIT_BREAKER_KEYS);
  if (out === undefined) return undefined;
  const m = v as Value;
  const ok =
    optional(out, 'tripped_duration', m.tripped_duration, (n) => whole(n, 1, LIMITS.uint32Max)) &&
    optional(out, 'rolling_window', m.rolling_window, (n) => whole(n, 1, LIMITS.uint32Max)) &&
    optional(out, 'num_buckets', m.num_buckets, (n) => whole(n, 1, LIMITS.numBucketsMax)) &&
    optional(out, 'volume_threshold', m.volume_threshold, (n) => whole(n, 0, LIMITS.uint32Max)) &&
    optional(out, 'error_threshold_percentage', m.error_threshold_percentage, fraction);
  return ok ? out : undefined;
}

const HEADERS_KEYS = keys('enabled add remove');

function headers(v: unknown): Checked<Value> {
  const out = moduleStart(v, HEADERS_KEYS);
  if (out === undefined) return undefined;
  const m = v as Value;
  if (m.add !== undefined) {
    if (!isPlain(m.add)) return undefined;
    const add = made();
    for (const name in m.add) {
      const value = m.add[name];
      if (!HEADER_NAME_PATTERN.test(name) || typeof value !== 'string') return undefined;
      if (checkHeaderValue(value) !== undefined) return undefined;
      add[name] = value;
    }
    out.add = add;
  }
  if (m.remove !== undefined) {
    const remove = uniqueStrings(m.remove, (s) => HEADER_NAME_PATTERN.test(s), true);
    if (remove === undefined) return undefined;
    out.remove = remove;
  }
  return out;
}

const WEBHOOK_KEYS = keys('enabled provider secret');

function webhookVerification(v: unknown): Checked<Value> {
  const out = moduleStart(v, WEBHOOK_KEYS);
  if (out === undefined) return undefined;
  const { provider, secret } = v as Value;
  if (typeof provider !== 'string' || provider === '') return undefined;
  out.provider = provider.toLowerCase();
  return optional(out, 'secret', secret, text) ? out : undefined;
}

const OAUTH_KEYS = keys(
  'enabled provider options_passthrough cookie_prefix inactivity_timeout maximum_duration auth_check_interval',
);
const PROVIDER_KEYS: ReadonlySet<string> = new Set(OAUTH_PROVIDERS);
const PROVIDER_FIELD_KEYS = keys('client_id client_secret scopes email_addresses email_domains');
const GITHUB_FIELD_KEYS = keys(
  'client_id client_secret scopes email_addresses email_domains teams organizations',
);

function oauth(v: unknown): Checked<Value> {
  const out = moduleStart(v, OAUTH_KEYS);
  if (out === undefined) return undefined;
  const m = v as Value;
  const given = m.provider;
  if (!isPlain(given) || !onlyKeys(given, PROVIDER_KEYS)) return undefined;
  const provider = made();
  // OAUTH_PROVIDERS lists the schema's provider keys in its order (the property test compares).
  for (const name of OAUTH_PROVIDERS) {
    const settings = given[name];
    if (settings === undefined) continue;
    const checked = providerSettings(settings, name === 'github');
    if (checked === undefined) return undefined;
    provider[name] = checked;
  }
  out.provider = provider;
  const ok =
    optional(out, 'options_passthrough', m.options_passthrough, boolean) &&
    optional(out, 'cookie_prefix', m.cookie_prefix, cookiePrefix) &&
    optional(out, 'inactivity_timeout', m.inactivity_timeout, uint32) &&
    optional(out, 'maximum_duration', m.maximum_duration, uint32) &&
    optional(out, 'auth_check_interval', m.auth_check_interval, uint32);
  return ok ? out : undefined;
}

function providerSettings(v: unknown, github: boolean): Checked<Value> {
  if (!isPlain(v) || !onlyKeys(v, github ? GITHUB_FIELD_KEYS : PROVIDER_FIELD_KEYS)) {
    return undefined;
  }
  const out = made();
  const ok =
    optional(out, 'client_id', v.client_id, nonEmpty) &&
    optional(out, 'client_secret', v.client_secret, nonEmpty) &&
    optional(out, 'scopes', v.scopes, (l) => uniqueStrings(l, isNonEmpty, false)) &&
    optional(out, 'email_addresses', v.email_addresses, (l) => uniqueStrings(l, isLower, false)) &&
    optional(out, 'email_domains', v.email_domains, (l) => uniqueStrings(l, isLower, false)) &&
    (!github ||
      (optional(out, 'teams', v.teams, (l) => uniqueStrings(l, isTeam, false)) &&
        optional(out, 'organizations', v.organizations, (l) =>
          uniqueStrings(l, isNonEmpty, false),
        )));
  return ok ? out : undefined;
}

// ---- building blocks --------------------------------------------------------------------------

/**
 * A result object: empty literals get room for four properties inside the object; one made from
 * a literal with its first keys (`{ enabled }`) has room for those only, and every key added
 * later goes to a separate property array (3 MB more at 10,000 edges).
 */
function made(): Value {
  return {};
}

function keys(list: string): ReadonlySet<string> {
  return new Set(list.split(' '));
}

/** A plain mapping, as the YAML readers make them (anything else: zod decides). */
function isPlain(v: unknown): v is Value {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.getPrototypeOf(v) === Object.prototype
  );
}

/** Only known keys, none of them holding `undefined` (zod treats such a key as absent). */
function onlyKeys(v: Value, allowed: ReadonlySet<string>): boolean {
  for (const key in v) {
    if (!allowed.has(key) || v[key] === undefined) return false;
  }
  return true;
}

/**
 * Sets `out[key]` to the checked value of an optional field (nothing when absent); false when
 * the value is not one the fast path vouches for.
 */
function optional(
  out: Value,
  key: string,
  value: unknown,
  check: (value: unknown) => unknown,
): boolean {
  if (value === undefined) return true;
  const checked = check(value);
  if (checked === undefined) return false;
  out[key] = checked;
  return true;
}

function text(v: unknown): Checked<string> {
  return typeof v === 'string' ? v : undefined;
}

function isNonEmpty(s: string): boolean {
  return s !== '';
}

function nonEmpty(v: unknown): Checked<string> {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isLower(s: string): boolean {
  return s !== '' && s === s.toLowerCase();
}

function describedText(v: unknown): Checked<string> {
  return typeof v === 'string' && utf8Bytes(v) <= LIMITS.descriptionBytes ? v : undefined;
}

function boolean(v: unknown): Checked<boolean> {
  return typeof v === 'boolean' ? v : undefined;
}

function oneOf(v: unknown, list: readonly string[]): Checked<string> {
  return typeof v === 'string' && list.includes(v) ? v : undefined;
}

function cookiePrefix(v: unknown): Checked<string> {
  return typeof v === 'string' && checkCookiePrefix(v) === undefined ? v : undefined;
}

function isTeam(s: string): boolean {
  return GITHUB_TEAM.test(s);
}

function isHostport(s: string): boolean {
  return checkHostport(s) === undefined;
}

/** A whole number in [min, max] (`-0` is in [0, max], as for zod). */
function whole(v: unknown, min: number, max: number): Checked<number> {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;
}

function uint32(v: unknown): Checked<number> {
  return whole(v, 0, LIMITS.uint32Max);
}

function fraction(v: unknown): Checked<number> {
  return typeof v === 'number' && v >= 0 && v <= 1 ? v : undefined;
}

/** Labels: a mapping of label keys to strings; `{}` when absent. */
function labels(v: unknown): Checked<Value> {
  if (v === undefined) return {};
  if (!isPlain(v)) return undefined;
  const out = made();
  for (const key in v) {
    const value = v[key];
    if (!LABEL_KEY_PATTERN.test(key) || typeof value !== 'string') return undefined;
    out[key] = value;
  }
  return out;
}

/** A list of distinct strings passing `check` (distinct ignoring case, if asked), copied. */
function uniqueStrings(
  v: unknown,
  check: (s: string) => boolean,
  ignoreCase: boolean,
): Checked<string[]> {
  if (!Array.isArray(v)) return undefined;
  for (let i = 0; i < v.length; i++) {
    const s: unknown = v[i];
    if (typeof s !== 'string' || !check(s)) return undefined;
  }
  // A copy of exactly its length (a list grown by `push` keeps spare room: 4 MB at 10,000 edges).
  const out = (v as string[]).slice();
  if (out.length > 1) {
    const seen = new Set<string>();
    for (const s of out) {
      const key = ignoreCase ? s.toLowerCase() : s;
      if (seen.has(key)) return undefined;
      seen.add(key);
    }
  }
  return out;
}
