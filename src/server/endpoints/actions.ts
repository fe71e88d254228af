/**
 * The traffic policy's actions as the local server states them (policy-actions.md, sections 0
 * and 2): for each of the 28 types the phases it may run in, whether it ends the phase, its
 * config as a strict zod schema (unknown config fields refused, so a typo is an error rather
 * than a silently ignored field), where its strings may interpolate `${...}` and which are bare
 * CEL. Issues carry the service's 22xx code in `params.code` where one applies; `./policy.ts`
 * maps the rest by kind. The table is the server's own statement of the rules (the oracle the
 * client's table is tested against): nothing here comes from the manifest side.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import { parseDuration } from '../../duration.js';
import {
  checkHeaderName,
  checkHeaderValue,
  LIMITS,
  re2Problem,
  WEBHOOK_PROVIDERS,
} from '../../hosted/edge-api.js';
import { ENDPOINT_ERROR_CODE as CODE, ENDPOINT_LIMITS } from './codes.js';
import { isInternalHost, parseEndpointUrl } from './url.js';

export const PHASES = [
  'on_tcp_connect',
  'on_http_request',
  'on_http_response',
  'on_event_stream_message',
] as const;
export type Phase = (typeof PHASES)[number];
/** Legacy phase names and what they mean. */
const LEGACY_PHASES: Readonly<Record<string, Phase>> = {
  inbound: 'on_http_request',
  outbound: 'on_http_response',
};
export const AUTH_ACTIONS: ReadonlySet<string> = new Set(['oauth', 'openid-connect', 'saml']);
/** Type names the documentation uses that are not types, with the type meant (2201). */
export const MISNAMED_ACTIONS: Readonly<Record<string, string>> = {
  oidc: 'openid-connect',
  'webhook-validation': 'verify-webhook',
  'ip-restriction': 'restrict-ips',
};

/** What forward-internal and restrict-ips need to know about the endpoint and its account. */
export interface PolicyContext {
  readonly scheme: string;
  /** Bound `internal` (a `.internal` host). */
  readonly internal: boolean;
  /**
   * Whether the account has this IP policy (restrict-ips names policies by ID, 2216 for one that
   * does not exist). Absent: only the IDs' form is checked.
   */
  readonly ipPolicyExists?: (id: string) => boolean;
}

interface ActionSpec {
  readonly phases: readonly Phase[];
  /** Whether an action with this config ends its phase. */
  readonly terminating: (config: Record<string, unknown>) => boolean;
  /** The config for this phase (deny takes none in on_tcp_connect). */
  readonly config: (phase: Phase, ctx: PolicyContext) => z.ZodType;
  /**
   * Where strings may interpolate `${...}`: per field, dotted paths below it (`''` the field
   * itself, `*` one key or index, `**` anything below).
   */
  readonly templates?: Readonly<Record<string, readonly string[]>>;
  /** Fields whose strings are bare CEL expressions. */
  readonly bareCel?: readonly string[];
}

const never = () => false;
const always = () => true;
const unlessContinue = (c: Record<string, unknown>) => c.on_error !== 'continue';
const HTTP: readonly Phase[] = ['on_http_request', 'on_http_response'];
const ALL: readonly Phase[] = ['on_tcp_connect', 'on_http_request', 'on_http_response'];
const REQUEST: readonly Phase[] = ['on_http_request'];

/** An issue with the service's code. */
function issue(ctx: z.core.$RefinementCtx, code: string, message: string, path?: PropertyKey[]) {
  ctx.addIssue({ code: 'custom', message, params: { code }, ...(path ? { path } : {}) });
}
const coded = (code: string, message: string) => ({ message, params: { code } });

/** A runtime value: `${...}` strings are checked as CEL by `./policy.ts`, not as values. */
const templated = (text: string) => text.includes('${');

const str = z.string();
const bool = z.boolean();
const nonEmpty = z.string().min(1, coded(CODE.empty, 'must not be empty'));
const strictObj = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.strictObject(shape, {
    error: (i) =>
      i.code === 'unrecognized_keys'
        ? `unknown field(s) ${i.keys.join(', ')}; accepted: ${Object.keys(shape).join(', ')}`
        : undefined,
  });
const ranged = (min: number, max: number) =>
  z
    .number()
    .int()
    .superRefine((n, ctx) => {
      if (n < min || n > max) issue(ctx, CODE.outOfRange, `must be between ${min} and ${max}`);
    });
const enumOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.string().superRefine((v, ctx) => {
    if (!(values as readonly string[]).includes(v))
      issue(ctx, CODE.notMember, `must be one of ${values.join(', ')}, was ${v}`);
  });

const duration = (min = 1, max = Number.POSITIVE_INFINITY, step = 1) =>
  z.string().superRefine((text, ctx) => {
    let ms: number;
    try {
      ms = parseDuration(text, 'duration');
    } catch {
      issue(ctx, CODE.configValue, `${JSON.stringify(text)} is not a duration (e.g. 30s, 15m, 1h)`);
      return;
    }
    if (ms > max) issue(ctx, CODE.durationTooLong, `${text} exceeds ${max / 1000}s`);
    else if (ms < min) issue(ctx, CODE.outOfRange, `${text} is below ${min / 1000}s`);
    else if (ms % step !== 0) issue(ctx, CODE.outOfRange, `must be a multiple of ${step / 1000}s`);
  });

function isCidr(text: string): boolean {
  const [addr, bits, extra] = text.split('/');
  if (addr === undefined || bits === undefined || extra !== undefined || !/^\d{1,3}$/.test(bits)) {
    return false;
  }
  const max = isIPv4(addr) ? 32 : isIPv6(addr) ? 128 : -1;
  return Number(bits) <= max;
}
const cidrList = z.array(
  z.string().superRefine((v, ctx) => {
    if (!templated(v) && !isCidr(v)) issue(ctx, CODE.badCidr, 'must be a CIDR (e.g. 10.0.0.0/8)');
  }),
);

const urlString = z.string().superRefine((v, ctx) => {
  if (templated(v)) return;
  let ok = false;
  try {
    ok = /^[a-z][a-z0-9+.-]*:$/i.test(new URL(v).protocol);
  } catch {
    ok = false;
  }
  if (!ok) issue(ctx, CODE.notUrl, 'must be a URL');
});

const regex = z.string().superRefine((v, ctx) => {
  if (templated(v)) return;
  const why = re2Problem(v);
  if (why !== undefined) issue(ctx, CODE.badRegex, `not a valid regular expression: ${why}`);
});

const headerName = z.string().superRefine((v, ctx) => {
  const violation = checkHeaderName(v);
  if (violation !== undefined) issue(ctx, CODE.headerName, violation.message);
});
const headerValue = z.string().superRefine((v, ctx) => {
  const violation = checkHeaderValue(v);
  if (violation !== undefined) issue(ctx, CODE.headerValue, violation.message);
});

/**
 * A map of header names to values, `min`..10 of them. `add-headers` may not add `user-agent`
 * (the request's own); other header maps have no such rule.
 */
function headerMap(min: number, opts: { noUserAgent: boolean }) {
  return z.record(z.string(), headerValue).superRefine((m, ctx) => {
    const names = Object.keys(m);
    if (names.length > ENDPOINT_LIMITS.headersPerAction) {
      issue(
        ctx,
        CODE.tooManyHeaders,
        `at most ${ENDPOINT_LIMITS.headersPerAction} headers, got ${names.length}`,
      );
    } else if (names.length < min) issue(ctx, CODE.empty, 'cannot be empty');
    const lower = names.map((n) => n.toLowerCase());
    if (new Set(lower).size !== lower.length)
      issue(ctx, CODE.duplicates, 'header names must be unique (case-insensitive)');
    for (const name of names) {
      const violation = checkHeaderName(name);
      if (violation !== undefined) issue(ctx, CODE.headerName, violation.message, [name]);
      if (opts.noUserAgent && name.toLowerCase() === 'user-agent')
        issue(ctx, CODE.headerName, 'user-agent may not be added', [name]);
    }
  });
}

const forwardInternal = (ctx: PolicyContext) =>
  strictObj({
    url: z.string().superRefine((text, issueCtx) => {
      if (templated(text)) return;
      const why = forwardTargetProblem(text, ctx.scheme);
      if (why !== undefined) issue(issueCtx, CODE.notUrl, why);
    }),
    on_error: enumOf(['halt', 'continue']).optional(),
  });

