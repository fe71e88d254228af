/**
 * The manifest's building blocks and module schemas (zod): the patterns, the field kinds (with
 * the places a `{ env }` / `{ file }` reference may stand in for a value) and one schema per
 * module, in the API's write shape. The resources that hold the modules are ./schema.ts, which
 * re-exports everything here.
 */
import { z } from 'zod';
import {
  BACKEND_ID_PATTERN,
  checkCookiePrefix,
  checkHeaderValue,
  checkUserAgentPattern,
  HEADER_NAME_PATTERN,
  ID_PREFIX,
  LIMITS,
  NAMEID_FORMATS,
  type OAUTH_PROVIDERS,
  type RuleViolation,
  TERMINATE_AT,
  TLS_VERSIONS,
  utf8Bytes,
} from '../spec/api.js';

/** Manifest names: the stable key of a resource, unique per kind. */
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/;
/** Environment variable names accepted in `{ env: NAME }`. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Label keys: conservative, so no key can be `__proto__` or need quoting anywhere. */
export const LABEL_KEY_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$/;
/** HTTP header names: RFC 9110 tokens, starting with a letter or digit (so never `__proto__`). */
export { HEADER_NAME_PATTERN };
/** The label prefix edgesync keeps for itself (section 3 of the design). */
export const RESERVED_LABEL_PREFIX = 'edgesync/';

export const KINDS = ['TLSEdge', 'HTTPSEdge', 'BotUser', 'CloudEndpoint'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * Schemas at which a `{ env }` / `{ file }` reference may stand in for the value. The resolver
 * (`./refs.ts`) and the JSON Schema generator (`./jsonschema.ts`) both ask this set, so the two
 * can never disagree about where a reference is allowed.
 */
export const REFABLE: WeakSet<z.ZodType> = new WeakSet();

export function refable<T extends z.ZodType>(schema: T): T {
  REFABLE.add(schema);
  return schema;
}

/**
 * Mappings that may also be written as a string holding the same document in YAML or JSON (a
 * cloud endpoint's traffic policy): the shape phase reads the string before the schema checks
 * the mapping, and the JSON Schema offers both forms.
 */
export const TEXT_OR_MAPPING: WeakSet<z.ZodType> = new WeakSet();

export function textOrMapping<T extends z.ZodType>(schema: T): T {
  TEXT_OR_MAPPING.add(schema);
  return schema;
}

/** A reference to a value kept outside the manifest. */
export const SecretRefSchema = z.union([
  z.strictObject({
    env: z.string().regex(ENV_NAME_PATTERN, { error: 'must be an environment variable name' }),
  }),
  z.strictObject({ file: z.string().min(1, { error: 'must be a file path' }) }),
]);

// ---- building blocks --------------------------------------------------------------------------

export const text = () => refable(z.string());
const nonEmptyText = () => refable(z.string().min(1, { error: 'must not be empty' }));

const uint32 = () =>
  z
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must be at least 0' })
    .max(LIMITS.uint32Max, { error: `must be at most ${LIMITS.uint32Max} (uint32)` });

const positiveUint32 = () =>
  z
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be greater than 0' })
    .max(LIMITS.uint32Max, { error: `must be at most ${LIMITS.uint32Max} (uint32)` });

const enabled = () => z.boolean().default(true);

/** A list whose entries are non-empty and unique (optionally ignoring case). */
export function uniqueList<T extends z.ZodType<string>>(
  item: T,
  options: { ignoreCase?: boolean } = {},
) {
  return z.array(item).superRefine((list, ctx) => {
    if (list.length < 2) return; // most lists: nothing can repeat
    const seen = new Set<string>();
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as string;
      const key = options.ignoreCase ? entry.toLowerCase() : entry;
      if (seen.has(key)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `duplicate entry "${entry}"` });
      }
      seen.add(key);
    }
  });
}

const lowerCase = (what: string) =>
  refable(
    z
      .string()
      .min(1, { error: 'must not be empty' })
      .refine((v) => v === v.toLowerCase(), { error: `${what} must be lower-case` }),
  );

