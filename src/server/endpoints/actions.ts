/**
 * The traffic policy's known actions (cloud-endpoints.md, section 3, "Actions"): for each type
 * the phases it may run in, whether it ends the phase, and its config as a zod schema (unknown
 * config fields refused, so a typo is an error rather than a silently ignored field). The
 * table is the server's own statement of the rules.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import { parseDuration } from '../../duration.js';
import { checkHeaderName, checkHeaderValue, WEBHOOK_PROVIDERS } from '../../hosted/edge-api.js';
import { ENDPOINT_LIMITS } from './codes.js';
import { isInternalHost, parseEndpointUrl } from './url.js';

export const PHASES = ['on_tcp_connect', 'on_http_request', 'on_http_response'] as const;
export type Phase = (typeof PHASES)[number];
/** Legacy phase names and what they mean. */
const LEGACY_PHASES: Readonly<Record<string, Phase>> = {
  inbound: 'on_http_request',
  outbound: 'on_http_response',
};
export const AUTH_ACTIONS: ReadonlySet<string> = new Set(['oauth', 'openid-connect', 'saml']);

/** What forward-internal needs to know about the endpoint whose policy it is in. */
export interface PolicyContext {
  readonly scheme: string;
}

interface ActionSpec {
  readonly phases: readonly Phase[];
  /** Whether an action with this config ends its phase. */
  readonly terminating: (config: Record<string, unknown>) => boolean;
  /** The config for this phase (deny takes none in on_tcp_connect). */
  readonly config: (phase: Phase, ctx: PolicyContext) => z.ZodType;
}

const ALL: readonly Phase[] = PHASES;
const never = () => false;
const always = () => true;

const str = z.string();
const bool = z.boolean();
const nonEmpty = z.string().min(1, 'must not be empty');
const strictObj = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field(s) ${issue.keys.join(', ')}; accepted: ${Object.keys(shape).join(', ')}`
        : undefined,
  });

const duration = (min = 1, max = Number.POSITIVE_INFINITY) =>
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
    if (ms < min || ms > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${text} is out of range ${min / 1000}s..${max / 1000}s`,
      });
    }
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
  z.string().refine(isCidr, { message: 'must be a CIDR (e.g. 10.0.0.0/8)' }),
);

const headerName = z.string().superRefine((v, ctx) => {
  const violation = checkHeaderName(v);
  if (violation !== undefined) ctx.addIssue({ code: 'custom', message: violation.message });
});
const headerValue = z.string().superRefine((v, ctx) => {
  const violation = checkHeaderValue(v);
  if (violation !== undefined) ctx.addIssue({ code: 'custom', message: violation.message });
});

/**
 * A map of header names to values, `min`..10 of them. `add-headers` may not add `user-agent`
 * (the request's own); a custom response's headers have no such rule.
 */
function headerMap(min: number, opts: { noUserAgent: boolean }) {
  return z.record(z.string(), headerValue).superRefine((m, ctx) => {
    const names = Object.keys(m);
    if (names.length < min || names.length > ENDPOINT_LIMITS.headersPerAction) {
      ctx.addIssue({
        code: 'custom',
        message: `needs ${min}..${ENDPOINT_LIMITS.headersPerAction} headers, got ${names.length}`,
      });
    }
    const lower = names.map((n) => n.toLowerCase());
    if (new Set(lower).size !== lower.length) {
      ctx.addIssue({ code: 'custom', message: 'header names must be unique (case-insensitive)' });
    }
    for (const name of names) {
      const violation = checkHeaderName(name);
      if (violation !== undefined)
        ctx.addIssue({ code: 'custom', path: [name], message: violation.message });
      if (opts.noUserAgent && name.toLowerCase() === 'user-agent') {
        ctx.addIssue({ code: 'custom', path: [name], message: 'user-agent may not be added' });
      }
    }
  });
}