/** forward-internal's url: an internal endpoint's URL, of the protocol of the endpoint. */
function forwardTargetProblem(text: string, scheme: string): string | undefined {
  let target: ReturnType<typeof parseEndpointUrl>;
  try {
    target = parseEndpointUrl(text);
  } catch (err) {
    return (err as Error).message.replace(/^url: /, '');
  }
  if (!isInternalHost(target.host))
    return `${target.url} is not an internal endpoint (.internal host)`;
  const family = (s: string) => (s === 'https' ? 'http' : s);
  if (family(target.scheme) !== family(scheme)) {
    return `${target.url} is not of the endpoint's protocol (${scheme})`;
  }
  return undefined;
}

const tlsVersion = z.union([z.string(), z.number()]).superRefine((v, ctx) => {
  if (!['1.2', '1.3'].includes(String(v))) issue(ctx, CODE.notMember, 'must be 1.2 or 1.3');
});
const pem = z.string().superRefine((v, ctx) => {
  if (!templated(v) && !v.includes('-----BEGIN ')) issue(ctx, CODE.configValue, 'must be PEM');
});
const paired =
  (a: string, b: string) => (c: Record<string, unknown>, ctx: z.core.$RefinementCtx) => {
    if (c[a] !== undefined && c[b] === undefined)
      issue(ctx, CODE.pairedField, `${b} is required when ${a} is specified`, [b]);
    if (c[b] !== undefined && c[a] === undefined)
      issue(ctx, CODE.pairedField, `${a} is required when ${b} is specified`, [a]);
  };
const oneName =
  (a: string, b: string) => (c: Record<string, unknown>, ctx: z.core.$RefinementCtx) => {
    if (c[a] !== undefined && c[b] !== undefined)
      issue(ctx, CODE.configValue, `${b} and ${a} are one field: send one`, [b]);
  };

const terminateTls = strictObj({
  min_version: tlsVersion.optional(),
  max_version: tlsVersion.optional(),
  server_certificate: pem.optional(),
  server_private_key: pem.optional(),
  mutual_tls_certificate_authorities: z
    .array(
      z.string().superRefine((v, ctx) => {
        if (!templated(v) && !v.includes('-----BEGIN ') && !/^ca_[A-Za-z0-9]+$/.test(v))
          issue(ctx, CODE.configValue, 'must be PEM or a ca_ ID');
      }),
    )
    .optional(),
  mutual_tls_verification_strategy: enumOf([
    'require-and-verify',
    'require-any',
    'request',
  ]).optional(),
}).superRefine((c, ctx) => {
  paired('server_certificate', 'server_private_key')(c, ctx);
  if (
    c.min_version !== undefined &&
    c.max_version !== undefined &&
    Number(c.min_version) > Number(c.max_version)
  ) {
    issue(ctx, CODE.configValue, 'must not be above max_version', ['min_version']);
  }
});

const WEBHOOK = new Set<string>([...WEBHOOK_PROVIDERS, 'jira', 'linear', 'orb']);
const verifyWebhook = strictObj({
  provider: z.string().superRefine((p, ctx) => {
    if (!WEBHOOK.has(p.toLowerCase())) issue(ctx, CODE.notMember, 'unknown webhook provider');
  }),
  // Required for every provider, sns included (its guide passes the topic owner).
  secret: nonEmpty,
  enforce: bool.optional(),
});

const OAUTH_PROVIDERS = [
  'amazon',
  'facebook',
  'github',
  'gitlab',
  'google',
  'linkedin',
  'microsoft',
  'twitch',
] as const;
const OWN_CREDENTIALS_ONLY = new Set(['amazon', 'facebook']);
const sessionFields = {
  client_id: nonEmpty.optional(),
  client_secret: nonEmpty.optional(),
  scopes: z.array(nonEmpty).optional(),
  authz_url_params: z.record(z.string(), str).optional(),
  allow_cors_preflight: bool.optional(),
  max_session_duration: duration().optional(),
  userinfo_refresh_interval: duration().optional(),
  auth_id: nonEmpty.optional(),
  auth_cookie_domain: nonEmpty.optional(),
};
const oauth = strictObj({
  provider: enumOf(OAUTH_PROVIDERS),
  ...sessionFields,
  idle_session_timeout: duration().optional(),
}).superRefine((c, ctx) => {
  paired('client_id', 'client_secret')(c, ctx);
  const own = c.client_id !== undefined;
  if (!own && OWN_CREDENTIALS_ONLY.has(c.provider)) {
    issue(ctx, CODE.missingElement, `provider ${c.provider} needs client_id and client_secret`, [
      'client_id',
    ]);
  }
  if (!own && c.scopes !== undefined) {
    issue(ctx, CODE.configValue, 'scopes need own credentials (client_id, client_secret)', [
      'scopes',
    ]);
  }
});
const openidConnect = strictObj({
  issuer_url: z.url(),
  ...sessionFields,
  idle_session_duration: duration().optional(),
  // The operator's name for the same field.
  idle_session_timeout: duration().optional(),
}).superRefine((c, ctx) => {
  paired('client_id', 'client_secret')(c, ctx);
  oneName('idle_session_duration', 'idle_session_timeout')(c, ctx);
});

