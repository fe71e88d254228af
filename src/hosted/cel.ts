/**
 * The service's CEL, as its documentation states it: the variables a traffic policy may read
 * (`conn`, `endpoint`, `req`, `res`, `time`, `vars`, `actions.svc`) with their types, the
 * service's functions and macros with their signatures, and the bounds on an expression's size
 * and nesting. One statement for everyone who reads CEL: `validate`, the local server and an
 * evaluator all build their environment here, and a real CEL implementation
 * (`@marcbachmann/cel-js`, whose type checker resolves names, fields, overloads and operand
 * types) does the checking; nothing here is a checker of its own.
 *
 * Several documented names are both a string and the parent of fields (`req.url` and
 * `req.url.path`, `conn.client_ip` and `conn.client_ip.categories`). They are object types that
 * also take every string overload of the environment, derived from the environment's own list,
 * so `req.url.startsWith('https')` and `req.url.pathh` are both judged.
 */
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import { EdgesyncError } from '../errors.js';
import { CEL_RUNTIME, CEL_STRING_BUILTINS } from '../policy-eval/functions.js';
import { celJs } from './cel-libraries.js';
import {
  type CelImplementations,
  objectClass,
  objectFrom,
  stringLikeClass,
  stringLikeFrom,
} from './cel-values.js';

export type { CelImplementations } from './cel-values.js';

/**
 * Bounds checked on the text before any parser sees it: a parser's work on a pathological
 * expression (`(-(-(-…`) grows far faster than its length, so the only safe bound is one that
 * keeps such text out. Generous for real policies (the longest documented expression is a few
 * hundred characters, nesting under 10).
 */
export const CEL_LIMITS = {
  /** Characters in one expression (a rule's expression or one `${...}`). */
  maxLength: 4096,
  /** Open brackets of any kind (`(`, `[`, `{`) not yet closed, and unary operators in a row. */
  maxNesting: 32,
  /** The parser's own bound on nodes, as a second line behind the text bounds. */
  maxAstNodes: 2000,
  /** Elements of one list or map literal. */
  maxLiteralElements: 500,
} as const;

/** One problem with an expression; `offset` counts UTF-16 code units into the expression. */
export interface CelIssue {
  readonly offset: number;
  readonly message: string;
}

/**
 * What keeps `text` from being parsed at all: too long or nested too deeply. Scans the text
 * once, skipping string literals, so its cost is the text's length.
 */