const forwardInternal = (ctx: PolicyContext) =>
  strictObj({
    url: z.string().superRefine((text, issue) => {
      const why = forwardTargetProblem(text, ctx.scheme);
      if (why !== undefined) issue.addIssue({ code: 'custom', message: why });
    }),
    on_error: z.enum(['halt', 'continue']).optional(),
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

const tlsVersion = z.union([z.enum(['1.2', '1.3']), z.literal(1.2), z.literal(1.3)]);
const pem = z.string().refine((v) => v.includes('-----BEGIN '), { message: 'must be PEM' });

const terminateTls = strictObj({
  min_version: tlsVersion.optional(),
  max_version: tlsVersion.optional(),
  server_certificate: pem.optional(),
  server_private_key: pem.optional(),
  mutual_tls_certificate_authorities: z
    .array(
      z.string().refine((v) => v.includes('-----BEGIN ') || /^ca_[A-Za-z0-9]+$/.test(v), {
        message: 'must be PEM or a ca_ ID',
      }),
    )
    .optional(),
  mutual_tls_verification_strategy: z
    .enum(['require-and-verify', 'require-any', 'request'])
    .optional(),
}).superRefine((c, ctx) => {
  if ((c.server_certificate === undefined) !== (c.server_private_key === undefined)) {
    ctx.addIssue({
      code: 'custom',
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
});

const WEBHOOK = new Set<string>([...WEBHOOK_PROVIDERS, 'jira', 'linear', 'orb']);
const verifyWebhook = strictObj({
  provider: z
    .string()
    .refine((p) => WEBHOOK.has(p.toLowerCase()), { message: 'unknown webhook provider' }),
  secret: z.string().optional(),
  enforce: bool.optional(),
}).superRefine((c, ctx) => {
  // sns verifies with the sender's certificate; whether it may carry a secret is unconfirmed.
  if (c.provider.toLowerCase() !== 'sns' && (c.secret === undefined || c.secret === '')) {
    ctx.addIssue({
      code: 'custom',
      path: ['secret'],
      message: `provider ${c.provider} needs a secret`,
    });
  }
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
  allow_cors_preflight: bool.optional(),
  idle_session_timeout: duration().optional(),
  max_session_duration: duration().optional(),
  userinfo_refresh_interval: duration().optional(),
};
function credentialsTogether(
  c: { client_id?: string | undefined; client_secret?: string | undefined },
  ctx: z.core.$RefinementCtx,
) {
  if ((c.client_id === undefined) !== (c.client_secret === undefined)) {
    ctx.addIssue({ code: 'custom', message: 'client_id and client_secret go together' });
  }
}
const oauth = strictObj({
  provider: z.enum(OAUTH_PROVIDERS),
  ...sessionFields,
  auth_id: nonEmpty.optional(),
}).superRefine((c, ctx) => {
  credentialsTogether(c, ctx);
  const own = c.client_id !== undefined;
  if (!own && OWN_CREDENTIALS_ONLY.has(c.provider)) {
    ctx.addIssue({
      code: 'custom',
      message: `provider ${c.provider} needs client_id and client_secret`,
    });
  }
  if (!own && c.scopes !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['scopes'],
      message: 'scopes need own credentials (client_id, client_secret)',
    });
  }
});
const openidConnect = strictObj({ issuer_url: z.url(), ...sessionFields }).superRefine(
  credentialsTogether,
);

const statusCode = z.number().int().min(100).max(599);

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
  'forward-internal': {
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: (c) => c.on_error !== 'continue',
    config: (_phase, ctx) => forwardInternal(ctx),
  },
  'restrict-ips': {
    phases: ALL,
    terminating: never,
    config: () =>
      strictObj({
        enforce: bool.optional(),
        allow: cidrList.optional(),
        deny: cidrList.optional(),
        ip_policies: z
          .array(z.string().regex(/^ipp_[A-Za-z0-9]+$/, 'must be an ipp_ ID'))
          .optional(),
      }).refine(
        (c) => (c.allow?.length ?? 0) + (c.deny?.length ?? 0) + (c.ip_policies?.length ?? 0) > 0,
        {
          message: 'needs at least one of allow, deny, ip_policies',
        },
      ),
  },
  'terminate-tls': { phases: ['on_tcp_connect'], terminating: never, config: () => terminateTls },
  'add-headers': {
    phases: ['on_http_request', 'on_http_response'],
    terminating: never,
    config: () => strictObj({ headers: headerMap(1, { noUserAgent: true }) }),
  },
  'remove-headers': {
    phases: ['on_http_request', 'on_http_response'],
    terminating: never,
    config: () =>
      strictObj({ headers: z.array(headerName).min(1).max(ENDPOINT_LIMITS.headersPerAction) }),
  },
  'compress-response': {
    phases: ['on_http_response'],
    terminating: never,
    config: () =>
      strictObj({
        algorithms: z
          .array(z.enum(['gzip', 'deflate', 'br', 'compress']))
          .min(1)
          .optional(),
      }),
  },
  'verify-webhook': {
    phases: ['on_http_request'],
    terminating: never,
    config: () => verifyWebhook,
  },
  'circuit-breaker': {
    phases: ['on_http_request'],
    terminating: never,
    config: () =>
      strictObj({
        error_threshold: z.number().min(0).max(1).optional(),
        volume_threshold: z
          .number()
          .int()
          .min(1)
          .max(ENDPOINT_LIMITS.volumeThresholdMax)
          .optional(),
        window_duration: duration(
          ENDPOINT_LIMITS.breakerWindowMinMs,
          ENDPOINT_LIMITS.breakerWindowMaxMs,
        ).optional(),
        tripped_duration: duration(
          ENDPOINT_LIMITS.breakerWindowMinMs,
          ENDPOINT_LIMITS.breakerWindowMaxMs,
        ).optional(),
        enforce: bool.optional(),
      }),
  },
  oauth: { phases: ['on_http_request'], terminating: never, config: () => oauth },
  'openid-connect': {
    phases: ['on_http_request'],
    terminating: never,
    config: () => openidConnect,
  },
  saml: {
    phases: ['on_http_request'],
    terminating: never,
    config: () => strictObj({ idp_metadata: nonEmpty }),
  },
  deny: {
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: always,
    config: (phase) =>
      phase === 'on_tcp_connect'
        ? strictObj({})
        : strictObj({ status_code: statusCode.optional() }),
  },
  'custom-response': {
    phases: ['on_http_request', 'on_http_response'],
    terminating: always,
    config: () =>
      strictObj({
        status_code: statusCode.optional(),
        body: str.optional(),
        headers: headerMap(0, { noUserAgent: false }).optional(),
      }),
  },
  // Named terminating by the specification though absent from its table: no config.
  'close-connection': { phases: ALL, terminating: always, config: () => strictObj({}) },
  'set-vars': {
    phases: ALL,
    terminating: never,
    config: () =>
      strictObj({
        vars: z.array(
          z.record(z.string(), z.unknown()).refine((m) => Object.keys(m).length === 1, {
            message: 'each entry is a map with exactly one key',
          }),
        ),
      }),
  },
};

export const KNOWN_ACTIONS: readonly string[] = Object.keys(ACTIONS);
