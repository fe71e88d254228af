/**
 * The traffic-policy evaluator: what the service would do with one request, given an endpoint's
 * policy. The phases run in order (on_tcp_connect, then on_http_request for http and https
 * endpoints); in each, every rule whose expressions all hold runs its actions in order, until
 * one ends the request. CEL runs on the real engine (./cel.ts); each action is modelled from its
 * documented behaviour (one entry per type in `ACTION_BEHAVIOUR`), and what depends on the
 * outside world (the identity after a login, a JWT, a rate-limit counter, a secret's value, an
 * IP policy's rules, a failing upstream) comes from the case's `given`. The outcome names the
 * rule and action that decided it. One evaluator serves the policy tests, the plan's impact
 * preview and the migration's checks. Pure: no clock (`time.now` is given or absent).
 */
import { RE2JS } from 're2js';
import { celObject, celStringLike } from '../hosted/cel-values.js';
import { DEFAULT_CLIENT_IP, type PolicyGiven } from '../manifest/policy/tests.js';
import { type CelOutcome, engineValue, evalCel, guardReads, interpolate } from './cel.js';
import { celInput, enterRequest, type FunctionScope, leaveRequest } from './functions.js';
import { inCidr, parseCidr, parseIp } from './ip.js';

/** A request as the evaluator sees it. */
export interface PolicyRequest {
  readonly method: string;
  /** Absolute http(s) URL. */
  readonly url: string;
  readonly clientIp?: string | undefined;
  /** Lower-case names. */
  readonly headers?: Readonly<Record<string, readonly string[]>> | undefined;
  readonly tls?: Readonly<Record<string, unknown>> | undefined;
}

/** Which rule and action decided, as written (`phase` is the document's key). */
export interface RuleRef {
  readonly phase: string;
  readonly rule: number;
  readonly action: number;
  readonly name?: string | undefined;
  readonly type: string;
}

export type Outcome =
  | { readonly kind: 'forward'; readonly url: string }
  | { readonly kind: 'respond'; readonly status: number }
  | { readonly kind: 'refuse'; readonly by: string; readonly status: number }
  | { readonly kind: 'redirect'; readonly url: string; readonly status: number }
  | { readonly kind: 'auth'; readonly by: string; readonly provider: string }
  | { readonly kind: 'close'; readonly by: string }
  | { readonly kind: 'unhandled' }
  | { readonly kind: 'error'; readonly message: string };

export interface Evaluation {
  readonly outcome: Outcome;
  /** The rule and action that ended the request (or failed); absent when none did. */
  readonly decidedBy?: RuleRef;
  /** Non-terminating actions that ran, by type, in order. */
  readonly applied: readonly string[];
  /** Headers added to the request sent upstream, lower-case names. */
  readonly headersAdded: Readonly<Record<string, readonly string[]>>;
  readonly headersRemoved: readonly string[];
  /** The request URL after any url-rewrite. */
  readonly url: string;
}

type Json = Readonly<Record<string, unknown>>;
interface Action {
  readonly type: string;
  readonly config?: Json | null;
}
interface Rule {
  readonly name?: unknown;
  readonly expressions?: readonly string[] | null;
  readonly actions?: readonly Action[];
}

/** The state of one evaluation, shared by the actions. */
interface Run {
  policyPhase: 'on_tcp_connect' | 'on_http_request';
  readonly request: PolicyRequest;
  readonly given: PolicyGiven;
  readonly vars: Record<string, unknown>;
  readonly svc: Record<string, unknown>;
  readonly applied: string[];
  readonly added: Record<string, string[]>;
  readonly removed: string[];
  url: string;
  readonly activation: Record<string, unknown>;
}

/** What an action did: go on, or end the request with an outcome. */
type Step = { readonly end: Outcome } | undefined;
type Behaviour = (config: Json, run: Run) => Step;

const refuse = (by: string, status: number, run: Run): Step =>
  run.policyPhase === 'on_tcp_connect'
    ? { end: { kind: 'close', by } }
    : { end: { kind: 'refuse', by, status } };

const enforced = (config: Json) => config.enforce !== false;

/** An interpolated string field; a failure ends the run as an error. */
function text(config: Json, field: string, run: Run): string | { readonly error: string } {
  const raw = config[field];
  if (typeof raw !== 'string') return '';
  const got = interpolate(raw, run.activation);
  return 'error' in got ? { error: `${field}: ${got.error}` } : String(got.value);
}

const failed = (message: string): Step => ({ end: { kind: 'error', message } });

function loggedIn(run: Run, key: string, config: Json): Step | 'passed' {
  const identity = run.given.identity;
  const preflight =
    config.allow_cors_preflight === true &&
    run.request.method === 'OPTIONS' &&
    header(run, 'origin') !== undefined &&
    header(run, 'access-control-request-method') !== undefined;
  if (preflight) return 'passed';
  if (identity === undefined) return undefined;
  run.svc[key] = { identity: { ...identity }, error: { code: '', message: '' } };
  return 'passed';
}