const statusCode = ranged(100, 599);
const onError = enumOf(['halt', 'continue']).optional();

const findReplace = (sse: boolean) =>
  strictObj({
    replacements: z
      .array(
        strictObj({
          ...(sse
            ? {
                field: z
                  .string()
                  .superRefine((f, ctx) => {
                    if (!templated(f) && f !== 'data' && f !== 'retry')
                      issue(ctx, CODE.notMember, 'must be data or retry');
                  })
                  .optional(),
              }
            : {}),
          from: regex,
          to: str.optional(),
        }),
      )
      .min(1),
  });

const owasp = strictObj({
  on_error: onError,
  process_body: bool.optional(),
  exclude_rule_ids: z.array(ranged(900_000, 999_999)).optional(),
});

/** The first literal `:` outside `${...}` in a basic-auth credential (-1 when none). */
function separator(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (depth === 0 && text.startsWith('${', i)) {
      depth = 1;
      i++;
    } else if (depth > 0 && text[i] === '{') depth++;
    else if (depth > 0 && text[i] === '}') depth--;
    else if (depth === 0 && text[i] === ':') return i;
  }
  return -1;
}
/** A whole `${...}`: one interpolation, nothing around it. */
function wholeTemplate(text: string): boolean {
  if (!text.startsWith('${') || !text.endsWith('}')) return false;
  let depth = 0;
  for (let i = 2; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}') {
      if (depth === 0) return i === text.length - 1;
      depth--;
    }
  }
  return false;
}
// biome-ignore lint/suspicious/noControlCharactersInRegex: RFC 7617 forbids control characters
const CONTROL = /[\u0000-\u001f\u007f]/;
const credential = z.string().superRefine((text, ctx) => {
  const at = separator(text);
  if (at < 0) {
    if (!wholeTemplate(text))
      issue(ctx, CODE.basicAuthUser, 'must be user:password (a literal ":" between them)');
    return;
  }
  const user = text.slice(0, at);
  const password = text.slice(at + 1);
  if (user === '' || CONTROL.test(user))
    issue(ctx, CODE.basicAuthUser, 'the username is not valid (RFC 7617 section 2.1)');
  else if (CONTROL.test(password))
    issue(ctx, CODE.basicAuthPassword, 'the password is not valid (RFC 7617 section 2.1)');
  else if (!templated(password) && (password.length < 8 || password.length > 128))
    issue(ctx, CODE.basicAuthPassword, 'the password must be 8 to 128 characters');
});

const objOrList = (shape: z.core.$ZodLooseShape) =>
  z.union([strictObj(shape), z.array(strictObj(shape)).min(1)]);
const jwtValidation = strictObj({
  issuer: strictObj({ allow_list: z.array(strictObj({ value: nonEmpty })).min(1) }),
  audience: strictObj({ allow_list: z.array(strictObj({ value: nonEmpty })).min(1) }).optional(),
  http: strictObj({
    tokens: z
      .array(
        strictObj({
          type: enumOf(['id_token', 'access_token', 'at+jwt', 'it+jwt', 'plain', 'jwt']),
          method: enumOf(['header', 'body']),
          name: nonEmpty,
          prefix: str.optional(),
        }),
      )
      .min(1),
  }),
  jws: strictObj({
    allowed_algorithms: z
      .array(
        nonEmpty.superRefine((a, ctx) => {
          if (a.toLowerCase() === 'none') issue(ctx, CODE.configValue, 'none is not allowed');
        }),
      )
      .min(1),
    keys: objOrList({
      sources: objOrList({ additional_jkus: z.array(urlString).min(1) }),
      identification: objOrList({ token_claims: z.array(z.literal('kid')) }).optional(),
    }),
  }),
});

