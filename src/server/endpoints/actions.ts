/**
 * The traffic policy's actions as the local server checks them (policy-actions.md, sections 0
 * and 2). Two parts, by the oracle's policy (docs/decisions/0023): the pure facts (the types,
 * the phases each may run in, whether it ends the phase, the phase names, enumerations and
 * bounds) are imported from src/hosted/policy-actions.ts, which the specification's own
 * transcription in the tests checks; how a config is judged is the server's own statement
 * (the oracle the client's table is tested against, over the shared case table): each type's
 * config as a strict zod schema (unknown config fields refused, so a typo is an error rather
 * than a silently ignored field), its rules across fields, where its strings may interpolate
 * `${...}` and which are bare CEL. Issues carry the service's 22xx code in `params.code` where
 * one applies; `./policy.ts` maps the rest by kind.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import { parseDuration } from '../../duration.js';
import { checkHeaderName, checkHeaderValue, LIMITS, re2Problem } from '../../hosted/edge-api.js';
import {
  ACTION_TYPES,
  actionSpec as actionFacts,
  POLICY_LIMITS as BOUND,
  HTTP_REQUEST_METHODS,
  JWT_TOKEN_TYPES,
  LEGACY_PHASES,
  OAUTH_PROVIDERS,
  OWN_CREDENTIALS_ONLY,
  PHASES,
  type Phase,
  REDIRECT_STATUS_CODES,
  WEBHOOK_POLICY_PROVIDERS,
} from '../../hosted/policy-actions.js';
import { ENDPOINT_ERROR_CODE as CODE } from './codes.js';
import { isInternalHost, parseEndpointUrl } from './url.js';

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

/** How the server judges one action's config: its own statement, the oracle's part. */
interface ActionRules {
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

/** An action as the server checks it: the table's facts with the server's own rules. */
interface ActionSpec extends ActionRules {
  readonly phases: readonly Phase[];
  /** Whether an action with this config ends its phase. */
  readonly terminating: (config: Record<string, unknown>) => boolean;
}

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
    if (names.length > BOUND.headersPerAction) {
      issue(
        ctx,
        CODE.tooManyHeaders,
        `at most ${BOUND.headersPerAction} headers, got ${names.length}`,
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

const WEBHOOK: ReadonlySet<string> = new Set(WEBHOOK_POLICY_PROVIDERS);
const verifyWebhook = strictObj({
  provider: z.string().superRefine((p, ctx) => {
    if (!WEBHOOK.has(p.toLowerCase())) issue(ctx, CODE.notMember, 'unknown webhook provider');
  }),
  // Required for every provider, sns included (its guide passes the topic owner).
  secret: nonEmpty,
  enforce: bool.optional(),
});

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
  exclude_rule_ids: z.array(ranged(BOUND.owaspRuleIdMin, BOUND.owaspRuleIdMax)).optional(),
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
  else if (
    !templated(password) &&
    (password.length < BOUND.passwordMin || password.length > BOUND.passwordMax)
  )
    issue(
      ctx,
      CODE.basicAuthPassword,
      `the password must be ${BOUND.passwordMin} to ${BOUND.passwordMax} characters`,
    );
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
          type: enumOf(JWT_TOKEN_TYPES),
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
  method: enumOf(HTTP_REQUEST_METHODS).optional(),
  query_params: z
    .array(
      strictObj({
        key: z.string().superRefine((k, ctx) => {
          if (k.length > BOUND.queryKeyMax)
            issue(ctx, CODE.queryKeyTooLong, `key length exceeds ${BOUND.queryKeyMax}`);
        }),
        value: z.string().superRefine((v, ctx) => {
          if (v.length > BOUND.queryValueMax)
            issue(ctx, CODE.queryValueTooLong, `value length exceeds ${BOUND.queryValueMax}`);
        }),
      }),
    )
    .superRefine((l, ctx) => {
      if (l.length > BOUND.queryParamsMax)
        issue(
          ctx,
          CODE.tooManyQueryParams,
          `at most ${BOUND.queryParamsMax} query key/value pairs`,
        );
    })
    .optional(),
  headers: headerMap(0, { noUserAgent: false }).optional(),
  body: str.optional(),
  max_redirects: ranged(0, BOUND.maxRedirectsMax).optional(),
  timeout: duration(BOUND.httpTimeoutMinMs, BOUND.httpTimeoutMaxMs).optional(),
  retry_condition: str.optional(),
  on_error: onError,
});

const rateLimit = strictObj({
  name: z
    .string()
    .min(1, coded(CODE.empty, 'cannot be empty'))
    .max(
      BOUND.rateLimitNameMax,
      coded(CODE.tooLong, `must be shorter than ${BOUND.rateLimitNameMax + 1} characters`),
    ),
  enforce: bool.optional(),
  algorithm: enumOf(['sliding_window']),
  capacity: ranged(1, BOUND.rateLimitCapacityMax),
  rate: duration(BOUND.rateLimitRateMinMs, BOUND.rateLimitRateMaxMs, BOUND.rateLimitRateStepMs),
  bucket_key: z
    .array(nonEmpty)
    .min(1, coded(CODE.empty, 'cannot be empty'))
    .max(
      BOUND.bucketKeysMax,
      coded(CODE.tooManyEntries, `too many entries (limit ${BOUND.bucketKeysMax})`),
    ),
});

const redirect = strictObj({
  from: regex.optional(),
  to: str,
  status_code: z
    .number()
    .superRefine((n, ctx) => {
      if (!(REDIRECT_STATUS_CODES as readonly number[]).includes(n))
        issue(ctx, CODE.notMember, `must be one of ${REDIRECT_STATUS_CODES.join(', ')}`);
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

/** The phase a (possibly legacy) phase key names, if any. */
export function phaseOf(key: string): Phase | undefined {
  if ((PHASES as readonly string[]).includes(key)) return key as Phase;
  return Object.hasOwn(LEGACY_PHASES, key)
    ? LEGACY_PHASES[key as keyof typeof LEGACY_PHASES]
    : undefined;
}

/** The server's own rules, per action type (every type of the table: a test holds the two). */
export const ACTION_RULES: Readonly<Record<string, ActionRules>> = {
  'add-headers': {
    config: () => strictObj({ headers: headerMap(1, { noUserAgent: true }) }),
    templates: { headers: ['*'] },
  },
  'ai-gateway': {
    config: () => aiGateway,
    templates: { providers: ['*.api_keys.*.value'] },
  },
  'basic-auth': {
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
    config: () =>
      strictObj({
        error_threshold: z
          .number()
          .superRefine((n, ctx) => {
            if (n < 0 || n > 1) issue(ctx, CODE.outOfRange, 'must be between 0 and 1');
          })
          .optional(),
        volume_threshold: ranged(1, BOUND.volumeThresholdMax).optional(),
        window_duration: duration(BOUND.breakerWindowMinMs, BOUND.breakerWindowMaxMs).optional(),
        tripped_duration: duration(BOUND.breakerWindowMinMs, BOUND.breakerWindowMaxMs).optional(),
        // Accepted and ignored: the service always uses 10 buckets.
        num_buckets: ranged(1, LIMITS.numBucketsMax).optional(),
        enforce: bool.optional(),
      }),
  },
  'close-connection': {
    config: () => strictObj({}),
  },
  'compress-response': {
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
    config: (phase) =>
      phase === 'on_tcp_connect'
        ? strictObj({})
        : strictObj({ status_code: statusCode.optional() }),
  },
  'forward-internal': {
    config: (_phase, ctx) => forwardInternal(ctx),
    templates: { url: [''] },
  },
  'http-request': {
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
    config: () => strictObj({ metadata: z.record(z.string(), z.unknown()) }),
    templates: { metadata: ['**'] },
  },
  oauth: {
    config: () => oauth,
    templates: { client_id: [''], client_secret: [''] },
  },
  'openid-connect': {
    config: () => openidConnect,
    templates: { client_id: [''], client_secret: [''] },
  },
  'owasp-crs-request': { config: () => owasp },
  'owasp-crs-response': { config: () => owasp },
  'rate-limit': {
    config: () => rateLimit,
    bareCel: ['bucket_key'],
  },
  redirect: {
    config: () => redirect,
    templates: { from: [''], to: [''], headers: ['*'] },
  },
  'remove-headers': {
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
            if (l.length > BOUND.headersPerAction)
              issue(ctx, CODE.tooManyHeaders, 'at most 10 headers');
          }),
      }),
  },
  'request-body-find-replace': {
    config: () => findReplace(false),
    templates: { replacements: ['*.from', '*.to'] },
  },
  'response-body-find-replace': {
    config: () => findReplace(false),
    templates: { replacements: ['*.from', '*.to'] },
  },
  'restrict-ips': {
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
    config: () => strictObj({ idp_metadata: nonEmpty }),
  },
  'set-vars': {
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
    config: () => findReplace(true),
    templates: { replacements: ['*.field', '*.from', '*.to'] },
  },
  'terminate-tls': {
    config: () => terminateTls,
    templates: {
      server_private_key: [''],
      server_certificate: [''],
      mutual_tls_certificate_authorities: ['*'],
    },
  },
  'url-rewrite': {
    config: () => strictObj({ from: regex.optional(), to: str }),
    templates: { from: [''], to: [''] },
  },
  'verify-webhook': {
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

/** Each action type of the table with the server's rules for it. */
const ACTIONS: ReadonlyMap<string, ActionSpec> = new Map(
  ACTION_TYPES.flatMap((type) => {
    const facts = actionFacts(type);
    const rules = Object.hasOwn(ACTION_RULES, type) ? ACTION_RULES[type] : undefined;
    if (facts === undefined || rules === undefined) return [];
    return [[type, { phases: facts.phases, terminating: facts.terminating, ...rules }]];
  }),
);

/** The spec of a known action type (`constructor` is no action). */
export function actionSpec(type: string): ActionSpec | undefined {
  return ACTIONS.get(type);
}