function header(run: Run, name: string): string | undefined {
  return run.request.headers?.[name]?.[0];
}

/** `from` (a regex, unanchored, on the whole URL; default all of it) replaced with `to`. */
function rewrite(config: Json, run: Run): { url: string } | { error: string } {
  const to = text(config, 'to', run);
  if (typeof to !== 'string') return to;
  if (config.from === undefined) return { url: to };
  const from = text(config, 'from', run);
  if (typeof from !== 'string') return from;
  try {
    return { url: RE2JS.compile(from).matcher(run.url).replaceAll(to) };
  } catch (err) {
    return { error: `from: not an RE2 regex: ${(err as Error).message}` };
  }
}

function ipAllowed(config: Json, run: Run): boolean | { error: string } {
  const ip = parseIp(run.request.clientIp ?? DEFAULT_CLIENT_IP);
  const policies = (config.ip_policies as readonly string[] | undefined) ?? [];
  const allow = ipMatches(config, 'allow', ip, run);
  if (typeof allow !== 'boolean') return allow;
  const deny = ipMatches(config, 'deny', ip, run);
  if (typeof deny !== 'boolean') return deny;
  let allowedByPolicy = false;
  let deniedByPolicy = false;
  for (let i = 0; i < policies.length; i++) {
    const verdict = run.given.ip_policies?.[policies[i] as string];
    if (verdict === 'allow') allowedByPolicy = true;
    if (verdict === 'deny') deniedByPolicy = true;
  }
  const allowRules = ((config.allow as unknown[] | undefined) ?? []).length + policies.length > 0;
  const allowed = !allowRules || allow || allowedByPolicy;
  return allowed && !deny && !deniedByPolicy;
}

/** Whether `ip` is in one of the ranges of the action's `field` (each interpolated first). */
function ipMatches(
  config: Json,
  field: 'allow' | 'deny',
  ip: ReturnType<typeof parseIp>,
  run: Run,
): boolean | { error: string } {
  const items = (config[field] as readonly string[] | undefined) ?? [];
  for (let i = 0; i < items.length; i++) {
    const got = interpolate(items[i] as string, run.activation);
    if ('error' in got) return { error: `${field}: ${got.error}` };
    const range = parseCidr(String(got.value));
    if (ip !== undefined && range !== undefined && inCidr(ip, range)) return true;
  }
  return false;
}

