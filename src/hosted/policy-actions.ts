/**
 * The traffic policy's facts (a cloud endpoint's API facts, beside the edges' in this folder):
 * its phases, its bounds and, in ONE table with an entry per action type (the 28 of
 * policy-actions.md), where each action may run, whether it ends its phase, its config fields
 * (value schema with bounds, default, required, secret, where `${...}` interpolation is allowed,
 * one-line description) and the rules that tie its fields together. The table is plain exported
 * data (plus zod schemas and two small predicates), so whatever reasons about policies (the
 * validator, the docs, an evaluator, the migration) reads the same facts. Derived from it
 * elsewhere: the zod schema of each action's config (src/manifest/policy/schema.ts, hence the
 * manifest schema, the JSON Schema and the field reference), the secret paths the masking knows
 * (src/manifest/policy/secrets.ts) and the policy rules (src/manifest/policy/rules.ts). The
 * local server imports the names, phases and bounds from here and states each action's config
 * rules on its own (it is the oracle the table is tested against): docs/decisions/0023.
 */
import { z } from 'zod';
import { parseDuration } from '../duration.js';
import { interpolations } from './cel.js';
import {
  checkHeaderName,
  checkHeaderValue,
  LIMITS,
  re2Problem,
  WEBHOOK_PROVIDERS,
} from './edge-api.js';
import { refable } from './modules/blocks.js';

export const PHASES = [
  'on_tcp_connect',
  'on_http_request',
  'on_http_response',
  'on_event_stream_message',
] as const;
export type Phase = (typeof PHASES)[number];
/** Older names of two phases, still accepted by the service. */
export const LEGACY_PHASES = { inbound: 'on_http_request', outbound: 'on_http_response' } as const;
export const PHASE_KEYS = [
  ...PHASES,
  ...(Object.keys(LEGACY_PHASES) as ('inbound' | 'outbound')[]),
];
export type PhaseKey = (typeof PHASE_KEYS)[number];

/** The phase a (possibly legacy) phase key names. */
export function phaseOf(key: PhaseKey): Phase {
  return key === 'inbound' || key === 'outbound' ? LEGACY_PHASES[key] : key;
}

export const POLICY_LIMITS = {
  headersPerAction: 10,
  volumeThresholdMax: 2_000_000_000,
  breakerWindowMinMs: 1_000,
  breakerWindowMaxMs: 120_000,
  /** The buckets a circuit breaker's window is divided into: fixed (`num_buckets` is ignored). */
  breakerBuckets: 10,
  rateLimitNameMax: 1023,
  rateLimitCapacityMax: 2_000_000_000,
  rateLimitRateMinMs: 60_000,
  rateLimitRateMaxMs: 86_400_000,
  rateLimitRateStepMs: 10_000,
  bucketKeysMax: 10,
  credentialsMax: 10,
  passwordMin: 8,
  passwordMax: 128,
  realmMax: 128,
  queryParamsMax: 32,
  queryKeyMax: 128,
  queryValueMax: 8192,
  maxRedirectsMax: 100,
  httpTimeoutMinMs: 1_000,
  httpTimeoutMaxMs: 30_000,
  owaspRuleIdMin: 900_000,
  owaspRuleIdMax: 999_999,
} as const;

type Config = Readonly<Record<string, unknown>>;

export interface FieldSpec {
  /** The value's schema (bounds included); string places accept `{ env }` / `{ file }`. */
  readonly schema: z.ZodType;
  readonly description: string;
  readonly required?: boolean;
  /** The service's default when the field is left out (documentation only: never filled in). */
  readonly default?: unknown;
  /** A secret whatever it is written as (masked in every output). */
  readonly secret?: boolean;
  /**
   * A header name -> value map: the value of a credential header (`isCredentialHeader`) is a
   * secret whatever it is written as, by the rule the edges' headers modules follow.
   */
  readonly headerMap?: boolean;
  /**
   * Where inside the field a string may interpolate CEL with `${...}`, as dotted paths relative
   * to the field: `''` the field's own string, `*` any one key or index, `**` anything below.
   * A `${` anywhere else is refused (the service takes it as no template).
   */
  readonly interpolate?: readonly string[];
  /** A bare CEL expression (or, for a list, each entry is one): parsed, never interpolated. */
  readonly cel?: boolean;
  /** Another name of the field `aliasOf`, normalised to it (never both in one config). */
  readonly aliasOf?: string;
}

export interface ActionSpec {
  readonly description: string;
  readonly phases: readonly Phase[];
  /**
   * Whether an action with this config ends its phase, for the unreachable-action and
   * terminating-policy rules: `always`, `never`, or `unless on_error: continue`.
   */
  readonly terminates: 'always' | 'never' | 'unless on_error: continue';
  /** Whether an action with this config ends its phase (derived from `terminates`). */
  readonly terminating: (config: Config) => boolean;
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Phases in which the action takes no config at all. */
  readonly noConfigIn?: readonly Phase[];
  /** Rules across fields (the config's own values already passed their schemas). */
  readonly check?: (config: Config, ctx: z.core.$RefinementCtx) => void;
}

// ---- value kinds ------------------------------------------------------------------------------

/** Whether a string interpolates CEL: its value is known only at run time. */
export function isTemplated(text: string): boolean {
  return text.includes('${');
}

