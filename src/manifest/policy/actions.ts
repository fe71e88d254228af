/**
 * The traffic policy's facts, as the client states them: its phases and, in ONE table with an
 * entry per action type, where each action may run, whether it ends its phase, its config
 * fields (value schema with bounds, default, required, secret, one-line description) and the
 * rules that tie its fields together. Everything else is derived from this table: the zod
 * schema of each action's config (hence the manifest schema, the JSON Schema and the field
 * reference), the secret fields the masking module knows, and the policy rules of
 * `./rules.ts`. The local server states the same facts on its own side (it is the oracle the
 * table is tested against), so nothing here comes from the server.
 */
import { z } from 'zod';
import { parseDuration } from '../../duration.js';
import { checkHeaderName, checkHeaderValue, WEBHOOK_PROVIDERS } from '../../hosted/edge-api.js';
import { isCredentialHeader } from '../credential-headers.js';
import { REFABLE, refable } from '../modules.js';
import type { FieldPath } from '../paths.js';

export const PHASES = ['on_tcp_connect', 'on_http_request', 'on_http_response'] as const;
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
}

export interface ActionSpec {
  readonly description: string;
  readonly phases: readonly Phase[];
  /** Whether an action with this config ends its phase. */
  readonly terminating: (config: Config) => boolean;
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Phases in which the action takes no config at all. */
  readonly noConfigIn?: readonly Phase[];
  /** Rules across fields (the config's own values already passed their schemas). */
  readonly check?: (config: Config, ctx: z.core.$RefinementCtx) => void;
}

// ---- value kinds ------------------------------------------------------------------------------

const str = () => refable(z.string());
const nonEmpty = () => refable(z.string().min(1, { error: 'must not be empty' }));
const bool = () => z.boolean();
const list = (item: z.ZodType) => z.array(item);

/** Durations are strings (`30s`, `15m`, `1h`), within `[minMs, maxMs]`. */
const duration = (minMs = 1, maxMs = Number.POSITIVE_INFINITY) =>
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
      }
    }),
  );

const CIDR = z.union([z.cidrv4(), z.cidrv6()]);
const cidr = () =>
  refable(
    z.string().refine((v) => CIDR.safeParse(v).success, {
      error: 'must be a CIDR (e.g. 10.0.0.0/8)',
    }),
  );

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

const statusCode = () =>
  z
    .int({ error: 'must be a whole number' })
    .min(100, 'must be 100..599')
    .max(599, 'must be 100..599');

const tlsVersion = () =>
  z.union([z.enum(['1.2', '1.3']), z.literal(1.2), z.literal(1.3)], {
    error: 'must be "1.2" or "1.3"',
  });

const pem = () =>
  refable(z.string().refine((v) => v.includes('-----BEGIN '), { error: 'must be PEM' }));

/** Every value JSON can carry (set-vars values are free). */
const jsonValue = () => z.unknown();

// ---- the table --------------------------------------------------------------------------------

const ALL = PHASES;
const never = () => false;
const always = () => true;

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
const OWN_CREDENTIALS_ONLY: ReadonlySet<string> = new Set(['amazon', 'facebook']);
export const WEBHOOK_POLICY_PROVIDERS: readonly string[] = [
  ...WEBHOOK_PROVIDERS,
  'jira',
  'linear',
  'orb',
];
const WEBHOOK_SET: ReadonlySet<string> = new Set(WEBHOOK_POLICY_PROVIDERS);
/** The one webhook provider verified without a shared secret (the sender's certificate). */
const WEBHOOK_WITHOUT_SECRET = 'sns';