/** Each action type's documented behaviour (src/hosted/policy-actions.ts has their fields). */
export const ACTION_BEHAVIOUR: Readonly<Record<string, Behaviour>> = {
  'forward-internal': (config, run) => {
    const url = text(config, 'url', run);
    if (typeof url !== 'string') return failed(url.error);
    if (config.on_error === 'continue' && (run.given.upstream_failed ?? []).includes(url)) {
      run.svc.forward_internal = {
        url,
        error: { code: 'ERR_UPSTREAM', message: 'the upstream failed (given)' },
      };
      return undefined;
    }
    return { end: { kind: 'forward', url } };
  },
  deny: (config, run) =>
    refuse('deny', typeof config.status_code === 'number' ? config.status_code : 403, run),
  'custom-response': (config, run) => {
    const body = text(config, 'body', run);
    if (typeof body !== 'string') return failed(body.error);
    const status = typeof config.status_code === 'number' ? config.status_code : 200;
    return { end: { kind: 'respond', status } };
  },
  'close-connection': () => ({ end: { kind: 'close', by: 'close-connection' } }),
  redirect: (config, run) => {
    const got = rewrite(config, run);
    if ('error' in got) return failed(got.error);
    run.svc.redirect = { url: got.url, matches: [] };
    // The documented no-op: a redirect to the URL requested does nothing.
    if (got.url === run.url) return undefined;
    const status = typeof config.status_code === 'number' ? config.status_code : 302;
    return { end: { kind: 'redirect', url: got.url, status } };
  },
  'url-rewrite': (config, run) => {
    const got = rewrite(config, run);
    if ('error' in got) return failed(got.error);
    run.svc.url_rewrite = { url: got.url, matches: [] };
    run.url = got.url;
    return undefined;
  },
  'restrict-ips': (config, run) => {
    const allowed = ipAllowed(config, run);
    if (typeof allowed !== 'boolean') return failed(allowed.error);
    run.svc.restrict_ips = { action: allowed ? 'allow' : 'deny', matched_cidr: '' };
    return !allowed && enforced(config) ? refuse('restrict-ips', 403, run) : undefined;
  },
  'verify-webhook': (config, run) => {
    const verified = run.given.webhook_verified === true;
    run.svc.verify_webhook = { verified };
    return !verified && enforced(config) ? refuse('verify-webhook', 403, run) : undefined;
  },
  'basic-auth': (config, run) => {
    const presented = /^Basic\s+(.+)$/i.exec(header(run, 'authorization') ?? '');
    let pair = '';
    try {
      pair = presented === null ? '' : atob(presented[1] ?? '');
    } catch {
      pair = '';
    }
    const credentials: string[] = [];
    for (const item of (config.credentials as readonly string[] | undefined) ?? []) {
      const got = interpolate(item, run.activation);
      if ('error' in got) return failed(`credentials: ${got.error}`);
      credentials.push(String(got.value));
    }
    const authorized = presented !== null && credentials.includes(pair);
    const username = pair.includes(':') ? pair.slice(0, pair.indexOf(':')) : '';
    run.svc.basic_auth = { credentials: { presented: presented !== null, username, authorized } };
    return !authorized && enforced(config) ? refuse('basic-auth', 401, run) : undefined;
  },
  'jwt-validation': (_config, run) => {
    const jwt = run.given.jwt;
    const verified = jwt?.valid === true;
    run.svc.jwt_validation = {
      tokens:
        jwt === undefined
          ? []
          : [celObject('svc.JwtToken', { payload: celInput(jwt.claims), verified })],
      error: { code: '', message: '' },
    };
    return verified ? undefined : refuse('jwt-validation', 401, run);
  },
  'rate-limit': (config, run) => {
    const given = run.given.rate_limited;
    const limited =
      given === true || (Array.isArray(given) && given.includes(String(config.name ?? '')));
    run.svc.rate_limit = { limited, bucket_key: '' };
    return limited && enforced(config) ? refuse('rate-limit', 429, run) : undefined;
  },
  'circuit-breaker': (config, run) =>
    run.given.circuit_open === true && enforced(config)
      ? refuse('circuit-breaker', 503, run)
      : undefined,
  oauth: (config, run) => {
    const passed = loggedIn(run, 'oauth', config);
    if (passed === 'passed') return undefined;
    return { end: { kind: 'auth', by: 'oauth', provider: String(config.provider ?? '') } };
  },
  'openid-connect': (config, run) => {
    const passed = loggedIn(run, 'oidc', config);
    if (passed === 'passed') return undefined;
    return {
      end: { kind: 'auth', by: 'openid-connect', provider: String(config.issuer_url ?? '') },
    };
  },
  saml: (config, run) => {
    const passed = loggedIn(run, 'saml', config);
    if (passed === 'passed') return undefined;
    return { end: { kind: 'auth', by: 'saml', provider: 'saml' } };
  },
  'set-vars': (config, run) => {
    for (const entry of (config.vars as readonly Json[] | undefined) ?? []) {
      for (const [name, value] of Object.entries(entry)) {
        if (typeof value !== 'string') {
          run.vars[name] = celInput(value);
          continue;
        }
        const got = interpolate(value, run.activation, true);
        if ('error' in got) return failed(`vars.${name}: ${got.error}`);
        run.vars[name] = got.value;
      }
    }
    return undefined;
  },
  'add-headers': (config, run) => {
    const added: Record<string, string> = {};
    for (const [name, value] of Object.entries((config.headers as Json | undefined) ?? {})) {
      const got = interpolate(String(value), run.activation);
      if ('error' in got) return failed(`headers.${name}: ${got.error}`);
      const lower = name.toLowerCase();
      added[lower] = String(got.value);
      run.added[lower] = [...(run.added[lower] ?? []), String(got.value)];
    }
    run.svc.add_headers = { headers_added: added };
    return undefined;
  },
  'remove-headers': (config, run) => {
    const names = ((config.headers as readonly string[] | undefined) ?? []).map((h) =>
      h.toLowerCase(),
    );
    run.removed.push(...names);
    run.svc.remove_headers = { headers_removed: names };
    return undefined;
  },
  // Documented effects on the response or on logs only: nothing that decides the outcome.
  log: () => undefined,
  'compress-response': () => undefined,
  'terminate-tls': () => undefined,
  'owasp-crs-request': () => undefined,
  'request-body-find-replace': () => undefined,
};

const PHASE_KEYS = {
  on_tcp_connect: ['on_tcp_connect'],
  on_http_request: ['on_http_request', 'inbound'],
} as const;

function queryParams(query: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(query)) out[k] = [...(out[k] ?? []), v];
  return out;
}

/**
 * The path and query as the request line carries them: a client need not normalise (curl sends
 * `/a/../b` and `/back\slash` as written), so neither does the evaluator; scheme and host are
 * the URL parser's (lower-cased, default port dropped), in `url`.
 */