export function celBoundIssue(text: string): CelIssue | undefined {
  if (text.length > CEL_LIMITS.maxLength) {
    return {
      offset: CEL_LIMITS.maxLength,
      message: `expression is ${text.length} characters long; at most ${CEL_LIMITS.maxLength} are allowed`,
    };
  }
  let depth = 0;
  let unary = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      unary = 0;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === '!' || c === '-') {
      if (c === '!' && text[i + 1] === '=') {
        i++;
        unary = 0;
        continue;
      }
      unary++;
    } else if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') unary = 0;
    if (depth > CEL_LIMITS.maxNesting || unary > CEL_LIMITS.maxNesting) {
      return {
        offset: i,
        message: `expression nests deeper than ${CEL_LIMITS.maxNesting} levels`,
      };
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Declarations (section 3 of the policy-actions specification)

/** A field's type: a CEL type name, or a nested object (a type of its own). */
type Field = string | ObjectDecl;
interface ObjectDecl {
  readonly fields: Readonly<Record<string, Field>>;
  /** Also a string (documented both as a scalar and as the parent of fields). */
  readonly stringLike?: true;
  /** A name for the type when several fields share it. */
  readonly name?: string;
}

const obj = (fields: Record<string, Field>, name?: string): ObjectDecl =>
  name === undefined ? { fields } : { fields, name };
const stringLike = (fields: Record<string, Field>, name: string): ObjectDecl => ({
  fields,
  stringLike: true,
  name,
});

const S = 'string';
const B = 'bool';
const I = 'int';
const TS = 'google.protobuf.Timestamp';
const DUR = 'google.protobuf.Duration';
const STRINGS = 'list<string>';
const HEADERS = 'map<string, list<string>>';
const STRING_MAP = 'map<string, string>';
const ERROR = obj({ code: S, message: S }, 'svc.Error');

const eachOf = (names: readonly string[], type: Field): Record<string, Field> =>
  Object.fromEntries(names.map((n) => [n, type]));

const LOCATION = [
  'city',
  'continent',
  'country',
  'country_code',
  'metro_code',
  'subdivision',
  'timezone',
] as const;
const IP = stringLike(
  {
    categories: STRINGS,
    is_on_blocklist: B,
    is_tor_node: B,
    as: obj({ number: I, organization: S }, 'svc.AutonomousSystem'),
    geo: obj(
      {
        location: obj(
          {
            ...eachOf(LOCATION, S),
            ...eachOf(['latitude', 'longitude', 'postal_code', 'radius'], S),
            is_eu: B,
          },
          'svc.IpLocation',
        ),
        registered_location: obj({ ...eachOf(LOCATION, S), is_eu: B }, 'svc.IpRegisteredLocation'),
      },
      'svc.IpGeo',
    ),
  },
  'svc.Ip',
);
const CERT_NAME = stringLike(
  {
    common_name: S,
    ...eachOf(
      [
        'country',
        'locality',
        'organization',
        'organizational_unit',
        'postal_code',
        'province',
        'street_address',
      ],
      STRINGS,
    ),
  },
  'svc.CertificateName',
);
const CERT_FIELDS: Record<string, Field> = {
  extensions: 'list<svc.Extension>',
  issuer: CERT_NAME,
  subject: CERT_NAME,
  san: stringLike(
    eachOf(['dns_names', 'email_addresses', 'ip_addresses', 'uris'], STRINGS),
    'svc.SubjectAltNames',
  ),
  serial_number: S,
  signature_algorithm: S,
  validity: obj({ not_after: TS, not_before: TS }, 'svc.Validity'),
};
const CONTENT_TYPE = stringLike({ parameters: STRING_MAP, raw: S }, 'svc.ContentType');
const URL = stringLike(
  {
    ...eachOf(
      ['authority', 'host', 'path', 'query', 'raw', 'raw_path', 'scheme', 'uri', 'user_password'],
      S,
    ),
    port: I,
    query_params: HEADERS,
  },
  'svc.Url',
);
const MATCHES = obj({ matches: STRINGS, url: S, error: ERROR }, 'svc.RewriteResult');
const REPLACEMENTS = obj({ replacements: 'list<svc.Replacement>' }, 'svc.ReplacementsResult');
const OWASP = obj(
  {
    decision: S,
    anomaly_score: I,
    anomaly_score_threshold: I,
    matched_rules: 'list<svc.MatchedRule>',
    error: ERROR,
  },
  'svc.OwaspResult',
);
const SESSION_FLAGS = eachOf(['session_timed_out', 'session_max_duration_reached'], B);

/**
 * Object types whose values an evaluator builds whole, of its own class (`objectClass`), for
 * each request: the engine converting a plain object costs an evaluation and two maps each.
 */
const BUILT: ReadonlySet<string> = new Set(['svc.Req']);

/** Object types only named by lists (`list<svc.Extension>`). */
const LISTED: Readonly<Record<string, ObjectDecl>> = {
  'svc.Extension': obj({ id: S, critical: B, value: 'bytes' }),
  'svc.ReqCookie': obj({ name: S, value: S }),
  'svc.ResCookie': obj({
    ...eachOf(['domain', 'name', 'path', 'same_site', 'value'], S),
    expires: TS,
    max_age: DUR,
    http_only: B,
    secure: B,
    unparsed_attributes: STRING_MAP,
  }),
  'svc.Replacement': obj({ replacement_index: I, matched_content: S }),
  'svc.MatchedRule': obj({ id: I, message: S, severity: S, data: S }),
  'svc.JwtToken': obj({
    ...eachOf(['header', 'location', 'location_property', 'payload', 'signature'], 'dyn'),
    verified: B,
  }),
  'svc.HttpAttempt': obj({
    resolved_ip: S,
    response_header: HEADERS,
    response_status_code: I,
    response_time_ms: I,
  }),
};

/** The variables of a policy expression, with their types. */
export const CEL_VARIABLES: Readonly<Record<string, Field>> = {
  conn: obj(
    {
      bytes_in: I,
      bytes_out: I,
      client_ip: IP,
      server_ip: IP,
      client_port: I,
      server_port: I,
      server_region: S,
      ts: obj({ start: TS }, 'svc.ConnTimes'),
      geo: obj(
        eachOf(
          ['city', 'country', 'country_code', 'latitude', 'longitude', 'radius', 'subdivision'],
          S,
        ),
        'svc.ConnGeo',
      ),
      tls: obj(
        {
          ...eachOf(['cipher_suite', 'ja4_fingerprint', 'negotiated_alpn', 'sni', 'version'], S),
          session_resumed: B,
          client: obj({ ...CERT_FIELDS, pem: S }, 'svc.ClientCertificate'),
          server: obj(CERT_FIELDS, 'svc.ServerCertificate'),
        },
        'svc.Tls',
      ),
      k8s: obj(
        {
          pod: obj(
            {
              id: S,
              metadata: obj(
                {
                  ...eachOf(['name', 'namespace', 'error_code', 'error_message'], S),
                  annotations: STRING_MAP,
                },
                'svc.PodMetadata',
              ),
            },
            'svc.Pod',
          ),
        },
        'svc.Kubernetes',
      ),
    },
    'svc.Conn',
  ),
  endpoint: obj(
    { ...eachOf(['addr', 'host', 'id', 'protocol', 'url'], S), port: I },
    'svc.Endpoint',
  ),
  req: obj(
    {
      content_encoding: STRINGS,
      content_length: I,
      content_type: CONTENT_TYPE,
      cookies: 'map<string, list<svc.ReqCookie>>',
      headers: HEADERS,
      trailers: HEADERS,
      ...eachOf(['host', 'location', 'method', 'version'], S),
      ts: obj({ body_received: TS, header_received: TS }, 'svc.ReqTimes'),
      url: URL,
      user_agent: stringLike(
        {
          ...eachOf(['name', 'version', 'os', 'os_version', 'device', 'url'], S),
          ...eachOf(['is_mobile', 'is_tablet', 'is_desktop', 'is_bot'], B),
        },
        'svc.UserAgent',
      ),
    },
    'svc.Req',
  ),
  res: obj(
    {
      content_encoding: STRINGS,
      content_length: I,
      content_type: CONTENT_TYPE,
      cookies: 'map<string, list<svc.ResCookie>>',
      headers: HEADERS,
      trailers: HEADERS,
      location: S,
      status_code: I,
    },
    'svc.Res',
  ),
  time: obj({ now: S }, 'svc.Time'),
  // Set by `set-vars` earlier in the phase: any name, any type.
  vars: 'map<string, dyn>',
  actions: obj(
    {
      svc: obj(
        {
          add_headers: obj({ headers_added: 'map<string, dyn>' }),
          ai_gateway: 'map<string, dyn>',
          basic_auth: obj({
            credentials: obj({ presented: B, username: S, authorized: B }, 'svc.BasicAuthCreds'),
          }),
          compress: obj({ already_compressed: B, negotiated_algorithm: S }),
          forward_internal: obj({ url: S, error: ERROR }),
          http_request: obj({
            error: ERROR,
            attempts: 'list<svc.HttpAttempt>',
            req: obj({ method: S, header: HEADERS, url: S, body: S }, 'svc.HttpRequestReq'),
            res: obj(
              { resolved_ip: S, header: HEADERS, status_code: I, time_ms: I, body: S },
              'svc.HttpRequestRes',
            ),
          }),
          jwt_validation: obj({ tokens: 'list<svc.JwtToken>', error: ERROR }),
          log: obj({ metadata: 'map<string, dyn>' }),
          oauth: obj({
            error: ERROR,
            identity: obj(
              eachOf(['id', 'email', 'name', 'provider_user_id', 'current_provider_session_id'], S),
              'svc.OauthIdentity',
            ),
            ...eachOf(['access_token', 'refresh_token', 'expires_at'], S),
            ...SESSION_FLAGS,
            userinfo_refreshed: B,
          }),
          oidc: obj({
            error: ERROR,
            identity: obj(
              eachOf(['id', 'email', 'name', 'provider_user_id', 'current_session_id'], S),
              'svc.OidcIdentity',
            ),
            ...eachOf(['identity_token', 'access_token', 'refresh_token', 'expires_at'], S),
            ...SESSION_FLAGS,
            // The docs write both spellings.
            userinfo_refreshed: B,
            user_info_refreshed: B,
          }),
          owasp_crs_request: OWASP,
          owasp_crs_response: OWASP,
          rate_limit: obj({ bucket_key: S, limited: B, error: ERROR }),
          redirect: MATCHES,
          url_rewrite: MATCHES,
          remove_headers: obj({ headers_removed: STRINGS }),
          request_body_find_replace: REPLACEMENTS,
          response_body_find_replace: REPLACEMENTS,
          sse_find_replace: REPLACEMENTS,
          restrict_ips: obj({ action: S, matched_cidr: S, error: ERROR }),
          // The docs disagree on `error.code` and `error_code`: both are accepted.
          terminate_tls: obj({ error: ERROR, error_code: S, error_message: S }),
          verify_webhook: obj({ verified: B, error: ERROR }),
        },
        'svc.Actions',
      ),
    },
    'svc.ActionsRoot',
  ),
};

/**
 * The service's functions (macros/index.mdx), as signatures. A name before the dot that is not
 * a type (`base64.decode`) is a namespace: an identifier of its own type with the function as
 * its method, the way the CEL implementation itself declares `optional.of` and `cel.bind`.
 */
export const CEL_FUNCTIONS: readonly string[] = [
  'base64.decode(string): bytes',
  'base64.encode(bytes): string',
  'base64.encode(string): string',
  'basic_auth.encode(string, string): string',
  ...['crc32', 'crc64', 'md5', 'sha1', 'sha256', 'sha512', 'xxhash64'].flatMap((h) => [
    `hash.${h}(string): string`,
    `hash.${h}(string, string): string`,
    `string.${h}(): string`,
    `string.${h}(string): string`,
  ]),
  'json.decode(string): dyn',
  'json.encode(dyn): string',
  'lists.range(int): list<int>',
  'queryString.decode(string): map<string, list<string>>',
  'queryString.encode(map<string, dyn>): string',
  'rand.double(): double',
  'rand.int(): int',
  'rand.int(int, int): int',
  'secrets.get(string, string): string',
  'strings.quote(string): string',
  'url.escape(string): string',
  'url.parse(string): svc.Url',
  'url.unescape(string): string',
  'getReqCookie(string): svc.ReqCookie',
  'getReqHeader(string): list<string>',
  'getQueryParam(string): list<string>',
  'hasQueryParam(string): bool',
  'hasReqCookie(string): bool',
  'hasReqHeader(string): bool',
  'getResCookie(string): svc.ResCookie',
  'getResHeader(string): list<string>',
  'hasResCookie(string): bool',
  'hasResHeader(string): bool',
  'inCidrRange(string, string): bool',
  'inCidrRanges(string, list<string>): bool',
  'matches(string, string): bool',
  'list<A>.encodeJson(): string',
  'list<A>.slice(int, int): list<A>',
  'list<A>.flatten(): list<dyn>',
  'list<A>.flatten(int): list<dyn>',
  'list<A>.sort(): list<A>',
  'list<A>.distinct(): list<A>',
  'map.encodeJson(): string',
  'map.encodeQueryString(): string',
  ...['isJson', 'isPrivateIp', 'isQueryString', 'isURL'].map((m) => `string.${m}(): bool`),
  ...['decodeBase64', 'encodeBase64', 'escapeUrl', 'unescapeUrl', 'lower', 'upper', 'reverse'].map(
    (m) => `string.${m}(): string`,
  ),
  'string.charAt(int): string',
  'string.format(list<dyn>): string',
  'string.replace(string, string): string',
  'string.replace(string, string, int): string',
  'string.split(): list<string>',
  'string.decodeJson(): dyn',
  'string.decodeQueryString(): map<string, list<string>>',
  'string.parseUrl(): svc.Url',
];

// ---------------------------------------------------------------------------------------------
// The environment

const NAMESPACE_SUFFIX = '.namespace';

/**
 * An environment with every declaration above. Functions without an implementation in
 * `implementations` fail when evaluated, naming the function: enough for checking, and an
 * evaluator supplies what it runs.
 */
export function createCelEnvironment(implementations: CelImplementations = {}): Environment {
  const env = new (celJs().Environment)({
    unlistedVariablesAreDyn: false,
    homogeneousAggregateLiterals: false,
    limits: {
      maxAstNodes: CEL_LIMITS.maxAstNodes,
      maxDepth: CEL_LIMITS.maxNesting * 2,
      maxListElements: CEL_LIMITS.maxLiteralElements,
      maxMapEntries: CEL_LIMITS.maxLiteralElements,
      maxCallArguments: 32,
    },
  });
  const stringLikeTypes: string[] = [];
  const declared = new Set<string>();
  const declare = (decl: ObjectDecl, path: string): string => {
    const name = decl.name ?? path;
    if (declared.has(name)) return name;
    declared.add(name);
    const fields: Record<string, string> = {};
    for (const [key, field] of Object.entries(decl.fields)) {
      fields[key] = typeof field === 'string' ? field : declare(field, typeName(`${name}.${key}`));
    }
    if (decl.stringLike) {
      // Run as values of a class of ours, so that their string form is at hand.
      const ctor = stringLikeClass(name);
      env.registerType(name, { ctor, fields, convert: (v: unknown) => stringLikeFrom(ctor, v) });
      stringLikeTypes.push(name);
    } else if (Object.hasOwn(LISTED, name) || BUILT.has(name)) {
      // Read as list elements, which the engine does not convert from plain objects; or built
      // whole by the evaluator (`BUILT`).
      const ctor = objectClass(name);
      env.registerType(name, { ctor, fields, convert: (v: unknown) => objectFrom(ctor, v) });
    } else env.registerType(name, { fields });
    return name;
  };
  for (const [name, decl] of Object.entries(LISTED)) declare(decl, name);
  for (const [name, field] of Object.entries(CEL_VARIABLES)) {
    env.registerVariable(
      name,
      typeof field === 'string' ? field : declare(field, typeName(`svc.${name}`)),
    );
  }
  const namespaces = new Set<string>();
  const implementation = (signature: string) =>
    implementations[signature] ??
    (() => {
      throw new EdgesyncError(
        'ES_INTERNAL',
        `${signature} is declared for checking and not implemented here`,
      );
    });
  for (const signature of CEL_FUNCTIONS) {
    const receiver = /^([a-zA-Z_][a-zA-Z0-9_]*)\.[a-zA-Z0-9_]+\(/.exec(signature)?.[1];
    let declaredSignature = signature;
    if (receiver !== undefined && !isTypeName(receiver)) {
      const type = typeName(`svc.${receiver}${NAMESPACE_SUFFIX}`);
      if (!namespaces.has(receiver)) {
        namespaces.add(receiver);
        // A constant of a class of its own (its type is told by its constructor), so that an
        // evaluation needs no value for it.
        const ctor = class {};
        env.registerType(type, { ctor, fields: {} });
        env.registerConstant(receiver, type, new ctor());
      }
      declaredSignature = `${type}${signature.slice(receiver.length)}`;
      // The namespace is the receiver; the implementation takes the arguments only.
      const run = implementation(signature) as (...args: unknown[]) => unknown;
      env.registerFunction(declaredSignature, (_namespace: unknown, ...args: unknown[]) =>
        run(...args),
      );
      continue;
    }
    env.registerFunction(declaredSignature, implementation(signature));
  }
  env.registerFunction('list.sortBy(ast, ast): list<dyn>', sortBy);
  for (const type of stringLikeTypes) alsoAString(env, type, implementations);
  return env;
}

/** The implementation's macro interface, as far as `sortBy` uses it (see its README). */
interface MacroNode {
  readonly op: string;
  readonly args: unknown;
}
interface CheckedType {
  readonly kind: string;
  readonly valueType?: CheckedType;
}
interface TypeContext {
  forkWithVariable(name: string, type: CheckedType): TypeContext;
}
interface RunContext {
  reuse(ctx: RunContext): RunContext;
  setIterValue(value: unknown, ev: unknown): RunContext;
}
interface SortByMacro {
  readonly receiver: MacroNode;
  readonly variable: string;
  readonly key: MacroNode;
  keyCtx?: TypeContext;
}

/**
 * `list.sortBy(x, key)`: the list ordered by `key` (the service's macro; ascending, stable).
 * Checked like the standard macros: `key` in a scope where `x` is an element of the list.
 */
function sortBy({ args, receiver }: { args: MacroNode[]; receiver: MacroNode }) {
  const [variable, key] = args as [MacroNode, MacroNode];
  if (variable.op !== 'id') {
    throw new EdgesyncError('ES_MANIFEST', 'sortBy(var, key): the first argument must be a name');
  }
  const macro: SortByMacro = { receiver, variable: variable.args as string, key };
  return {
    ...macro,
    typeCheck(
      checker: { check(node: MacroNode, ctx: TypeContext): CheckedType },
      m: SortByMacro,
      ctx: TypeContext,
    ): CheckedType {
      const list = checker.check(m.receiver, ctx);
      const element = list.valueType ?? list;
      m.keyCtx = ctx.forkWithVariable(m.variable, element);
      checker.check(m.key, m.keyCtx);
      return list;
    },
    evaluate(
      ev: { run(node: MacroNode, ctx: RunContext): unknown },
      m: SortByMacro,
      ctx: RunContext,
    ): unknown[] {
      const items = ev.run(m.receiver, ctx) as unknown[];
      const keyCtx = m.keyCtx as unknown as RunContext;
      const keyed = items.map((item) => ({
        item,
        key: ev.run(m.key, keyCtx.reuse(ctx).setIterValue(item, ev)) as string | number | bigint,
      }));
      keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      return keyed.map((k) => k.item);
    },
  };
}

/** A type name the implementation's signatures can spell (no `_`): `svc.basic_auth` -> `svc.basicAuth`. */
function typeName(path: string): string {
  return path.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function isTypeName(name: string): boolean {
  return name === 'string' || name === 'bytes' || name === 'list' || name === 'map';
}

/**
 * Gives `type` every string overload the environment has (functions, methods and the
 * comparison and concatenation operators), so a value documented as both a string and a parent
 * of fields is usable as either. Derived from the environment's own definitions: nothing about
 * strings is listed twice. At run time such a value is its string form (`String(value)`), run
 * by the implementation given for the string overload.
 */
function alsoAString(env: Environment, type: string, implementations: CelImplementations): void {
  const asString = (v: unknown) => (typeof v === 'string' ? v : String(v));
  const { functions } = env.getDefinitions();
  for (const fn of functions) {
    const params = fn.params.map((p) => p.type);
    const onReceiver = fn.receiverType === 'string';
    const stringParams = params.flatMap((t, i) => (t === 'string' ? [i] : []));
    if (!onReceiver && stringParams.length === 0) continue;
    // One variant with the receiver (if a string) or the first string parameter replaced: the
    // cases written in practice (`req.url.contains('x')`, `inCidrRange(conn.client_ip, c)`).
    const receiverType = onReceiver ? type : fn.receiverType;
    const at = onReceiver ? -1 : (stringParams[0] as number);
    const args = params.map((t, i) => (i === at ? type : t));
    const signature = `${receiverType ? `${receiverType}.` : ''}${fn.name}(${args.join(', ')}): ${fn.returnType}`;
    // Run by the evaluator's implementation of the string overload, on the string form.
    const original = implementations[fn.signature] as ((...a: unknown[]) => unknown) | undefined;
    const position = onReceiver ? 0 : at;
    const handler = (...values: unknown[]) => {
      if (original === undefined) {
        throw new EdgesyncError(
          'ES_INTERNAL',
          `${signature} is declared for checking and not implemented here`,
        );
      }
      return original(...values.map((v, i) => (i === position ? asString(v) : v)));
    };
    try {
      env.registerFunction(signature, handler);
    } catch {
      // An overload that overlaps one already there (a `dyn` parameter): that one serves.
    }
  }
  // `==` brings `!=` and both operand orders with it.
  for (const op of ['==', '<', '<=', '>', '>=', '+'] as const) {
    const returns = op === '+' ? ': string' : '';
    const run = (a: unknown, b: unknown) => compareStrings(op, asString(a), asString(b));
    env.registerOperator(`${type} ${op} string${returns}`, run);
    if (op !== '==') env.registerOperator(`string ${op} ${type}${returns}`, run);
  }
  env.registerOperator(`${type} in list<string>`, (a: unknown, b: unknown) =>
    (b as readonly unknown[]).includes(asString(a)),
  );
  env.registerOperator(`${type} in map`, (a: unknown, b: unknown) =>
    b instanceof Map ? b.has(asString(a)) : Object.hasOwn(b as object, asString(a)),
  );
}

function compareStrings(op: string, a: string, b: string): boolean | string {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      return a + b;
  }
}

// ---------------------------------------------------------------------------------------------
// Checking

let checking: Environment | undefined;
/**
 * The environment for checking, built once (about 100 ms) and never changed. A server builds it
 * as it starts, so that no client's first policy pays for it. It carries the policy evaluator's
 * implementations (src/policy-eval/functions.ts): an expression parsed and checked here is the
 * one the evaluator runs (`checkedCel`), never parsed twice.
 */
export function celCheckingEnvironment(): Environment {
  checking ??= createCelEnvironment({ ...CEL_STRING_BUILTINS, ...CEL_RUNTIME });
  return checking;
}

/**
 * The scopes an expression may be checked in: a policy's (the default) and `http-request`'s
 * `retry_condition`, which also reads the attempt it judges (`attempts`, `last_attempt.req`,
 * `.res`, `.error`; the service documents these members' own types nowhere, so they are dyn).
 */
export type CelScope = 'policy' | 'retry_condition';

/** The scope of a bare expression in an action's config field. */
export function celScopeOf(action: string, field: string): CelScope {
  return action === 'http-request' && field === 'retry_condition' ? 'retry_condition' : 'policy';
}

const RETRY_SCOPE = { attempts: 'int', last_attempt: 'map<string, dyn>' } as const;
let retryChecking: Environment | undefined;

function scopeEnvironment(scope: CelScope): Environment {
  if (scope === 'policy') return celCheckingEnvironment();
  if (retryChecking === undefined) {
    const env = celCheckingEnvironment().clone();
    for (const [name, type] of Object.entries(RETRY_SCOPE)) env.registerVariable(name, type);
    retryChecking = env;
  }
  return retryChecking;
}

/**
 * Everything wrong with one expression, each at its offset: a bound exceeded (checked before
 * any parsing), a syntax error at the offending token, an unknown variable, field or function,
 * an operand or argument of the wrong type, or (with `expect: 'bool'`, a rule's expression) a
 * result that cannot be a bool. The implementation stops at an expression's first error; the
 * expressions of a policy are each checked, so a policy's errors all come out at once.
 */
export function checkCel(
  text: string,
  expect: 'bool' | 'any' = 'any',
  scope: CelScope = 'policy',
): CelIssue[] {
  const checked = checkedCel(text, scope);
  if ('issue' in checked) return [checked.issue];
  if (expect === 'bool' && checked.type !== 'bool' && checked.type !== 'dyn') {
    return [{ offset: 0, message: `the expression is a ${checked.type}, not a bool` }];
  }
  return [];
}

/** An expression parsed and checked: what runs it (on a context of its variables) and its type. */
export type CheckedCel =
  | { readonly program: ParseResult; readonly type: string }
  | { readonly issue: CelIssue };

/**
 * Checked expressions kept by scope and text, oldest dropped first past `CHECKED_KEPT`: parsing
 * and checking are most of what an expression costs (a fraction of a millisecond each), and the
 * same expressions are checked by validation, then run by the evaluator and read by the impact
 * preview's probes, plan after plan in a long-running process.
 */
const checkedByScope: Record<CelScope, Map<string, CheckedCel>> = {
  policy: new Map(),
  retry_condition: new Map(),
};
export const CHECKED_KEPT = 8_192;

/**
 * `text` parsed and checked once in `scope`'s environment, or its first issue (a bound
 * exceeded, checked before any parsing; a syntax error; a type error). The program runs with the
 * evaluator's implementations of the service's functions.
 */
export function checkedCel(text: string, scope: CelScope = 'policy'): CheckedCel {
  const kept = checkedByScope[scope];
  let checked = kept.get(text);
  if (checked === undefined) {
    checked = parseAndCheck(text, scope);
    if (kept.size >= CHECKED_KEPT) kept.delete(kept.keys().next().value as string);
    kept.set(text, checked);
  }
  return checked;
}

function parseAndCheck(text: string, scope: CelScope): CheckedCel {
  const bound = celBoundIssue(text);
  if (bound !== undefined) return { issue: bound };
  const located = (error: unknown): CheckedCel => {
    const node = (error as { node?: { pos?: unknown } } | undefined)?.node;
    const offset = typeof node?.pos === 'number' ? node.pos : 0;
    return { issue: { offset: Math.min(offset, text.length), message: firstLine(error) } };
  };
  let program: ParseResult;
  let result: ReturnType<ParseResult['check']>;
  try {
    program = scopeEnvironment(scope).parse(text);
    result = program.check();
  } catch (err) {
    return located(err);
  }
  if (!result.valid) return located(result.error);
  return { program, type: result.type ?? 'dyn' };
}

/** The message without the implementation's code frame (which would quote the whole text). */
function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n')[0] ?? '').trim();
}

/** One `${...}` of a string value: its expression and where that starts in the value. */
export interface Interpolation {
  readonly expr: string;
  readonly offset: number;
}

/**
 * The expressions a string value interpolates with `${expr}`, or the offset of an unterminated
 * one. The end of an interpolation is its matching `}`: braces of CEL map literals and braces
 * inside CEL string literals do not end it. The policy syntax defines this, not CEL.
 */
export function interpolations(
  text: string,
): { readonly exprs: Interpolation[] } | { readonly unterminated: number } {
  const exprs: Interpolation[] = [];
  let at = text.indexOf('${');
  while (at >= 0) {
    const start = at + 2;
    const end = matchingBrace(text, start);
    if (end < 0) return { unterminated: at };
    exprs.push({ expr: text.slice(start, end), offset: start });
    at = text.indexOf('${', end + 1);
  }
  return { exprs };
}

function matchingBrace(text: string, from: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Everything wrong with the `${...}` interpolations of a string value, at offsets in it. */
export function checkInterpolations(text: string): CelIssue[] {
  const found = interpolations(text);
  if ('unterminated' in found) {
    return [{ offset: found.unterminated, message: `unterminated \${: no matching }` }];
  }
  return found.exprs.flatMap(({ expr, offset }) =>
    checkCel(expr).map((issue) => ({ offset: offset + issue.offset, message: issue.message })),
  );
}

/**
 * Whether one of a string value's `${...}` expressions names the identifier `name` (`vars` in
 * `${vars.a}`), read from the implementation's own syntax tree. Only for text that passed
 * `checkInterpolations` (bounded, parsed once already).
 */
export function interpolatesIdentifier(text: string, name: string): boolean {
  const found = interpolations(text);
  if ('unterminated' in found) return false;
  return found.exprs.some(({ expr }) => {
    const checked = checkedCel(expr);
    if ('issue' in checked) return false;
    let stack: unknown[] = [checked.program.ast];
    while (stack.length > 0) {
      const node = stack.pop();
      if (Array.isArray(node)) stack = stack.concat(node);
      else if (typeof node === 'object' && node !== null) {
        const { op, args } = node as { op?: unknown; args?: unknown };
        if (op === 'id' && args === name) return true;
        stack.push(args);
      }
    }
    return false;
  });
}