const httpRequest = strictObj({
  url: urlString,
  method: enumOf(['GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS']).optional(),
  query_params: z
    .array(
      strictObj({
        key: z.string().superRefine((k, ctx) => {
          if (k.length > 128) issue(ctx, CODE.queryKeyTooLong, 'key length exceeds 128');
        }),
        value: z.string().superRefine((v, ctx) => {
          if (v.length > 8192) issue(ctx, CODE.queryValueTooLong, 'value length exceeds 8192');
        }),
      }),
    )
    .superRefine((l, ctx) => {
      if (l.length > 32) issue(ctx, CODE.tooManyQueryParams, 'at most 32 query key/value pairs');
    })
    .optional(),
  headers: headerMap(0, { noUserAgent: false }).optional(),
  body: str.optional(),
  max_redirects: ranged(0, 100).optional(),
  timeout: duration(1_000, 30_000).optional(),
  retry_condition: str.optional(),
  on_error: onError,
});

const rateLimit = strictObj({
  name: z
    .string()
    .min(1, coded(CODE.empty, 'cannot be empty'))
    .max(1023, coded(CODE.tooLong, 'must be shorter than 1024 characters')),
  enforce: bool.optional(),
  algorithm: enumOf(['sliding_window']),
  capacity: ranged(1, 2_000_000_000),
  rate: duration(60_000, 86_400_000, 10_000),
  bucket_key: z
    .array(nonEmpty)
    .min(1, coded(CODE.empty, 'cannot be empty'))
    .max(10, coded(CODE.tooManyEntries, 'too many entries (limit 10)')),
});

const redirect = strictObj({
  from: regex.optional(),
  to: str,
  status_code: z
    .number()
    .superRefine((n, ctx) => {
      if (![301, 302, 303, 307, 308].includes(n))
        issue(ctx, CODE.notMember, 'must be one of 301, 302, 303, 307, 308');
    })
    .optional(),
  headers: headerMap(0, { noUserAgent: false }).optional(),
});

const aiGateway = strictObj({
  on_error: onError,
  per_request_timeout: duration().optional(),
  total_timeout: duration().optional(),
  providers: z
    .array(
      strictObj({
        id: nonEmpty,
        api_keys: z.array(strictObj({ value: nonEmpty })).optional(),
      }),
    )
    .optional(),
});

/** Every phase key a document may use, legacy names included. */
export const PHASE_NAMES: readonly string[] = [...PHASES, 'inbound', 'outbound'];

/** The spec of a known action type (own keys only: `constructor` is no action). */
export function actionSpec(type: string): ActionSpec | undefined {
  return Object.hasOwn(ACTIONS, type) ? ACTIONS[type] : undefined;
}

/** The phase a (possibly legacy) phase key names, if any. */
export function phaseOf(key: string): Phase | undefined {
  if ((PHASES as readonly string[]).includes(key)) return key as Phase;
  return Object.hasOwn(LEGACY_PHASES, key) ? LEGACY_PHASES[key] : undefined;
}