export function requestTarget(text: string): {
  url: Origin;
  path: string;
  query: string;
  href: string;
} {
  const afterScheme = text.indexOf('//') + 2;
  const cut = authorityEnd(text, afterScheme);
  if (cut === text.length) {
    const url = originOf(new URL(text));
    return { url, path: '/', query: '', href: `${url.protocol}//${url.host}/` };
  }
  const origin = originUrl(text, cut);
  const hash = text.indexOf('#', cut);
  const target = hash < 0 ? text.slice(cut) : text.slice(cut, hash);
  const q = target.indexOf('?');
  const path = (q < 0 ? target : target.slice(0, q)) || '/';
  const query = q < 0 ? '' : target.slice(q + 1);
  // Most URLs are written as the parser writes their origin, with a path and no fragment: their
  // text is the address (no second string to build and compare).
  const href =
    origin.canonical && hash < 0 && path === target
      ? text
      : `${origin.url.protocol}//${origin.url.host}${path}${q < 0 ? '' : `?${query}`}`;
  return { url: origin.url, path, query, href };
}

/** Where the authority after `from` ends: the first `/`, `?` or `#`, or the text's end. */
function authorityEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 47 || c === 63 || c === 35) return i;
  }
  return text.length;
}

/**
 * Origins parsed, by the text before a URL's path (bounded): the requests of a preview share a
 * few, and only the parser's scheme, host, port and user are read from them. The parser ends
 * the authority at the first `/`, `?` or `#` (or before), so that text parses as the whole URL
 * does; an origin whose parse differs from the first whole URL's (a text the parser reads
 * otherwise, `https:///host`) is kept as `null`: its URLs are parsed whole.
 */
const origins = new Map<string, KnownOrigin | null>();
const ORIGINS_KEPT = 1_024;

/** What the evaluator reads of a parsed URL: its origin, as plain strings (URL getters are slow). */
export interface Origin {
  readonly protocol: string;
  readonly host: string;
  readonly hostname: string;
  readonly port: string;
  readonly username: string;
  readonly password: string;
}

function originOf(url: URL): Origin {
  const { protocol, host, hostname, port, username, password } = url;
  return { protocol, host, hostname, port, username, password };
}

/** An origin as the evaluator reads it, and whether its text is the one the parser writes. */
interface KnownOrigin {
  readonly url: Origin;
  /** The text before the path is `protocol//host` as parsed (lower case, no default port). */
  readonly canonical: boolean;
}

/**
 * The origin of `text`, whose authority ends at `cut`: the last one asked about when the text
 * starts with it (a preview asks about one endpoint's requests in a row), else by its text.
 */
function originUrl(text: string, cut: number): KnownOrigin {
  const last = lastOrigin;
  if (last !== undefined && last.text.length === cut && text.startsWith(last.text))
    return last.known;
  const origin = text.slice(0, cut);
  let known = origins.get(origin);
  if (known === undefined) {
    const whole = originOf(new URL(text));
    let parsed: KnownOrigin | null = null;
    try {
      const own = originOf(new URL(origin));
      const same =
        own.protocol === whole.protocol &&
        own.host === whole.host &&
        own.username === whole.username &&
        own.password === whole.password;
      parsed = same ? { url: own, canonical: origin === `${own.protocol}//${own.host}` } : null;
    } catch {
      parsed = null;
    }
    if (origins.size >= ORIGINS_KEPT) origins.delete(origins.keys().next().value as string);
    origins.set(origin, parsed);
    known = parsed;
    if (parsed === null) return { url: whole, canonical: false };
  }
  if (known === null) return { url: originOf(new URL(text)), canonical: false };
  lastOrigin = { text: origin, known };
  return known;
}

/** The last origin `originUrl` found by its text. */
let lastOrigin: { readonly text: string; readonly known: KnownOrigin } | undefined;

/**
 * The `endpoint` variable, kept for the last endpoint asked about: the evaluations
 * of a test file or of a preview are of one endpoint, and parsing its URL each time is wasted.
 */
let lastEndpoint: { readonly url: string; readonly value: unknown } | undefined;

function endpointVar(endpointUrl: string): unknown {
  if (lastEndpoint?.url === endpointUrl) return lastEndpoint.value;
  const endpoint = new URL(endpointUrl);
  const protocol = endpoint.protocol.slice(0, -1);
  const endpointPort =
    endpoint.port !== '' ? Number(endpoint.port) : protocol === 'http' ? 80 : 443;
  const value = engineValue('endpoint', {
    url: endpointUrl,
    host: endpoint.hostname,
    port: BigInt(endpointPort),
    protocol,
    addr: `${endpoint.hostname}:${endpointPort}`,
  });
  lastEndpoint = { url: endpointUrl, value };
  return value;
}