export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}[A-Za-z0-9]+$`);
}

export const describedText = () =>
  refable(
    z.string().refine((v) => utf8Bytes(v) <= LIMITS.descriptionBytes, {
      error: `must be at most ${LIMITS.descriptionBytes} bytes (UTF-8)`,
    }),
  );

export const labels = () =>
  z
    .record(
      z.string().regex(LABEL_KEY_PATTERN, {
        error:
          'label keys must be 1-128 characters of letters, digits, ".", "_", "-" and "/", starting and ending with a letter or digit',
      }),
      text(),
    )
    .default({});

/** A string checked by one of the hosted service's rules (src/spec/api.ts), with its message. */
export const ruled = (check: (value: string) => RuleViolation | undefined) =>
  z.string().superRefine((value, ctx) => {
    const violation = check(value);
    if (violation !== undefined) ctx.addIssue({ code: 'custom', message: violation.message });
  });

const headerName = () =>
  refable(z.string().regex(HEADER_NAME_PATTERN, { error: 'must be an HTTP header name' }));

// ---- modules (write shapes) -------------------------------------------------------------------

export const BackendSchema = z
  .strictObject({
    enabled: enabled(),
    backend_id: refable(
      z.string().regex(BACKEND_ID_PATTERN, {
        error: 'must be a backend ID (bkd..._...), e.g. bkdhr_2abc...',
      }),
    ),
  })
  .meta({ description: 'Backend module: where traffic goes (EndpointBackendMutate).' });

export const IpRestrictionSchema = z
  .strictObject({
    enabled: enabled(),
    ip_policy_ids: uniqueList(
      refable(
        z.string().regex(idPattern(ID_PREFIX.ipPolicy), {
          error: `must be an IP policy ID (${ID_PREFIX.ipPolicy}...)`,
        }),
      ),
    ).min(1, { error: 'at least one IP policy ID is required' }),
  })
  .meta({
    description: 'IP restriction module: only sources allowed by these IP policies (at least one).',
  });

export const MutualTlsSchema = z
  .strictObject({
    enabled: enabled(),
    certificate_authority_ids: uniqueList(
      refable(
        z.string().regex(idPattern(ID_PREFIX.certificateAuthority), {
          error: `must be a certificate authority ID (${ID_PREFIX.certificateAuthority}...)`,
        }),
      ),
    ),
  })
  .meta({
    description:
      'Mutual TLS module: client certificates must be signed by one of these certificate authorities.',
  });

const tlsVersion = () => refable(z.enum(TLS_VERSIONS));

/** TLS edges: where TLS terminates, and the minimum version when it terminates here. */
export const TlsTerminationSchema = z
  .strictObject({
    enabled: enabled(),
    terminate_at: refable(z.enum(TERMINATE_AT)).optional(),
    min_version: tlsVersion().optional(),
  })
  .meta({
    description:
      'TLS termination (TLS edges): where TLS ends; min_version must be absent when terminate_at is upstream.',
  });

/** HTTPS edges always terminate at the edge: `terminate_at` may not be given. */
export const TlsTerminationAtEdgeSchema = z
  .strictObject({
    enabled: enabled(),
    min_version: tlsVersion().optional(),
  })
  .meta({
    description: 'TLS termination (HTTPS edges): always at the edge; terminate_at is not accepted.',
  });

/**
 * Whether `value` is what JSON can carry: strings, finite numbers, booleans, null, lists and
 * mappings of those (what YAML adds is `.inf` and `.nan`). Iterative: input depth is the
 * attacker's.
 */
export function isJsonTree(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      for (const key in v) stack.push((v as Record<string, unknown>)[key]);
    } else {
      return false;
    }
  }
  return true;
}

/**
 * A mapping of JSON values. Not `z.record(z.string(), z.json())`: `z.json()` is recursive, and a
 * recursive schema cannot be compiled (`z.compile`), which makes every manifest slower to check.
 */
const jsonMapping = () =>
  z
    .record(z.string(), z.unknown().meta({ description: 'Any JSON value.' }))
    .refine(isJsonTree, { error: 'must hold JSON values only (no .inf or .nan)' });

/** `value` may be written as a YAML mapping; the model always holds the string the API takes. */
export const TrafficPolicySchema = z
  .strictObject({
    enabled: enabled(),
    value: refable(
      z
        .union([z.string(), jsonMapping()], {
          error: 'must be a string or a mapping',
        })
        .transform((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    ),
  })
  .meta({ description: 'Traffic policy module: value is a string, or a mapping sent as JSON.' });

export const CircuitBreakerSchema = z
  .strictObject({
    enabled: enabled(),
    tripped_duration: positiveUint32().optional(),
    rolling_window: positiveUint32().optional(),
    num_buckets: positiveUint32()
      .max(LIMITS.numBucketsMax, { error: `must be at most ${LIMITS.numBucketsMax}` })
      .optional(),
    volume_threshold: uint32().optional(),
    error_threshold_percentage: z
      .number({ error: 'must be a number' })
      .min(0, { error: 'must be between 0 and 1 (a fraction, not a percentage)' })
      .max(1, { error: 'must be between 0 and 1 (a fraction, not a percentage)' })
      .optional(),
  })
  .meta({
    description: 'Circuit breaker module. error_threshold_percentage is a fraction in [0, 1].',
  });

export const CompressionSchema = z
  .strictObject({ enabled: enabled() })
  .meta({ description: 'Compression module.' });

export const HeadersSchema = z
  .strictObject({
    enabled: enabled(),
    add: z
      .record(
        z.string().regex(HEADER_NAME_PATTERN, { error: 'must be an HTTP header name' }),
        refable(ruled(checkHeaderValue)),
      )
      .optional(),
    remove: uniqueList(headerName(), { ignoreCase: true }).optional(),
  })
  .meta({ description: 'Headers module: add (name to value) and remove (names).' });

/** Provider validity (known list, secret rules) is checked in `./semantics.ts`. */
export const WebhookVerificationSchema = z
  .strictObject({
    enabled: enabled(),
    provider: refable(
      z
        .string()
        .min(1, { error: 'must not be empty' })
        .transform((v) => v.toLowerCase()),
    ),
    secret: text().optional(),
  })
  .meta({
    description:
      'Webhook verification module: every provider needs a secret except sns, which takes none.',
  });

const oauthProviderFields = {
  client_id: nonEmptyText().optional(),
  client_secret: nonEmptyText().optional(),
  scopes: uniqueList(nonEmptyText()).optional(),
  email_addresses: uniqueList(lowerCase('email addresses')).optional(),
  email_domains: uniqueList(lowerCase('email domains')).optional(),
};

export const OAuthProviderSettingsSchema = z.strictObject(oauthProviderFields);
export const OAuthGitHubSchema = z.strictObject({
  ...oauthProviderFields,
  teams: uniqueList(
    refable(z.string().regex(/^[^/\s]+\/[^/\s]+$/, { error: 'teams are written "<org>/<team>"' })),
  ).optional(),
  organizations: uniqueList(nonEmptyText()).optional(),
});

/** One optional key per identity provider; exactly one must be set (checked in semantics). */
export const OAuthProviderSchema = z
  .strictObject({
    github: OAuthGitHubSchema.optional(),
    facebook: OAuthProviderSettingsSchema.optional(),
    microsoft: OAuthProviderSettingsSchema.optional(),
    google: OAuthProviderSettingsSchema.optional(),
    linkedin: OAuthProviderSettingsSchema.optional(),
    gitlab: OAuthProviderSettingsSchema.optional(),
    twitch: OAuthProviderSettingsSchema.optional(),
    amazon: OAuthProviderSettingsSchema.optional(),
  } satisfies Record<(typeof OAUTH_PROVIDERS)[number], z.ZodType>)
  .meta({
    description:
      'Exactly one identity provider. client_id and client_secret go together; scopes need both.',
  });

const sessionFields = {
  options_passthrough: z.boolean().optional(),
  cookie_prefix: refable(ruled(checkCookiePrefix)).optional(),
  inactivity_timeout: uint32().optional(),
  maximum_duration: uint32().optional(),
};

export const OAuthSchema = z
  .strictObject({
    enabled: enabled(),
    provider: OAuthProviderSchema,
    ...sessionFields,
    auth_check_interval: uint32().optional(),
  })
  .meta({ description: 'OAuth module (at most one of oauth, oidc and saml per route).' });

export const SamlSchema = z
  .strictObject({
    enabled: enabled(),
    ...sessionFields,
    idp_metadata: nonEmptyText(),
    force_authn: z.boolean().optional(),
    allow_idp_initiated: z.boolean().optional(),
    authorized_groups: uniqueList(nonEmptyText()).optional(),
    nameid_format: refable(z.enum(NAMEID_FORMATS)).optional(),
  })
  .meta({ description: 'SAML module (at most one of oauth, oidc and saml per route).' });

export const OidcSchema = z
  .strictObject({
    enabled: enabled(),
    ...sessionFields,
    issuer: refable(z.url({ error: 'must be a URL' })),
    client_id: nonEmptyText(),
    client_secret: nonEmptyText(),
    scopes: uniqueList(nonEmptyText()).optional(),
  })
  .meta({ description: 'OpenID Connect module (at most one of oauth, oidc and saml per route).' });

export const WebsocketTcpConverterSchema = z
  .strictObject({ enabled: enabled() })
  .meta({ description: 'Websocket-to-TCP converter module.' });

/** RE2-style patterns (a leading `(?i)` allowed), checked as the server checks them. */
const userAgentPattern = () => refable(ruled(checkUserAgentPattern));

export const UserAgentFilterSchema = z
  .strictObject({
    enabled: enabled(),
    allow: uniqueList(userAgentPattern()).optional(),
    deny: uniqueList(userAgentPattern()).optional(),
  })
  .meta({ description: 'User agent filter module: allow and deny regular expressions.' });