/**
 * A string checked by `problem` unless it interpolates `${...}` (a template is checked as CEL by
 * `./rules.ts`, where the table allows one, and its value is known only at run time).
 */
const checked = (problem: (v: string) => string | undefined) =>
  refable(
    z.string().superRefine((v, ctx) => {
      if (isTemplated(v)) return;
      const why = problem(v);
      if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
    }),
  );

/**
 * A list item that names another manifest's resource, `{ ref: NAME }` (a certificate
 * authority's manifest name), besides what the service takes there: the plan sends that
 * resource's ID in its place (the reference sites are `POLICY_REFERENCE_SITES`, src/kinds/).
 */
const orReference = (item: z.ZodType) =>
  z.union([
    item,
    z.strictObject({
      ref: z.string().min(1, { error: "must be a manifest's name" }).meta({
        description: "The manifest name of the resource: its ID is sent in this item's place.",
      }),
    }),
  ]);

const str = () => refable(z.string());
const nonEmpty = () => refable(z.string().min(1, { error: 'must not be empty' }));
const bool = () => z.boolean();
const list = (item: z.ZodType) => z.array(item);
const int = (min: number, max: number) =>
  z
    .int({ error: 'must be a whole number' })
    .min(min, `must be ${min}..${max}`)
    .max(max, `must be ${min}..${max}`);