function requestVars(
  request: PolicyRequest,
  url: Origin,
  target: ReturnType<typeof requestTarget>,
  query: Record<string, string[]>,
): Record<string, unknown> {
  const headers = request.headers ?? {};
  const port = url.port === '' ? undefined : BigInt(url.port);
  const cookies: Record<string, unknown[]> = {};
  const lines = headers.cookie ?? [];
  for (let l = 0; l < lines.length; l++) {
    for (const part of (lines[l] as string).split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      const name = part.slice(0, eq).trim();
      const cookie = celObject('svc.ReqCookie', { name, value: part.slice(eq + 1).trim() });
      cookies[name] = [...(cookies[name] ?? []), cookie];
    }
  }
  const req: Record<string, unknown> = {
    method: request.method,
    host: url.host,
    version: 'HTTP/1.1',
    headers:
      request.headers === undefined
        ? {}
        : Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [...v]])),
    cookies,
    user_agent: userAgent(headers['user-agent']?.[0] ?? ''),
    content_type: contentType(headers['content-type']?.[0] ?? ''),
    url: celStringLike('svc.Url', target.href, {
      scheme: url.protocol.slice(0, -1),
      host: url.hostname,
      ...(port === undefined ? {} : { port }),
      path: target.path,
      raw_path: target.path,
      query: target.query,
      query_params: query,
      uri: target.href.slice(url.protocol.length + 2 + url.host.length),
      authority: url.host,
      raw: target.href,
      user_password: url.username === '' ? '' : `${url.username}:${url.password}`,
    }),
  };
  const length = headers['content-length']?.[0];
  if (length !== undefined && /^\d+$/.test(length)) req.content_length = BigInt(length);
  return req;
}

/** The values of a request without the header (most probes): one each, never changed. */
let noUserAgent: unknown;
let noContentType: unknown;

function userAgent(raw: string): unknown {
  if (raw === '') {
    noUserAgent ??= celStringLike('svc.UserAgent', '');
    return noUserAgent;
  }
  return celStringLike('svc.UserAgent', raw);
}

/** `req.content_type`: the header, its parameters (`charset=utf-8`) read into a map. */
function contentType(raw: string): unknown {
  if (raw === '') {
    noContentType ??= readContentType('');
    return noContentType;
  }
  return readContentType(raw);
}

function readContentType(raw: string): unknown {
  const parameters: Record<string, string> = {};
  for (const part of raw.split(';').slice(1)) {
    const eq = part.indexOf('=');
    if (eq > 0) parameters[part.slice(0, eq).trim().toLowerCase()] = part.slice(eq + 1).trim();
  }
  return celStringLike('svc.ContentType', raw, { raw, parameters });
}

/** The `conn` variable: the client's address (a string with fields), TLS and the given facts. */
function connVar(request: PolicyRequest, given: PolicyGiven): Record<string, unknown> {
  const conn: Record<string, unknown> = {
    client_ip: request.clientIp ?? DEFAULT_CLIENT_IP,
    ...(request.tls === undefined ? {} : { tls: celInput(request.tls) }),
    ...(celInput(given.conn ?? {}) as Record<string, unknown>),
  };
  for (const key of ['client_ip', 'server_ip']) {
    const ip = conn[key];
    if (typeof ip === 'string') conn[key] = celStringLike('svc.Ip', ip);
  }
  return conn;
}

/**
 * The rules each phase runs, in order, as the evaluator reads them: the phase's key (the first
 * of its names the document has; `undefined`: none) and its rules.
 */
export function phaseRules(policy: Json): readonly PhaseRules[] {
  let phases = phasesOf.get(policy);
  if (phases === undefined) {
    // A literal, not `map`: see "How the preview's code is written" (./impact.ts).
    phases = [phaseOf(policy, 'on_tcp_connect'), phaseOf(policy, 'on_http_request')];
    phasesOf.set(policy, phases);
  }
  return phases;
}

function phaseOf(policy: Json, phase: keyof typeof PHASE_KEYS): PhaseRules {
  const key = PHASE_KEYS[phase].find((k) => Object.hasOwn(policy, k));
  // One shape whether the phase is there or not: the runs read these for every request.
  return { phase, key, rules: key === undefined ? [] : (policy[key] ?? []) };
}

export interface PhaseRules {
  readonly phase: keyof typeof PHASE_KEYS;
  readonly key: string | undefined;
  readonly rules: unknown;
}

/** Each policy's phases, read once: a policy is never changed, and evaluated many times. */
const phasesOf = new WeakMap<Json, readonly PhaseRules[]>();

/** The part of a request its method, URL and headers make: `req`, and what the functions read. */
interface RequestPart {
  readonly req: unknown;
  readonly href: string;
  readonly headers: FunctionScope['headers'];
  readonly query: FunctionScope['query'];
  /** What the functions read of a request given no secrets (most): one for all its requests. */
  readonly scope: FunctionScope;
  /** The method and headers, as `requestPart` writes them: what the requests alike share. */
  readonly alike: string | undefined;
  /** Outcomes of the guards that read only this part (and the endpoint), by text. */
  readonly guards: Map<string, CelOutcome>;
}