const sessionFields = (): Record<string, FieldSpec> => ({
  client_id: { schema: nonEmpty(), description: 'Your own application: its client ID.' },
  client_secret: {
    schema: nonEmpty(),
    secret: true,
    description: 'Your own application: its client secret (always sensitive).',
  },
  scopes: {
    schema: list(nonEmpty()),
    description: 'Scopes to request (only with your own client_id and client_secret).',
  },
  allow_cors_preflight: {
    schema: bool(),
    default: false,
    description: 'Let CORS preflight (OPTIONS) requests through unauthenticated.',
  },
  idle_session_timeout: {
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

export const ACTIONS: Readonly<Record<string, ActionSpec>> = {
  'forward-internal': {
    description:
      'Sends the traffic to an internal endpoint (an agent on a .internal URL); ends the phase unless on_error is continue.',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: (c) => c.on_error !== 'continue',
    fields: {
      url: {
        schema: str(),
        required: true,
        description: "The internal endpoint's URL (a .internal host, the endpoint's protocol).",
      },
      on_error: {
        schema: z.enum(['halt', 'continue']),
        default: 'halt',
        description: 'continue: when the upstream fails, run the rules after this one.',
      },
    },
  },
  'restrict-ips': {
    description: 'Lets through only the allowed client addresses (denies the rest).',
    phases: ALL,
    terminating: never,
    fields: {
      enforce: {
        schema: bool(),
        default: true,
        description: 'false: only log what would be denied.',
      },
      allow: { schema: list(cidr()), description: 'Allowed client networks (CIDR).' },
      deny: { schema: list(cidr()), description: 'Denied client networks (CIDR).' },
      ip_policies: {
        schema: list(
          refable(z.string().regex(/^ipp_[A-Za-z0-9]+$/, { error: 'must be an ipp_ ID' })),
        ),
        description: 'IP policies (ipp_ IDs) whose rules apply.',
      },
    },
    check: (c, ctx) => {
      const count = (k: string) => (Array.isArray(c[k]) ? c[k].length : 0);
      if (count('allow') + count('deny') + count('ip_policies') === 0) {
        ctx.addIssue({ code: 'custom', message: 'needs at least one of allow, deny, ip_policies' });
      }
    },
  },
  'terminate-tls': {
    description: 'Terminates TLS at the endpoint, with its own certificate and mutual TLS.',
    phases: ['on_tcp_connect'],
    terminating: never,
    fields: {
      min_version: { schema: tlsVersion(), default: '1.2', description: 'Lowest TLS version.' },
      max_version: { schema: tlsVersion(), default: '1.3', description: 'Highest TLS version.' },
      server_certificate: {
        schema: pem(),
        description: 'The certificate chain (PEM), with server_private_key.',
      },
      server_private_key: {
        schema: pem(),
        secret: true,
        description: "The certificate's private key (PEM; always sensitive).",
      },
      mutual_tls_certificate_authorities: {
        schema: list(
          refable(
            z.string().refine((v) => v.includes('-----BEGIN ') || /^ca_[A-Za-z0-9]+$/.test(v), {
              error: 'must be PEM or a ca_ ID',
            }),
          ),
        ),
        description: "Authorities (PEM or ca_ IDs) that sign clients' certificates.",
      },
      mutual_tls_verification_strategy: {
        schema: z.enum(['require-and-verify', 'require-any', 'request']),
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
  'add-headers': {
    description: 'Adds headers (names lower-cased; user-agent cannot be added).',
    phases: ['on_http_request', 'on_http_response'],
    terminating: never,
    fields: {
      headers: {
        schema: headerMap(1, { noUserAgent: true }),
        headerMap: true,
        required: true,
        description: `Header name -> value (1..10); values may interpolate \${CEL}.`,
      },
    },
  },
  'remove-headers': {
    description: 'Removes headers.',
    phases: ['on_http_request', 'on_http_response'],
    terminating: never,
    fields: {
      headers: {
        schema: list(headerName())
          .min(1, { error: 'needs 1..10 headers' })
          .max(POLICY_LIMITS.headersPerAction, { error: 'needs 1..10 headers' }),
        required: true,
        description: 'Header names (1..10).',
      },
    },
  },
  'compress-response': {
    description: 'Compresses responses the client accepts compressed.',
    phases: ['on_http_response'],
    terminating: never,
    fields: {
      algorithms: {
        schema: list(z.enum(['gzip', 'deflate', 'br', 'compress'])).min(1, {
          error: 'needs at least one algorithm',
        }),
        default: ['gzip', 'deflate', 'br', 'compress'],
        description: 'Algorithms offered, in order of preference.',
      },
    },
  },
  'verify-webhook': {
    description: "Checks a webhook's signature; failures are answered 403.",
    phases: ['on_http_request'],
    terminating: never,
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
        schema: str(),
        secret: true,
        description: 'The shared signing secret (always sensitive; none for sns).',
      },
      enforce: {
        schema: bool(),
        default: true,
        description: 'false: only log failed verifications.',
      },
    },
    check: (c, ctx) => {
      const provider = typeof c.provider === 'string' ? c.provider.toLowerCase() : '';
      if (provider !== WEBHOOK_WITHOUT_SECRET && (c.secret === undefined || c.secret === '')) {
        ctx.addIssue({
          code: 'custom',
          path: ['secret'],
          message: `provider ${String(c.provider)} needs a secret`,
        });
      }
    },
  },
  'circuit-breaker': {
    description: 'Rejects requests while the upstream fails too often (10 fixed buckets).',
    phases: ['on_http_request'],
    terminating: never,
    fields: {
      error_threshold: {
        schema: z.number().min(0, 'must be 0..1').max(1, 'must be 0..1'),
        default: 0.5,
        description: 'Share of failed requests (0..1) that trips the breaker.',
      },
      volume_threshold: {
        schema: z
          .int({ error: 'must be a whole number' })
          .min(1, `must be 1..${POLICY_LIMITS.volumeThresholdMax}`)
          .max(POLICY_LIMITS.volumeThresholdMax, `must be 1..${POLICY_LIMITS.volumeThresholdMax}`),
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
      enforce: {
        schema: bool(),
        default: true,
        description: 'false: only log what would be rejected.',
      },
    },
  },
  oauth: {
    description: 'Requires an OAuth login (one authentication action per endpoint).',
    phases: ['on_http_request'],
    terminating: never,
    fields: {
      provider: {
        schema: z.enum(OAUTH_PROVIDERS),
        required: true,
        description: 'The identity provider (amazon and facebook need your own application).',
      },
      ...sessionFields(),
      auth_id: { schema: nonEmpty(), description: 'Names the session cookie.' },
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
    terminating: never,
    fields: {
      issuer_url: {
        schema: refable(z.url({ error: 'must be a URL' })),
        required: true,
        description: "The identity provider's issuer URL.",
      },
      ...sessionFields(),
    },
    check: credentialsTogether,
  },
  saml: {
    description: 'Requires a SAML login (early access; one authentication action per endpoint).',
    phases: ['on_http_request'],
    terminating: never,
    fields: {
      idp_metadata: {
        schema: nonEmpty(),
        required: true,
        description: "The identity provider's metadata (XML).",
      },
    },
  },
  deny: {
    description: 'Refuses the request (or the connection); ends the phase.',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: always,
    noConfigIn: ['on_tcp_connect'],
    fields: {
      status_code: {
        schema: statusCode(),
        default: 403,
        description: 'The HTTP status answered (100..599; no config in on_tcp_connect).',
      },
    },
  },
  'custom-response': {
    description: 'Answers the request itself; ends the phase.',
    phases: ['on_http_request', 'on_http_response'],
    terminating: always,
    fields: {
      status_code: { schema: statusCode(), default: 200, description: 'The HTTP status.' },
      body: { schema: str(), description: `The body; may interpolate \${CEL}.` },
      headers: {
        schema: headerMap(0, { noUserAgent: false }),
        headerMap: true,
        description: 'Response headers (at most 10).',
      },
    },
  },
  'close-connection': {
    description: 'Closes the connection; ends the phase.',
    phases: ALL,
    terminating: always,
    fields: {},
  },
  'set-vars': {
    description: 'Sets variables for later expressions.',
    phases: ALL,
    terminating: never,
    fields: {
      vars: {
        schema: list(
          z.record(z.string(), jsonValue()).refine((m) => Object.keys(m).length === 1, {
            error: 'each entry is a mapping with exactly one key',
          }),
        ),
        required: true,
        description: 'A list of one-key mappings: name -> value.',
      },
    },
  },
};

export const ACTION_TYPES: readonly string[] = Object.keys(ACTIONS);

/** The table's entry for a type (own keys only: `constructor` is no action). */
export function actionSpec(type: string): ActionSpec | undefined {
  return Object.hasOwn(ACTIONS, type) ? ACTIONS[type] : undefined;
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

/**
 * The paths (from the resource, `traffic_policy.<phase>[r].actions[a].config.<field>`, and
 * `...config.headers.<name>` for a credential header) of the secret config fields a policy
 * sets, however they are written.
 */
export function policySecretPaths(policy: unknown): FieldPath[] {
  const out: FieldPath[] = [];
  // Also run on documents that did not pass their shape: nothing here may be assumed.
  const entries = (v: unknown): [string, unknown][] =>
    typeof v === 'object' && v !== null ? Object.entries(v) : [];
  for (const [phase, rules] of entries(policy)) {
    if (!Array.isArray(rules)) continue;
    for (const [r, rule] of rules.entries()) {
      const actions: unknown = (rule as { actions?: unknown } | null)?.actions;
      if (!Array.isArray(actions)) continue;
      for (const [a, action] of actions.entries()) {
        const config: unknown = (action as { config?: unknown } | null)?.config;
        for (const [field, value] of entries(config)) {
          const at: FieldPath = ['traffic_policy', phase, r, 'actions', a, 'config', field];
          if (SECRET_CONFIG_FIELDS.has(field)) out.push(at);
          if (!HEADER_MAP_CONFIG_FIELDS.has(field) || Array.isArray(value)) continue;
          for (const [name] of entries(value))
            if (isCredentialHeader(name)) out.push([...at, name]);
        }
      }
    }
  }
  return out;
}

/** The zod schema of one action's config, derived from its table entry. */
export function configSchema(spec: ActionSpec): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(spec.fields)) {
    const meta = {
      description: field.description,
      ...(field.default === undefined ? {} : { default: field.default }),
    };
    if (field.required) {
      // `meta` makes a new schema: it must stay a place a reference may stand in.
      const described = field.schema.meta(meta);
      shape[name] = REFABLE.has(field.schema) ? refable(described) : described;
    } else {
      shape[name] = field.schema.optional().meta(meta);
    }
  }
  const object = z.strictObject(shape);
  const check = spec.check;
  return check === undefined ? object : object.superRefine((c, ctx) => check(c, ctx));
}