/** Durations are strings (`30s`, `15m`, `1h`), within `[minMs, maxMs]`, a multiple of `stepMs`. */
const duration = (minMs = 1, maxMs = Number.POSITIVE_INFINITY, stepMs = 1) =>
  refable(
    z.string().superRefine((text, ctx) => {
      let ms: number;
      try {
        ms = parseDuration(text, 'duration');
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(text)} is not a duration (e.g. 30s, 15m, 1h)`,
        });
        return;
      }
      if (ms < minMs || ms > maxMs) {
        ctx.addIssue({
          code: 'custom',
          message: `must be ${minMs / 1000}s..${maxMs / 1000}s, got ${text}`,
        });
      } else if (ms % stepMs !== 0) {
        ctx.addIssue({ code: 'custom', message: `must be a multiple of ${stepMs / 1000}s` });
      }
    }),
  );

const CIDR = z.union([z.cidrv4(), z.cidrv6()]);
const cidr = () =>
  checked((v) => (CIDR.safeParse(v).success ? undefined : 'must be a CIDR (e.g. 10.0.0.0/8)'));

const url = () =>
  checked((v) => (z.url().safeParse(v).success ? undefined : 'must be a URL (https://...)'));

const regex = () =>
  checked((v) => {
    const why = re2Problem(v);
    return why === undefined ? undefined : `not an RE2 regular expression: ${why}`;
  });

const headerName = () =>
  refable(
    z.string().superRefine((v, ctx) => {
      const violation = checkHeaderName(v);
      if (violation !== undefined) ctx.addIssue({ code: 'custom', message: violation.message });
    }),
  );

const headerValue = () =>
  refable(
    z.string().superRefine((v, ctx) => {
      const violation = checkHeaderValue(v);
      if (violation !== undefined) ctx.addIssue({ code: 'custom', message: violation.message });
    }),
  );

/**
 * Header name -> value, `min`..10 of them, names unique ignoring case. `add-headers` may not add
 * `user-agent` (the request's own); a custom response's headers have no such rule.
 */
const headerMap = (min: number, opts: { noUserAgent: boolean }) =>
  z.record(z.string(), headerValue()).superRefine((m, ctx) => {
    const names = Object.keys(m);
    const max = POLICY_LIMITS.headersPerAction;
    if (names.length < min || names.length > max) {
      ctx.addIssue({
        code: 'custom',
        message: `needs ${min}..${max} headers, got ${names.length}`,
      });
    }
    const seen = new Set<string>();
    for (const name of names) {
      const violation = checkHeaderName(name);
      if (violation !== undefined)
        ctx.addIssue({ code: 'custom', path: [name], message: violation.message });
      const lower = name.toLowerCase();
      if (opts.noUserAgent && lower === 'user-agent')
        ctx.addIssue({ code: 'custom', path: [name], message: 'user-agent may not be added' });
      if (seen.has(lower)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'duplicate header name (names are case-insensitive)',
        });
      }
      seen.add(lower);
    }
  });

const statusCode = () => int(100, 599);

const tlsVersion = () =>
  z.union([z.enum(['1.2', '1.3']), z.literal(1.2), z.literal(1.3)], {
    error: 'must be "1.2" or "1.3"',
  });

const pem = () => checked((v) => (v.includes('-----BEGIN ') ? undefined : 'must be PEM'));

/** Every value JSON can carry (set-vars values and log metadata are free). */
const jsonValue = () => z.unknown();

/** A list of distinct entries, at least one. */
const uniqueList = (item: z.ZodType) =>
  list(item)
    .min(1, { error: 'must not be empty' })
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      items.forEach((v, i) => {
        const key = JSON.stringify(v);
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i], message: 'a duplicate' });
        seen.add(key);
      });
    });

/** An object with these fields, or a list of them (policy-actions.md section 0, decision 13). */
const oneOrList = (shape: z.core.$ZodLooseShape) =>
  z.union([z.strictObject(shape), list(z.strictObject(shape)).min(1)], {
    error: 'must be a mapping (or a list of mappings)',
  });

/**
 * A basic-auth credential `user:password`: the first literal `:` outside `${...}` separates the
 * two; a template that is not the whole credential needs that literal separator. A literal user
 * may hold no control character (RFC 7617); a literal password is 8..128 characters.
 */
export function credentialProblem(
  text: string,
): { readonly part: 'user' | 'password' | 'credential'; readonly message: string } | undefined {
  const colon = literalColon(text);
  if (colon < 0) {
    const found = interpolations(text);
    const only = 'exprs' in found && found.exprs.length === 1 ? found.exprs[0]?.expr : undefined;
    if (only !== undefined && text === `\${${only}}`) return undefined;
    return {
      part: 'credential',
      message: isTemplated(text)
        ? 'a ${...} that is not the whole credential needs a literal ":" between user and password'
        : 'must be user:password',
    };
  }
  const user = text.slice(0, colon);
  const password = text.slice(colon + 1);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: RFC 7617 forbids control characters
  const control = /[\u0000-\u001f\u007f]/;
  if (user.length === 0 || control.test(user))
    return { part: 'user', message: 'the user must be non-empty, without control characters' };
  if (control.test(password))
    return { part: 'password', message: 'the password may not hold control characters' };
  const { passwordMin: min, passwordMax: max } = POLICY_LIMITS;
  if (!isTemplated(password) && (password.length < min || password.length > max))
    return { part: 'password', message: `the password must be ${min}..${max} characters` };
  return undefined;
}

/** The offset of the first `:` outside `${...}` (-1 when none). */
function literalColon(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.startsWith('${', i) && depth === 0) {
      depth = 1;
      i++;
    } else if (depth > 0 && text[i] === '{') depth++;
    else if (depth > 0 && text[i] === '}') depth--;
    else if (depth === 0 && text[i] === ':') return i;
  }
  return -1;
}

// ---- the table --------------------------------------------------------------------------------

const ALL: readonly Phase[] = ['on_tcp_connect', 'on_http_request', 'on_http_response'];
const HTTP: readonly Phase[] = ['on_http_request', 'on_http_response'];

export const OAUTH_PROVIDERS = [
  'amazon',
  'facebook',
  'github',
  'gitlab',
  'google',
  'linkedin',
  'microsoft',
  'twitch',
] as const;
/** Providers for which the service has no managed application. */
export const OWN_CREDENTIALS_ONLY: ReadonlySet<string> = new Set(['amazon', 'facebook']);
export const WEBHOOK_POLICY_PROVIDERS: readonly string[] = [
  ...WEBHOOK_PROVIDERS,
  'jira',
  'linear',
  'orb',
];
const WEBHOOK_SET: ReadonlySet<string> = new Set(WEBHOOK_POLICY_PROVIDERS);
export const HTTP_REQUEST_METHODS = ['GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export const JWT_TOKEN_TYPES = [
  'id_token',
  'access_token',
  'at+jwt',
  'it+jwt',
  'plain',
  'jwt',
] as const;
export const REDIRECT_STATUS_CODES = [301, 302, 303, 307, 308] as const;

const sessionFields = (idle: 'idle_session_timeout' | 'idle_session_duration') => ({
  client_id: {
    schema: nonEmpty(),
    interpolate: [''],
    description: 'Your own application: its client ID.',
  },
  client_secret: {
    schema: nonEmpty(),
    secret: true,
    interpolate: [''],
    description: 'Your own application: its client secret (always sensitive).',
  },
  scopes: {
    schema: list(nonEmpty()),
    description: 'Scopes to request (only with your own client_id and client_secret).',
  },
  authz_url_params: {
    schema: z.record(z.string(), str()),
    description: "Extra parameters of the provider's authorization URL.",
  },
  allow_cors_preflight: {
    schema: bool(),
    default: false,
    description: 'Let CORS preflight (OPTIONS) requests through unauthenticated.',
  },
  [idle]: {
    schema: duration(),
    description: 'Sessions idle this long must log in again (a duration).',
  },
  max_session_duration: {
    schema: duration(),
    description: 'Sessions older than this must log in again (a duration).',
  },
  userinfo_refresh_interval: {
    schema: duration(),
    description: "How often the user's info is checked again (a duration).",
  },
  auth_id: { schema: nonEmpty(), description: 'Names the session cookie.' },
  auth_cookie_domain: {
    schema: nonEmpty(),
    description: 'The domain the session cookie is set for.',
  },
});

function credentialsTogether(c: Config, ctx: z.core.$RefinementCtx): void {
  if ((c.client_id === undefined) !== (c.client_secret === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [c.client_id === undefined ? 'client_secret' : 'client_id'],
      message: 'client_id and client_secret go together',
    });
  }
}

/** Two names for one field: at most one of them. */
function notBoth(a: string, b: string) {
  return (c: Config, ctx: z.core.$RefinementCtx): void => {
    if (c[a] !== undefined && c[b] !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [b],
        message: `${b} is another name of ${a}: write one`,
      });
  };
}

const onError = (dflt: 'halt' | 'continue', description: string): FieldSpec => ({
  schema: z.enum(['halt', 'continue']),
  default: dflt,
  description,
});

const findReplaceFields = (withField: boolean): Record<string, FieldSpec> => ({
  replacements: {
    schema: list(
      z.strictObject({
        ...(withField ? { field: refable(z.string()).optional() } : {}),
        from: regex(),
        to: str().optional(),
      }),
    ).min(1, { error: 'needs at least one replacement' }),
    required: true,
    interpolate: withField ? ['*.field', '*.from', '*.to'] : ['*.from', '*.to'],
    description: withField
      ? 'Replacements in order: field (data or retry, default data), from (RE2), to ($1... groups; empty deletes).'
      : 'Replacements in order: from (RE2; every match), to ($1... groups; empty deletes).',
  },
});

const owaspFields = (): Record<string, FieldSpec> => ({
  on_error: onError('halt', 'continue: when the body cannot be read, run the next actions.'),
  process_body: {
    schema: bool(),
    default: false,
    description: 'Also inspect the first 4 KB of the body.',
  },
  exclude_rule_ids: {
    schema: list(int(POLICY_LIMITS.owaspRuleIdMin, POLICY_LIMITS.owaspRuleIdMax)),
    description: 'CRS rule IDs (900000..999999) not to apply.',
  },
});

type ActionEntry = Omit<ActionSpec, 'terminating'>;

const ENTRIES: Readonly<Record<string, ActionEntry>> = {
  'add-headers': {
    description: 'Adds headers (names lower-cased; user-agent cannot be added).',
    phases: HTTP,
    terminates: 'never',
    fields: {
      headers: {
        schema: headerMap(1, { noUserAgent: true }),
        headerMap: true,
        required: true,
        interpolate: ['*'],
        description: 'Header name -> value (1..10); values may interpolate ${CEL}.',
      },
    },
  },
  'ai-gateway': {
    description:
      'Legacy: sends the request to AI model providers; ends the phase unless on_error is continue.',
    phases: ['on_http_request'],
    terminates: 'unless on_error: continue',
    fields: {
      on_error: onError('halt', 'continue: when every provider fails, run the next actions.'),
      per_request_timeout: {
        schema: duration(),
        default: '30s',
        description: 'Time allowed for one request to a provider.',
      },
      total_timeout: {
        schema: duration(),
        default: '5m',
        description: 'Time allowed for all attempts together.',
      },
      providers: {
        schema: list(
          z.strictObject({
            id: nonEmpty(),
            api_keys: list(z.strictObject({ value: nonEmpty() })).optional(),
          }),
        ),
        interpolate: ['*.api_keys.*.value'],
        // The providers' API keys are inside: the whole list is masked.
        secret: true,
        description:
          'Providers (id) and their API keys (value may interpolate ${CEL}; always sensitive).',
      },
    },
  },
  'basic-auth': {
    description: 'Requires HTTP basic authentication; failures are answered 401.',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      credentials: {
        schema: list(
          refable(
            z.string().superRefine((v, ctx) => {
              const why = credentialProblem(v);
              if (why !== undefined) ctx.addIssue({ code: 'custom', message: why.message });
            }),
          ),
        )
          .min(1, { error: 'needs at least one credential' })
          .max(POLICY_LIMITS.credentialsMax, {
            error: `at most ${POLICY_LIMITS.credentialsMax} credentials`,
          }),
        required: true,
        secret: true,
        interpolate: ['*'],
        description:
          'user:password entries (1..10; passwords 8..128 characters; always sensitive).',
      },
      realm: {
        schema: refable(
          z
            .string()
            .max(POLICY_LIMITS.realmMax, { error: `at most ${POLICY_LIMITS.realmMax} characters` })
            .regex(/^[\x20-\x7e]*$/, { error: 'ASCII only' }),
        ),
        description: 'The realm shown to the client (ASCII, at most 128 characters).',
      },
      enforce: { schema: bool(), default: true, description: 'false: let failures through.' },
    },
  },
  'circuit-breaker': {
    description: `Rejects requests while the upstream fails too often (${POLICY_LIMITS.breakerBuckets} fixed buckets).`,
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      error_threshold: {
        schema: z.number().min(0, 'must be 0..1').max(1, 'must be 0..1'),
        default: 0.5,
        description: 'Share of failed requests (0..1) that trips the breaker.',
      },
      volume_threshold: {
        schema: int(1, POLICY_LIMITS.volumeThresholdMax),
        default: 10,
        description: 'Requests in a window below which the breaker never trips.',
      },
      window_duration: {
        schema: duration(POLICY_LIMITS.breakerWindowMinMs, POLICY_LIMITS.breakerWindowMaxMs),
        default: '10s',
        description: 'The window the error share is measured over (1s..2m).',
      },
      tripped_duration: {
        schema: duration(POLICY_LIMITS.breakerWindowMinMs, POLICY_LIMITS.breakerWindowMaxMs),
        default: '10s',
        description: 'How long a tripped breaker rejects requests (1s..2m).',
      },
      num_buckets: {
        schema: int(1, LIMITS.numBucketsMax),
        default: POLICY_LIMITS.breakerBuckets,
        description: `Accepted and ignored: the service always uses ${POLICY_LIMITS.breakerBuckets} buckets.`,
      },
      enforce: {
        schema: bool(),
        default: true,
        description: 'false: only log what would be rejected.',
      },
    },
  },
  'close-connection': {
    description: 'Closes the connection; ends the phase.',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminates: 'always',
    fields: {},
  },
  'compress-response': {
    description: 'Compresses responses the client accepts compressed.',
    phases: ['on_http_response'],
    terminates: 'never',
    fields: {
      algorithms: {
        schema: uniqueList(z.enum(['gzip', 'deflate', 'br', 'compress'])),
        default: ['gzip', 'deflate', 'br', 'compress'],
        description: 'Algorithms offered, in order of preference (distinct).',
      },
    },
  },
  'custom-response': {
    description: 'Answers the request itself; ends the phase.',
    phases: HTTP,
    terminates: 'always',
    fields: {
      status_code: { schema: statusCode(), default: 200, description: 'The HTTP status.' },
      body: {
        schema: str(),
        interpolate: [''],
        description: 'The body; may interpolate ${CEL}.',
      },
      content: {
        schema: str(),
        interpolate: [''],
        description: 'Another name of body (what some tools send).',
      },
      headers: {
        schema: headerMap(0, { noUserAgent: false }),
        headerMap: true,
        interpolate: ['*'],
        description: 'Response headers (at most 10); values may interpolate ${CEL}.',
      },
    },
    check: notBoth('body', 'content'),
  },
  deny: {
    description: 'Refuses the request (or the connection); ends the phase.',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminates: 'always',
    noConfigIn: ['on_tcp_connect'],
    fields: {
      status_code: {
        schema: statusCode(),
        default: 403,
        description: 'The HTTP status answered (100..599; no config in on_tcp_connect).',
      },
    },
  },
  'forward-internal': {
    description:
      'Sends the traffic to an internal endpoint (an agent on a .internal URL); ends the phase unless on_error is continue.',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminates: 'unless on_error: continue',
    fields: {
      url: {
        schema: str(),
        required: true,
        interpolate: [''],
        description: "The internal endpoint's URL (a .internal host, the endpoint's protocol).",
      },
      on_error: onError('halt', 'continue: when the upstream fails, run the rules after this one.'),
    },
  },
  'http-request': {
    description: 'Makes an HTTP request and keeps its response in variables.',
    phases: HTTP,
    terminates: 'never',
    fields: {
      url: { schema: url(), required: true, interpolate: [''], description: 'The URL requested.' },
      method: {
        schema: z.enum(HTTP_REQUEST_METHODS),
        default: 'GET',
        description: 'The HTTP method.',
      },
      query_params: {
        schema: list(
          z.strictObject({
            key: refable(
              z.string().max(POLICY_LIMITS.queryKeyMax, {
                error: `at most ${POLICY_LIMITS.queryKeyMax} characters`,
              }),
            ),
            value: refable(
              z.string().max(POLICY_LIMITS.queryValueMax, {
                error: `at most ${POLICY_LIMITS.queryValueMax} characters`,
              }),
            ),
          }),
        ).max(POLICY_LIMITS.queryParamsMax, {
          error: `at most ${POLICY_LIMITS.queryParamsMax} query parameters`,
        }),
        interpolate: ['*.key', '*.value'],
        description: 'Query parameters ({key, value}, at most 32); both may interpolate ${CEL}.',
      },
      headers: {
        schema: headerMap(0, { noUserAgent: false }),
        headerMap: true,
        interpolate: ['*'],
        description: 'Request headers (at most 10); values may interpolate ${CEL}.',
      },
      body: { schema: str(), interpolate: [''], description: 'The request body.' },
      max_redirects: {
        schema: int(0, POLICY_LIMITS.maxRedirectsMax),
        default: 0,
        description: 'Redirects followed (0..100).',
      },
      timeout: {
        schema: duration(POLICY_LIMITS.httpTimeoutMinMs, POLICY_LIMITS.httpTimeoutMaxMs),
        default: '3s',
        description: 'Time allowed, retries and redirects included (1s..30s).',
      },
      retry_condition: {
        schema: str(),
        default: 'false',
        cel: true,
        description: 'A CEL expression: retry (at most 3 times) while it holds.',
      },
      on_error: onError('continue', 'halt: when the request fails, end the phase.'),
    },
  },
  'jwt-validation': {
    description: 'Requires valid JWTs; failures are answered 401.',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      issuer: {
        schema: z.strictObject({
          allow_list: list(z.strictObject({ value: nonEmpty() })).min(1, {
            error: 'needs at least one issuer',
          }),
        }),
        required: true,
        interpolate: ['allow_list.*.value'],
        description: 'allow_list: the accepted issuers ({value}, matched exactly).',
      },
      audience: {
        schema: z.strictObject({
          allow_list: list(z.strictObject({ value: nonEmpty() })).min(1, {
            error: 'needs at least one audience',
          }),
        }),
        description: 'allow_list: the accepted audiences ({value}); aud must hold one.',
      },
      http: {
        schema: z.strictObject({
          tokens: list(
            z.strictObject({
              type: z.enum(JWT_TOKEN_TYPES),
              method: z.enum(['header', 'body']),
              name: nonEmpty(),
              prefix: str().optional(),
            }),
          ).min(1, { error: 'needs at least one token' }),
        }),
        required: true,
        interpolate: ['tokens.*.name', 'tokens.*.prefix'],
        description: 'tokens: where each token is ({type, method header|body, name, prefix}).',
      },
      jws: {
        schema: z.strictObject({
          allowed_algorithms: list(
            nonEmpty().refine((a) => a.toLowerCase() !== 'none', { error: 'none is not allowed' }),
          ).min(1, { error: 'needs at least one algorithm' }),
          keys: oneOrList({
            sources: oneOrList({ additional_jkus: list(url()).min(1) }),
            identification: oneOrList({ token_claims: list(z.literal('kid')) }).optional(),
          }),
        }),
        required: true,
        interpolate: [
          'keys.sources.additional_jkus.*',
          'keys.sources.*.additional_jkus.*',
          'keys.*.sources.additional_jkus.*',
          'keys.*.sources.*.additional_jkus.*',
        ],
        description:
          'allowed_algorithms (not none) and keys: sources.additional_jkus (JWKS URLs), identification.token_claims (kid).',
      },
    },
  },
  log: {
    description: "Adds metadata to the connection's or request's log event.",
    phases: ALL,
    terminates: 'never',
    fields: {
      metadata: {
        schema: z.record(z.string(), jsonValue()),
        required: true,
        interpolate: ['**'],
        description: 'Name -> value logged; strings may interpolate ${CEL}.',
      },
    },
  },
  oauth: {
    description: 'Requires an OAuth login (one authentication action per endpoint).',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      provider: {
        schema: z.enum(OAUTH_PROVIDERS),
        required: true,
        description: 'The identity provider (amazon and facebook need your own application).',
      },
      ...sessionFields('idle_session_timeout'),
    },
    check: (c, ctx) => {
      credentialsTogether(c, ctx);
      const own = c.client_id !== undefined;
      if (!own && OWN_CREDENTIALS_ONLY.has(String(c.provider))) {
        ctx.addIssue({
          code: 'custom',
          path: ['provider'],
          message: `provider ${String(c.provider)} needs client_id and client_secret`,
        });
      }
      if (!own && c.scopes !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['scopes'],
          message: 'scopes need your own application (client_id, client_secret)',
        });
      }
    },
  },
  'openid-connect': {
    description: 'Requires an OpenID Connect login (one authentication action per endpoint).',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      issuer_url: {
        schema: refable(z.url({ error: 'must be a URL' })),
        required: true,
        description: "The identity provider's issuer URL.",
      },
      ...sessionFields('idle_session_duration'),
      idle_session_timeout: {
        schema: duration(),
        aliasOf: 'idle_session_duration',
        description: 'Another name of idle_session_duration (sent as idle_session_duration).',
      },
    },
    check: (c, ctx) => {
      credentialsTogether(c, ctx);
      notBoth('idle_session_duration', 'idle_session_timeout')(c, ctx);
    },
  },
  'owasp-crs-request': {
    description: 'Blocks requests the OWASP Core Rule Set scores as attacks (403).',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: owaspFields(),
  },
  'owasp-crs-response': {
    description: 'Blocks responses the OWASP Core Rule Set scores as leaks (403).',
    phases: ['on_http_response'],
    terminates: 'never',
    fields: owaspFields(),
  },
  'rate-limit': {
    description: 'Limits the request rate per bucket; excess requests are answered 429.',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      name: {
        schema: refable(
          z
            .string()
            .min(1, { error: 'must not be empty' })
            .max(POLICY_LIMITS.rateLimitNameMax, { error: 'must be shorter than 1024 characters' }),
        ),
        required: true,
        description: 'The limit (shorter than 1024 characters).',
      },
      enforce: { schema: bool(), default: true, description: 'false: only evaluate.' },
      algorithm: {
        schema: z.enum(['sliding_window']),
        required: true,
        description: 'sliding_window (the only one).',
      },
      capacity: {
        schema: int(1, POLICY_LIMITS.rateLimitCapacityMax),
        required: true,
        description: 'Requests allowed per rate window (1..2000000000).',
      },
      rate: {
        schema: duration(
          POLICY_LIMITS.rateLimitRateMinMs,
          POLICY_LIMITS.rateLimitRateMaxMs,
          POLICY_LIMITS.rateLimitRateStepMs,
        ),
        required: true,
        description: 'The window (60s..24h, a multiple of 10s).',
      },
      bucket_key: {
        schema: list(nonEmpty())
          .min(1, { error: 'needs at least one key' })
          .max(POLICY_LIMITS.bucketKeysMax, { error: 'at most 10 keys' }),
        required: true,
        cel: true,
        description: 'CEL expressions (bare, 1..10) whose values name the bucket.',
      },
    },
  },
  redirect: {
    description:
      'Redirects the client (not a terminating action: nothing happens when the URL is unchanged).',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      from: {
        schema: regex(),
        interpolate: [''],
        description: 'An RE2 expression matched against the whole URL (default: all of it).',
      },
      to: {
        schema: str(),
        required: true,
        interpolate: [''],
        description: 'The new URL ($1... capture groups).',
      },
      status_code: {
        schema: z.union(
          REDIRECT_STATUS_CODES.map((c) => z.literal(c)),
          {
            error: `must be one of ${REDIRECT_STATUS_CODES.join(', ')}`,
          },
        ),
        default: 302,
        description: 'The redirect status (301, 302, 303, 307, 308).',
      },
      headers: {
        schema: headerMap(0, { noUserAgent: false }),
        headerMap: true,
        interpolate: ['*'],
        description: 'Headers of the redirect response (at most 10).',
      },
    },
  },
  'remove-headers': {
    description: 'Removes headers.',
    phases: HTTP,
    terminates: 'never',
    fields: {
      headers: {
        schema: z
          .array(headerName())
          .min(1, { error: 'needs 1..10 headers' })
          .max(POLICY_LIMITS.headersPerAction, { error: 'needs 1..10 headers' })
          .refine((h) => !h.some((n) => n.toLowerCase() === 'user-agent'), {
            error: 'user-agent may not be removed',
          }),
        required: true,
        description: 'Header names (1..10; not user-agent).',
      },
    },
  },
  'request-body-find-replace': {
    description: "Replaces text in the request's body (buffered whole).",
    phases: ['on_http_request'],
    terminates: 'never',
    fields: findReplaceFields(false),
  },
  'response-body-find-replace': {
    description: "Replaces text in the response's body (buffered whole).",
    phases: ['on_http_response'],
    terminates: 'never',
    fields: findReplaceFields(false),
  },
  'restrict-ips': {
    description: 'Lets through only the allowed client addresses (denies the rest).',
    phases: ALL,
    terminates: 'never',
    fields: {
      enforce: {
        schema: bool(),
        default: true,
        description: 'false: only log what would be denied.',
      },
      allow: {
        schema: list(cidr()),
        interpolate: ['*'],
        description: 'Allowed client networks (CIDR).',
      },
      deny: {
        schema: list(cidr()),
        interpolate: ['*'],
        description: 'Denied client networks (CIDR).',
      },
      ip_policies: {
        schema: list(
          z.union(
            [
              refable(z.string().regex(/^ipp_[A-Za-z0-9]+$/, { error: 'must be an ipp_ ID' })),
              // An IPPolicy of the manifests by name: the plan puts its ID here.
              z.strictObject({ ref: z.string().min(1) }),
            ],
            { error: 'must be an ipp_ ID or { ref: NAME } (an IPPolicy manifest)' },
          ),
        ),
        description:
          'IP policies whose rules apply: an ipp_ ID, or { ref: NAME } naming an IPPolicy manifest.',
      },
    },
    check: (c, ctx) => {
      const count = (k: string) => (Array.isArray(c[k]) ? c[k].length : 0);
      if (count('allow') + count('deny') + count('ip_policies') === 0) {
        ctx.addIssue({ code: 'custom', message: 'needs at least one of allow, deny, ip_policies' });
      }
    },
  },
  saml: {
    description: 'Requires a SAML login (early access; one authentication action per endpoint).',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      idp_metadata: {
        schema: nonEmpty(),
        required: true,
        description: "The identity provider's metadata (XML).",
      },
    },
  },
  'set-vars': {
    description: 'Sets variables (vars.<name>) for the rest of the phase.',
    phases: ALL,
    terminates: 'never',
    fields: {
      vars: {
        schema: list(
          z.record(z.string(), jsonValue()).refine((m) => Object.keys(m).length === 1, {
            error: 'each entry is a mapping with exactly one key',
          }),
        ),
        required: true,
        interpolate: ['**'],
        description:
          'A list of one-key mappings: name -> value; strings may interpolate ${CEL} (not of vars set earlier).',
      },
    },
  },
  'sse-find-replace': {
    description: 'Replaces text in each server-sent event as it streams.',
    phases: ['on_event_stream_message'],
    terminates: 'never',
    fields: findReplaceFields(true),
    check: (c, ctx) => {
      const items = Array.isArray(c.replacements) ? c.replacements : [];
      items.forEach((r: { field?: unknown }, i) => {
        const f = r.field;
        if (typeof f === 'string' && !isTemplated(f) && f !== 'data' && f !== 'retry')
          ctx.addIssue({
            code: 'custom',
            path: ['replacements', i, 'field'],
            message: 'must be data or retry',
          });
      });
    },
  },
  'terminate-tls': {
    description: 'Terminates TLS at the endpoint, with its own certificate and mutual TLS.',
    phases: ['on_tcp_connect'],
    terminates: 'never',
    fields: {
      min_version: { schema: tlsVersion(), default: '1.2', description: 'Lowest TLS version.' },
      max_version: { schema: tlsVersion(), default: '1.3', description: 'Highest TLS version.' },
      server_certificate: {
        schema: pem(),
        interpolate: [''],
        description: 'The certificate chain (PEM), with server_private_key.',
      },
      server_private_key: {
        schema: pem(),
        secret: true,
        interpolate: [''],
        description: "The certificate's private key (PEM; always sensitive).",
      },
      mutual_tls_certificate_authorities: {
        schema: list(
          orReference(
            checked((v) =>
              v.includes('-----BEGIN ') || /^ca_[A-Za-z0-9]+$/.test(v)
                ? undefined
                : 'must be PEM or a ca_ ID',
            ),
          ),
        ),
        interpolate: ['*'],
        description:
          "Authorities that sign clients' certificates: PEM, ca_ IDs, or { ref: NAME } naming a CertificateAuthority manifest.",
      },
      mutual_tls_verification_strategy: {
        schema: z.enum(['require-and-verify', 'require-any', 'request']),
        default: 'require-and-verify',
        description: "How clients' certificates are asked for and checked.",
      },
    },
    check: (c, ctx) => {
      if ((c.server_certificate === undefined) !== (c.server_private_key === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [c.server_certificate === undefined ? 'server_private_key' : 'server_certificate'],
          message: 'server_certificate and server_private_key go together',
        });
      }
      if (
        c.min_version !== undefined &&
        c.max_version !== undefined &&
        Number(c.min_version) > Number(c.max_version)
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['min_version'],
          message: 'must not be above max_version',
        });
      }
    },
  },
  'url-rewrite': {
    description: 'Rewrites the URL sent upstream (the client keeps its URL).',
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      from: {
        schema: regex(),
        interpolate: [''],
        description: 'An RE2 expression matched against the whole URL (every match replaced).',
      },
      to: {
        schema: str(),
        required: true,
        interpolate: [''],
        description: 'The replacement ($1... capture groups).',
      },
    },
  },
  'verify-webhook': {
    description: "Checks a webhook's signature; failures are answered 403.",
    phases: ['on_http_request'],
    terminates: 'never',
    fields: {
      provider: {
        schema: refable(
          z.string().refine((p) => WEBHOOK_SET.has(p.toLowerCase()), {
            error: 'unknown webhook provider',
          }),
        ),
        required: true,
        description: 'Who sends the webhook (for example github, stripe, slack).',
      },
      secret: {
        schema: nonEmpty(),
        secret: true,
        required: true,
        interpolate: [''],
        description: 'The signing secret (for sns the topic owner; always sensitive).',
      },
      enforce: {
        schema: bool(),
        default: true,
        description: 'false: only log failed verifications.',
      },
    },
  },
};

const TERMINATING: Readonly<Record<ActionEntry['terminates'], (c: Config) => boolean>> = {
  always: () => true,
  never: () => false,
  'unless on_error: continue': (c) => c.on_error !== 'continue',
};

export const ACTIONS: Readonly<Record<string, ActionSpec>> = Object.fromEntries(
  Object.entries(ENTRIES).map(([type, entry]) => [
    type,
    { ...entry, terminating: TERMINATING[entry.terminates] },
  ]),
);

export const ACTION_TYPES: readonly string[] = Object.keys(ACTIONS);

/** The table's entry for a type (own keys only: `constructor` is no action). */
export function actionSpec(type: string): ActionSpec | undefined {
  return Object.hasOwn(ACTIONS, type) ? ACTIONS[type] : undefined;
}

/**
 * The policy with every alias field (`aliasOf`) renamed to the field it stands for, so what is
 * sent and compared is the documented name. Pure: `policy` is not changed.
 */
export function normalisedPolicy<T>(policy: T): T {
  if (typeof policy !== 'object' || policy === null) return policy;
  let changed = false;
  const phases = Object.entries(policy).map(([phase, rules]) => {
    if (!Array.isArray(rules)) return [phase, rules];
    const out = rules.map((rule: { actions?: unknown }) => {
      if (!Array.isArray(rule?.actions)) return rule;
      const actions = rule.actions.map((action: { type?: unknown; config?: unknown }) => {
        const spec = typeof action?.type === 'string' ? actionSpec(action.type) : undefined;
        const config = action?.config;
        if (spec === undefined || typeof config !== 'object' || config === null) return action;
        const renamed = Object.entries(config).map(([k, v]): [string, unknown] => {
          const target = Object.hasOwn(spec.fields, k) ? spec.fields[k]?.aliasOf : undefined;
          if (target === undefined || Object.hasOwn(config, target)) return [k, v];
          changed = true;
          return [target, v];
        });
        return { ...action, config: Object.fromEntries(renamed) };
      });
      return { ...rule, actions };
    });
    return [phase, out];
  });
  return changed ? (Object.fromEntries(phases) as T) : policy;
}

/** Names the documentation uses for an action that are not its type, with the type meant. */
export const ACTION_MISNAMES: Readonly<Record<string, string>> = {
  oidc: 'openid-connect',
  'webhook-validation': 'verify-webhook',
  'ip-restriction': 'restrict-ips',
};

/**
 * Whether a string at `at` (relative to the field: keys and indexes) of a config field may
 * interpolate `${...}`, by the field's `interpolate` patterns.
 */
export function interpolationAllowed(field: FieldSpec, at: readonly (string | number)[]): boolean {
  return (field.interpolate ?? []).some((pattern) => {
    const parts = pattern === '' ? [] : pattern.split('.');
    if (parts[0] === '**') return true;
    return parts.length === at.length && parts.every((p, i) => p === '*' || p === String(at[i]));
  });
}

/** The authentication actions: at most one per endpoint. */
export const AUTH_ACTIONS: ReadonlySet<string> = new Set(['oauth', 'openid-connect', 'saml']);

/** Names of the config fields that are secrets (`client_secret`, `secret`, ...). */
export const SECRET_CONFIG_FIELDS: ReadonlySet<string> = new Set(
  Object.values(ACTIONS).flatMap((a) =>
    Object.entries(a.fields)
      .filter(([, f]) => f.secret === true)
      .map(([name]) => name),
  ),
);

/** Names of the config fields that map header names to values (`headers`). */
export const HEADER_MAP_CONFIG_FIELDS: ReadonlySet<string> = new Set(
  Object.values(ACTIONS).flatMap((a) =>
    Object.entries(a.fields)
      .filter(([, f]) => f.headerMap === true)
      .map(([name]) => name),
  ),
);