/**
 * What the requests of one endpoint's evaluations share when they are alike (a preview's
 * probes): their request parts, by URL, then by method and headers (a few a URL, read in
 * turn). Undefined: nothing is shared.
 */
export type RequestShare = Map<string, RequestPart[]>;

/** The secrets of a request given none (never changed). */
const NO_SECRETS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The variables of a prepared request, as the engine reads them: by name, each built when an
 * expression first reads it; one absent is undefined (the engine reads it so).
 */
interface Variables {
  readonly req: unknown;
  readonly endpoint: unknown;
  readonly conn: unknown;
  readonly time: unknown;
}

/** A variable not built yet. */
const UNBUILT: unique symbol = Symbol('unbuilt');

/**
 * An evaluation's variables: the prepared request's, read from it when an expression reads them
 * (most guards read `req` alone), and the run's own (`vars`, `actions`).
 */
class Activation implements Variables {
  #actions: { readonly svc: Record<string, unknown> } | undefined;

  constructor(
    readonly prepared: PreparedRequest,
    readonly vars: Record<string, unknown>,
    readonly svc: Record<string, unknown>,
  ) {}
  /** `actions.svc`: what the actions before wrote (read by few expressions). */
  get actions(): { readonly svc: Record<string, unknown> } {
    this.#actions ??= { svc: this.svc };
    return this.#actions;
  }
  get req(): unknown {
    return this.prepared.req;
  }
  get endpoint(): unknown {
    return this.prepared.endpoint;
  }
  get conn(): unknown {
    return this.prepared.conn;
  }
  get time(): unknown {
    return this.prepared.time;
  }
}

/**
 * The part of `request` its method, URL and headers make, on the endpoint at `endpointUrl`:
 * with a share, the one of the requests alike (made by the first of them).
 */
function requestPart(
  endpointUrl: string,
  request: PolicyRequest,
  share: RequestShare | undefined,
): RequestPart {
  // By URL, then by method and headers (most requests have none: the key is the method).
  const alike =
    share === undefined
      ? undefined
      : request.headers === undefined
        ? request.method
        : `${request.method}\u0001${JSON.stringify(request.headers)}`;
  let atUrl = share?.get(request.url);
  if (share !== undefined && atUrl === undefined) {
    atUrl = [];
    share.set(request.url, atUrl);
  }
  if (atUrl !== undefined)
    for (let i = 0; i < atUrl.length; i++) {
      const known = atUrl[i] as RequestPart;
      if (known.alike === alike) return known;
    }
  const target = requestTarget(request.url);
  const { url } = target;
  const query = target.query === '' ? {} : queryParams(target.query);
  const headers = request.headers ?? {};
  const http = isHttp(endpointUrl);
  const part: RequestPart = {
    // Of the class the environment declares for it (src/hosted/cel.ts): read as it is.
    req: http ? celObject('svc.Req', requestVars(request, url, target, query)) : undefined,
    href: target.href,
    headers,
    query,
    scope: { headers, query, secrets: NO_SECRETS },
    alike,
    guards: new Map(),
  };
  atUrl?.push(part);
  return part;
}

/** `expression`'s outcome kept in `kept`, else evaluated on `variables` with `scope`'s request. */
function keptOutcome(
  kept: Map<string, CelOutcome>,
  expression: string,
  variables: Readonly<Record<string, unknown>>,
  scope: FunctionScope,
): CelOutcome {
  let got = kept.get(expression);
  if (got === undefined) {
    const before = enterRequest(scope);
    try {
      got = evalCel(expression, variables);
    } finally {
      leaveRequest(before);
    }
    kept.set(expression, got);
  }
  return got;
}

/** Whether an endpoint serves HTTP, for the last endpoint asked about (a preview asks of one). */
let lastScheme: { readonly url: string; readonly http: boolean } | undefined;

function isHttp(endpointUrl: string): boolean {
  if (lastScheme?.url !== endpointUrl) {
    lastScheme = { url: endpointUrl, http: /^https?:/.test(endpointUrl) };
  }
  return lastScheme.http;
}

/**
 * A request made ready to be evaluated on an endpoint, with the facts of a case's `given` that
 * its variables hold (`conn`, `time`, `secrets`): the variables (`req`, `endpoint`, `conn`,
 * `time`) and what the functions read, each built when first read. No evaluation changes them
 * (the actions write `vars`, `actions.svc` and their own state), so one prepared request serves
 * every policy it goes through: the old and the new policy of a preview, and a probe and its
 * logged-in variants (the identity is read by the login actions alone, from each evaluation's
 * `given`). With a share, requests alike in method, URL and headers share their `req` and the
 * outcomes of the guards that read nothing else (./cel.ts `guardReads`), and each keeps the
 * outcomes of its guards that read the case's facts too.
 */