const ACTIONS: Readonly<Record<string, ActionSpec>> = {
  'add-headers': {
    phases: HTTP,
    terminating: never,
    config: () => strictObj({ headers: headerMap(1, { noUserAgent: true }) }),
    templates: { headers: ['*'] },
  },
  'ai-gateway': {
    phases: REQUEST,
    terminating: unlessContinue,
    config: () => aiGateway,
    templates: { providers: ['*.api_keys.*.value'] },
  },
  'basic-auth': {
    phases: REQUEST,
    terminating: never,
    config: () =>
      strictObj({
        credentials: z
          .array(credential)
          .min(1, coded(CODE.empty, 'cannot be empty'))
          .max(10, coded(CODE.tooManyEntries, 'too many entries (limit 10)')),
        realm: z
          .string()
          .max(128, coded(CODE.tooLong, 'length exceeded 128'))
          .regex(/^[\x20-\x7e]*$/, coded(CODE.configValue, 'ASCII only'))
          .optional(),
        enforce: bool.optional(),
      }),
    templates: { credentials: ['*'] },
  },
  'circuit-breaker': {
    phases: REQUEST,
    terminating: never,
    config: () =>
      strictObj({
        error_threshold: z
          .number()
          .superRefine((n, ctx) => {
            if (n < 0 || n > 1) issue(ctx, CODE.outOfRange, 'must be between 0 and 1');
          })
          .optional(),
        volume_threshold: ranged(1, ENDPOINT_LIMITS.volumeThresholdMax).optional(),
        window_duration: duration(
          ENDPOINT_LIMITS.breakerWindowMinMs,
          ENDPOINT_LIMITS.breakerWindowMaxMs,
        ).optional(),
        tripped_duration: duration(
          ENDPOINT_LIMITS.breakerWindowMinMs,
          ENDPOINT_LIMITS.breakerWindowMaxMs,
        ).optional(),
        // Accepted and ignored: the service always uses 10 buckets.
        num_buckets: ranged(1, LIMITS.numBucketsMax).optional(),
        enforce: bool.optional(),
      }),
  },
  'close-connection': {
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: always,
    config: () => strictObj({}),
  },
  'compress-response': {
    phases: ['on_http_response'],
    terminating: never,
    config: () =>
      strictObj({
        algorithms: z
          .array(
            z.string().superRefine((a, ctx) => {
              if (!['gzip', 'deflate', 'br', 'compress'].includes(a))
                issue(ctx, CODE.compressAlgorithm, `invalid algorithm ${a}`);
            }),
          )
          .min(1, coded(CODE.empty, 'cannot be empty'))
          .superRefine((l, ctx) => {
            if (new Set(l).size !== l.length)
              issue(ctx, CODE.duplicates, 'contains duplicate values');
          })
          .optional(),
      }),
  },
  'custom-response': {
    phases: HTTP,
    terminating: always,
    config: () =>
      strictObj({
        status_code: statusCode.optional(),
        body: str.optional(),
        // What the service's Kubernetes operator sends for body.
        content: str.optional(),
        headers: headerMap(0, { noUserAgent: false }).optional(),
      }).superRefine(oneName('body', 'content')),
    templates: { body: [''], content: [''], headers: ['*'] },
  },
  deny: {
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: always,
    config: (phase) =>
      phase === 'on_tcp_connect'
        ? strictObj({})
        : strictObj({ status_code: statusCode.optional() }),
  },
  'forward-internal': {
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: unlessContinue,
    config: (_phase, ctx) => forwardInternal(ctx),
    templates: { url: [''] },
  },
  'http-request': {
    phases: HTTP,
    terminating: never,
    config: () => httpRequest,
    templates: {
      url: [''],
      query_params: ['*.key', '*.value'],
      headers: ['*'],
      body: [''],
    },
    bareCel: ['retry_condition'],
  },
  'jwt-validation': {
    phases: REQUEST,
    terminating: never,
    config: () => jwtValidation,
    templates: {
      issuer: ['allow_list.*.value'],
      http: ['tokens.*.name', 'tokens.*.prefix'],
      jws: [
        'keys.sources.additional_jkus.*',
        'keys.sources.*.additional_jkus.*',
        'keys.*.sources.additional_jkus.*',
        'keys.*.sources.*.additional_jkus.*',
      ],
    },
  },
  log: {
    phases: ALL,
    terminating: never,
    config: () => strictObj({ metadata: z.record(z.string(), z.unknown()) }),
    templates: { metadata: ['**'] },
  },
  oauth: {
    phases: REQUEST,
    terminating: never,
    config: () => oauth,
    templates: { client_id: [''], client_secret: [''] },
  },
  'openid-connect': {
    phases: REQUEST,
    terminating: never,
    config: () => openidConnect,
    templates: { client_id: [''], client_secret: [''] },
  },
  'owasp-crs-request': { phases: REQUEST, terminating: never, config: () => owasp },
  'owasp-crs-response': { phases: ['on_http_response'], terminating: never, config: () => owasp },
  'rate-limit': {
    phases: REQUEST,
    terminating: never,
    config: () => rateLimit,
    bareCel: ['bucket_key'],
  },
  // Not terminating for 2207 and 2235: it does nothing when the URL is unchanged.
  redirect: {
    phases: REQUEST,
    terminating: never,
    config: () => redirect,
    templates: { from: [''], to: [''], headers: ['*'] },
  },
  'remove-headers': {
    phases: HTTP,
    terminating: never,
    config: () =>
      strictObj({
        headers: z
          .array(
            headerName.superRefine((n, ctx) => {
              if (n.toLowerCase() === 'user-agent')
                issue(ctx, CODE.headerName, 'user-agent may not be removed');
            }),
          )
          .superRefine((l, ctx) => {
            if (l.length === 0) issue(ctx, CODE.empty, 'cannot be empty');
            if (l.length > ENDPOINT_LIMITS.headersPerAction)
              issue(ctx, CODE.tooManyHeaders, 'at most 10 headers');
          }),
      }),
  },
  'request-body-find-replace': {
    phases: REQUEST,
    terminating: never,
    config: () => findReplace(false),
    templates: { replacements: ['*.from', '*.to'] },
  },
  'response-body-find-replace': {
    phases: ['on_http_response'],
    terminating: never,
    config: () => findReplace(false),
    templates: { replacements: ['*.from', '*.to'] },
  },
  'restrict-ips': {
    phases: ALL,
    terminating: never,
    config: (_phase, policyCtx) =>
      strictObj({
        enforce: bool.optional(),
        allow: cidrList.optional(),
        deny: cidrList.optional(),
        ip_policies: z
          .array(
            z.string().superRefine((v, ctx) => {
              if (!/^ipp_[A-Za-z0-9]+$/.test(v))
                issue(ctx, CODE.ipPolicyRef, 'Invalid IP Policy Reference(s)');
              else if (policyCtx.ipPolicyExists?.(v) === false)
                issue(ctx, CODE.ipPolicyRef, `Invalid IP Policy Reference(s): ${v} does not exist`);
            }),
          )
          .optional(),
      }).superRefine((c, ctx) => {
        if ((c.allow?.length ?? 0) + (c.deny?.length ?? 0) + (c.ip_policies?.length ?? 0) === 0)
          issue(ctx, CODE.missingElement, 'needs at least one of allow, deny, ip_policies');
      }),
    templates: { allow: ['*'], deny: ['*'] },
  },
  saml: {
    phases: REQUEST,
    terminating: never,
    config: () => strictObj({ idp_metadata: nonEmpty }),
  },
  'set-vars': {
    phases: ALL,
    terminating: never,
    config: () =>
      strictObj({ vars: z.unknown() }).superRefine((c, ctx) => {
        const format = 'vars must be a list of maps of exactly size 1';
        if (c.vars === undefined) issue(ctx, CODE.missingElement, 'is required', ['vars']);
        else if (!Array.isArray(c.vars)) issue(ctx, CODE.varsFormat, format, ['vars']);
        else {
          c.vars.forEach((m: unknown, i) => {
            const map = typeof m === 'object' && m !== null && !Array.isArray(m);
            if (!map || Object.keys(m).length !== 1)
              issue(ctx, CODE.varsFormat, format, ['vars', i]);
          });
        }
      }),
    templates: { vars: ['**'] },
  },
  'sse-find-replace': {
    phases: ['on_event_stream_message'],
    terminating: never,
    config: () => findReplace(true),
    templates: { replacements: ['*.field', '*.from', '*.to'] },
  },
  'terminate-tls': {
    phases: ['on_tcp_connect'],
    terminating: never,
    config: () => terminateTls,
    templates: {
      server_private_key: [''],
      server_certificate: [''],
      mutual_tls_certificate_authorities: ['*'],
    },
  },
  'url-rewrite': {
    phases: REQUEST,
    terminating: never,
    config: () => strictObj({ from: regex.optional(), to: str }),
    templates: { from: [''], to: [''] },
  },
  'verify-webhook': {
    phases: REQUEST,
    terminating: never,
    config: () => verifyWebhook,
    templates: { secret: [''] },
  },
};

/** Whether the string at `at` (below the config field `field`) of `spec` may interpolate. */
export function templateAllowed(spec: ActionSpec, field: string, at: readonly string[]): boolean {
  const patterns = spec.templates?.[field] ?? [];
  return patterns.some((p) => {
    const parts = p === '' ? [] : p.split('.');
    if (parts[0] === '**') return true;
    return parts.length === at.length && parts.every((x, i) => x === '*' || x === at[i]);
  });
}

export const KNOWN_ACTIONS: readonly string[] = Object.keys(ACTIONS);