export class PreparedRequest implements Variables {
  readonly http: boolean;
  #part: RequestPart | undefined;
  #conn: unknown = UNBUILT;
  #scope: FunctionScope | undefined;
  #guards: Map<string, CelOutcome> | undefined;

  constructor(
    readonly endpointUrl: string,
    readonly request: PolicyRequest,
    readonly given: PolicyGiven,
    readonly share?: RequestShare,
  ) {
    this.http = isHttp(endpointUrl);
  }

  get #request(): RequestPart {
    this.#part ??= requestPart(this.endpointUrl, this.request, this.share);
    return this.#part;
  }

  /** The URL the request was sent to, as the request line carries it. */
  get href(): string {
    return this.#request.href;
  }

  /** `req`: the request's method, URL and headers (none on a TCP or TLS endpoint). */
  get req(): unknown {
    return this.#request.req;
  }

  get endpoint(): unknown {
    return this.http ? endpointVar(this.endpointUrl) : undefined;
  }

  /** `conn`: the client's address, TLS and the given facts. */
  get conn(): unknown {
    if (this.#conn === UNBUILT) this.#conn = engineValue('conn', connVar(this.request, this.given));
    return this.#conn;
  }

  get time(): unknown {
    return this.given.time === undefined ? undefined : { now: this.given.time };
  }

  /** What the functions read. */
  get scope(): FunctionScope {
    const part = this.#request;
    if (this.given.secrets === undefined) return part.scope;
    this.#scope ??= { headers: part.headers, query: part.query, secrets: this.given.secrets };
    return this.#scope;
  }

  /**
   * One guard expression's outcome on `activation` (this request's variables and the run's
   * state), inside `enterRequest(this.scope)`: kept when it reads no run state and the request
   * is shared.
   */
  guard(expression: string, activation: Readonly<Record<string, unknown>>): CelOutcome {
    if (this.share === undefined) return evalCel(expression, activation);
    const reads = guardReads(expression);
    if (reads === 'run') return evalCel(expression, activation);
    const kept = reads === 'request' ? this.#request.guards : this.#factGuards();
    let got = kept.get(expression);
    if (got === undefined) {
      got = evalCel(expression, activation);
      kept.set(expression, got);
    }
    return got;
  }

  /** The outcomes of its guards that read the case's facts too, by text. */
  #factGuards(): Map<string, CelOutcome> {
    this.#guards ??= new Map();
    return this.#guards;
  }

  /**
   * Whether a rule with these guard expressions, none of which reads the run's state
   * (`guardReads`), fires on this request wherever it stands (all hold, or one fails); undefined
   * when the request is not shared (nothing is kept: ask the run).
   */
  fires(expressions: readonly string[]): boolean | undefined {
    if (this.share === undefined) return undefined;
    for (let i = 0; i < expressions.length; i++) {
      const expression = expressions[i] as string;
      const kept = guardReads(expression) === 'request' ? this.#request.guards : this.#factGuards();
      const got = keptOutcome(
        kept,
        expression,
        this as unknown as Record<string, unknown>,
        this.scope,
      );
      if ('error' in got || typeof got.value !== 'boolean') return true;
      if (!got.value) return false;
    }
    return true;
  }
}

/**
 * `request` prepared for evaluations on the endpoint at `endpointUrl` (see `PreparedRequest`);
 * `share`: what requests alike share, none by default.
 */
export function prepareRequest(
  endpointUrl: string,
  request: PolicyRequest,
  given: PolicyGiven = {},
  share?: RequestShare,
): PreparedRequest {
  return new PreparedRequest(endpointUrl, request, given, share);
}

/**
 * What the service does with `request` on an endpoint at `endpointUrl` with `policy` (the
 * document: phases to rules), the outside world as `given` says.
 */
export function evaluatePolicy(
  policy: Json,
  endpointUrl: string,
  request: PolicyRequest,
  given: PolicyGiven = {},
): Evaluation {
  return evaluatePrepared(policy, prepareRequest(endpointUrl, request, given), given) as Evaluation;
}

/** What a watching caller of `evaluatePrepared` hears of, and when it no longer needs the outcome. */
export interface Watch {
  /**
   * Each rule whose guard held (its actions then run) or failed (the request then ends in an
   * error); a rule not heard of changed nothing.
   */
  readonly fired: (key: string, rule: number) => void;
  /** Before each rule (`phase`: its index in `phaseRules`): true ends the run, undefined. */
  readonly stop: (phase: number, rule: number) => boolean;
}

/** Where a decision was written: the rule (its name, if it has one) and the action. */
function ruleRef(key: string, r: number, rule: Rule, action: number, type: string): RuleRef {
  return typeof rule.name === 'string'
    ? { phase: key, rule: r, action, name: rule.name, type }
    : { phase: key, rule: r, action, type };
}

/**
 * `policy` run on a prepared request (`given`: the facts of the outside world, those the request
 * was prepared with); with a `watch`, undefined when `watch.stop` ended it before an outcome.
 */
export function evaluatePrepared(
  policy: Json,
  prepared: PreparedRequest,
  given: PolicyGiven = {},
  watch?: Watch,
): Evaluation | undefined {
  const { request } = prepared;
  const vars: Record<string, unknown> = {};
  const svc: Record<string, unknown> = {};
  const activation = new Activation(prepared, vars, svc) as unknown as Record<string, unknown>;
  const run: Run = {
    policyPhase: 'on_tcp_connect',
    request,
    given,
    vars,
    svc,
    applied: [],
    added: {},
    removed: [],
    url: prepared.href,
    activation,
  };
  const before = enterRequest(prepared.scope);
  try {
    return runPhases(policy, prepared, run, watch);
  } finally {
    leaveRequest(before);
  }
}

/** The guard of a rule without one (it holds). */
const NO_EXPRESSIONS: readonly string[] = Object.freeze([]);

/** A run's evaluation, ended with `outcome` (`decidedBy`: where it was written). */
function finish(run: Run, outcome: Outcome, decidedBy?: RuleRef): Evaluation {
  const { applied, added, removed, url } = run;
  // Two literals, not a spread: the fields in the same order, without a spread's slow copy.
  return decidedBy === undefined
    ? { outcome, applied, headersAdded: added, headersRemoved: removed, url }
    : { outcome, decidedBy, applied, headersAdded: added, headersRemoved: removed, url };
}

/** `evaluatePrepared`'s run through the policy's phases, with the functions reading its request. */
function runPhases(
  policy: Json,
  prepared: PreparedRequest,
  run: Run,
  watch: Watch | undefined,
): Evaluation | undefined {
  const { http } = prepared;
  const { vars, activation } = run;
  const phases = phaseRules(policy);
  // Indexed loops: a preview runs this for every probe, and iterators and per-rule closures
  // were most of what a run allocated.
  for (let p = 0; p < phases.length; p++) {
    const { phase, key, rules } = phases[p] as PhaseRules;
    if (key === undefined || (!http && phase !== 'on_tcp_connect')) continue;
    // Variables are scoped to the phase that set them.
    for (const name in vars) delete vars[name];
    run.policyPhase = phase;
    const state = run;
    const list = rules as readonly Rule[];
    for (let r = 0; r < list.length; r++) {
      const rule = list[r] as Rule;
      if (watch?.stop(p, r) === true) return undefined;
      let holds = true;
      const expressions = rule.expressions ?? NO_EXPRESSIONS;
      for (let e = 0; e < expressions.length; e++) {
        const expression = expressions[e] as string;
        const got = prepared.guard(expression, activation);
        if ('error' in got || typeof got.value !== 'boolean') watch?.fired(key, r);
        if ('error' in got) {
          return finish(
            run,
            { kind: 'error', message: `${expression}: ${got.error}` },
            ruleRef(key, r, rule, -1, ''),
          );
        }
        if (typeof got.value !== 'boolean') {
          return finish(
            run,
            { kind: 'error', message: `${expression}: gave ${typeof got.value}, not a bool` },
            ruleRef(key, r, rule, -1, ''),
          );
        }
        if (!got.value) {
          holds = false;
          break;
        }
      }
      if (!holds) continue;
      watch?.fired(key, r);
      const actions = rule.actions ?? [];
      for (let a = 0; a < actions.length; a++) {
        const action = actions[a] as Action;
        const behaviour = Object.hasOwn(ACTION_BEHAVIOUR, action.type)
          ? ACTION_BEHAVIOUR[action.type]
          : undefined;
        if (behaviour === undefined) {
          return finish(
            run,
            { kind: 'error', message: `action ${action.type} is not modelled` },
            ruleRef(key, r, rule, a, action.type),
          );
        }
        const step = behaviour(action.config ?? {}, state);
        if (step !== undefined) return finish(run, step.end, ruleRef(key, r, rule, a, action.type));
        state.applied.push(action.type);
      }
    }
  }
  return finish(run, { kind: 'unhandled' });
}

/** Header values as lists, names lower-cased (a case writes one value or several). */
export function headerLists(
  headers: Readonly<Record<string, string | readonly string[]>> | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    out[lower] = [...(out[lower] ?? []), ...(typeof value === 'string' ? [value] : value)];
  }
  return out;
}
