/**
 * The write shapes of the Edge API as zod schemas: what request bodies may contain, and (through
 * transforms) the normalized form the store keeps, with every server default filled in. Types of
 * stored modules are inferred from here (`z.output`), never written by hand. Issues carry
 * `params.code` when they map to an error code other than ERR_SVC_215 (see validate.ts).
 */
import { z } from 'zod';
import {
  BACKEND_ID_PATTERN,
  checkCircuitBreaker,
  checkCookiePrefix,
  checkHeaderName,
  checkHeaderValue,
  checkHostport,
  checkUserAgentPattern,
  DEFAULT_TLS_MIN_VERSION,
  ERROR_CODE,
  ID_PREFIX,
  LIMITS,
  MATCH_TYPES,
  NAMEID_FORMATS,
  OAUTH_PROVIDERS,
  type OAuthProviderName,
  type ROUTE_MODULES,
  type RuleViolation,
  TERMINATE_AT,
  TLS_VERSIONS,
  utf8Bytes,
  WEBHOOK_PROVIDER_WITHOUT_SECRET,
  WEBHOOK_PROVIDERS,
} from '../spec/api.js';
import { MODULE_DEFAULTS } from '../spec/defaults.js';

/** A strict object whose unknown-field error names every accepted field (ERR_SVC_214). */
function obj<T extends z.core.$ZodLooseShape>(shape: T) {
  const accepted = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; accepted fields: ${accepted}`
        : undefined,
  });
}

const wrongPrefix = { code: ERROR_CODE.wrongIdPrefix };

function prefixedId(prefix: string, what: string) {
  return z.string().refine((v) => v.startsWith(prefix) && v.length > prefix.length, {
    message: `${what} must start with "${prefix}"`,
    params: wrongPrefix,
  });
}

const backendId = z.string().refine((v) => BACKEND_ID_PATTERN.test(v), {
  message: 'backend_id must be a backend ID (bkd..._...)',
  params: wrongPrefix,
});

/** A list of distinct, non-empty strings. */
function uniqueList(item: z.ZodType<string> = z.string().min(1, 'entries must be non-empty')) {
  return z.array(item).refine((list) => new Set(list).size === list.length, {
    message: 'entries must be unique',
  });
}

const uint32 = z.number().int().min(0).max(LIMITS.uint32Max);
const enabled = z.boolean().optional().default(true);

export const descriptionSchema = z.string().refine((v) => utf8Bytes(v) <= LIMITS.descriptionBytes, {
  message: `description must be at most ${LIMITS.descriptionBytes} bytes`,
});
export const metadataSchema = z.string().refine((v) => utf8Bytes(v) <= LIMITS.metadataBytes, {
  message: `metadata must be at most ${LIMITS.metadataBytes} bytes`,
});
/** A zod issue for a rule of the hosted service, carrying its error code (see validate.ts). */
function ruleIssue(
  ctx: z.core.$RefinementCtx,
  violation: RuleViolation | undefined,
  path: PropertyKey[] = [],
): void {
  if (violation === undefined) return;
  ctx.addIssue({
    code: 'custom',
    path,
    message: violation.message,
    params: { code: violation.code },
  });
}

export const hostportsSchema = z
  .array(z.string().superRefine((v, ctx) => ruleIssue(ctx, checkHostport(v))))
  .refine((list) => new Set(list.map((h) => h.toLowerCase())).size === list.length, {
    message: 'hostports must be unique',
  });

// ---- modules -------------------------------------------------------------------------------

export const backendSchema = obj({ enabled, backend_id: backendId });

export const ipRestrictionSchema = obj({
  enabled,
  ip_policy_ids: uniqueList(prefixedId(ID_PREFIX.ipPolicy, 'ip_policy_ids entries')).refine(
    (l) => l.length > 0,
    { message: 'ip_policy_ids needs at least one IP policy ID' },
  ),
});

export const mutualTlsSchema = obj({
  enabled,
  certificate_authority_ids: uniqueList(
    prefixedId(ID_PREFIX.certificateAuthority, 'certificate_authority_ids entries'),
  ),
});

const tlsVersion = z.enum(TLS_VERSIONS);

/** TLS edges: terminate_at may be sent; min_version must be null under `upstream`. */
export const tlsTerminationSchema = obj({
  enabled,
  terminate_at: z.enum(TERMINATE_AT).nullish(),
  min_version: tlsVersion.nullish(),
})
  .refine((m) => !(m.terminate_at === 'upstream' && m.min_version != null), {
    message: 'min_version must be null when terminate_at is "upstream"',
    path: ['min_version'],
  })
  .transform((m) => {
    const terminateAt = m.terminate_at ?? 'edge';
    return {
      enabled: m.enabled,
      terminate_at: terminateAt,
      min_version: terminateAt === 'upstream' ? null : (m.min_version ?? DEFAULT_TLS_MIN_VERSION),
    };
  });

/** HTTPS edges terminate at the edge: only enabled and min_version may be sent. */
export const tlsTerminationAtEdgeSchema = obj({
  enabled,
  min_version: tlsVersion.nullish(),
}).transform(
  (m): z.output<typeof tlsTerminationSchema> => ({
    enabled: m.enabled,
    terminate_at: 'edge',
    min_version: m.min_version ?? DEFAULT_TLS_MIN_VERSION,
  }),
);

export const trafficPolicySchema = obj({ enabled, value: z.string() });

/**
 * Every field the service needs must be in the body (a partial module is refused, 7016-7018),
 * and the module is stored exactly as sent; a left-out `error_threshold_percentage` is stored as
 * 0, as the service does.
 */
export const circuitBreakerSchema = obj({
  enabled,
  tripped_duration: uint32.nullish(),
  rolling_window: uint32.nullish(),
  num_buckets: uint32.max(LIMITS.numBucketsMax).nullish(),
  volume_threshold: uint32.nullish(),
  error_threshold_percentage: z.number().min(0).max(1).nullish(),
})
  .superRefine((m, ctx) => {
    for (const v of checkCircuitBreaker(m)) ruleIssue(ctx, v, [v.field]);
  })
  .transform((m) => ({
    enabled: m.enabled,
    tripped_duration: m.tripped_duration as number,
    rolling_window: m.rolling_window as number,
    num_buckets: m.num_buckets as number,
    volume_threshold: m.volume_threshold as number,
    error_threshold_percentage: m.error_threshold_percentage ?? 0,
  }));

export const compressionSchema = obj({ enabled });
export const websocketTcpConverterSchema = obj({ enabled });

const headerName = z.string().superRefine((v, ctx) => ruleIssue(ctx, checkHeaderName(v)));

function headersSchema(lowerCase: boolean) {
  return obj({
    enabled,
    add: z
      .record(
        z.string(),
        z.string().superRefine((v, ctx) => ruleIssue(ctx, checkHeaderValue(v))),
      )
      .nullish(),
    remove: uniqueList(headerName).nullish(),
  })
    .superRefine((m, ctx) => {
      const names = Object.keys(m.add ?? {});
      for (const name of names) ruleIssue(ctx, checkHeaderName(name), ['add']);
      const lower = names.map((n) => n.toLowerCase());
      if (new Set(lower).size !== lower.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['add'],
          message: 'header names in add must be unique (case-insensitive)',
        });
      }
      const removeLower = (m.remove ?? []).map((n) => n.toLowerCase());
      if (new Set(removeLower).size !== removeLower.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['remove'],
          message: 'header names in remove must be unique (case-insensitive)',
        });
      }
    })
    .transform((m) => {
      const norm = (n: string) => (lowerCase ? n.toLowerCase() : n);
      const add: Record<string, string> = {};
      for (const [name, value] of Object.entries(m.add ?? {})) add[norm(name)] = value;
      return { enabled: m.enabled, add, remove: (m.remove ?? []).map(norm) };
    });
}

export const requestHeadersSchema = headersSchema(false);
/** Response header names come back lower-cased (api-notes). */
export const responseHeadersSchema = headersSchema(true);

const webhookProviders: ReadonlySet<string> = new Set(WEBHOOK_PROVIDERS);

export const webhookVerificationSchema = obj({
  enabled,
  provider: z.string().refine((p) => webhookProviders.has(p.toLowerCase()), {
    message: `provider must be one of: ${WEBHOOK_PROVIDERS.join(', ')}`,
  }),
  secret: z.string().nullish(),
})
  .superRefine((m, ctx) => {
    const provider = m.provider.toLowerCase();
    if (provider === WEBHOOK_PROVIDER_WITHOUT_SECRET && m.secret != null && m.secret !== '') {
      ctx.addIssue({
        code: 'custom',
        path: ['secret'],
        message: `provider "${provider}" does not take a secret`,
      });
    }
    if (provider !== WEBHOOK_PROVIDER_WITHOUT_SECRET && (m.secret == null || m.secret === '')) {
      ctx.addIssue({
        code: 'custom',
        path: ['secret'],
        message: `provider "${provider}" requires a secret`,
      });
    }
  })
  .transform((m) => {
    const provider = m.provider.toLowerCase();
    return {
      enabled: m.enabled,
      provider,
      secret: provider === WEBHOOK_PROVIDER_WITHOUT_SECRET ? null : (m.secret ?? null),
    };
  });

const lowerCaseList = uniqueList().refine((l) => l.every((v) => v === v.toLowerCase()), {
  message: 'entries must be lower-case',
});

const oauthProviderFields = {
  client_id: z.string().min(1).nullish(),
  client_secret: z.string().min(1).nullish(),
  scopes: uniqueList().nullish(),
  email_addresses: lowerCaseList.nullish(),
  email_domains: lowerCaseList.nullish(),
};

function oauthProviderSchema(github: boolean) {
  const shape = github
    ? {
        ...oauthProviderFields,
        teams: uniqueList(
          z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'teams entries must have the form <org>/<team>'),
        ).nullish(),
        organizations: uniqueList().nullish(),
      }
    : oauthProviderFields;
  return obj(shape)
    .superRefine((p, ctx) => {
      if ((p.client_id == null) !== (p.client_secret == null)) {
        ctx.addIssue({
          code: 'custom',
          path: ['client_secret'],
          message: 'client_id and client_secret must be given together',
        });
      }
      if ((p.scopes?.length ?? 0) > 0 && (p.client_id == null || p.client_secret == null)) {
        ctx.addIssue({
          code: 'custom',
          path: ['scopes'],
          message: 'scopes need your own client_id and client_secret',
        });
      }
    })
    .transform((p) => {
      const out: OAuthProviderRead = {
        client_id: p.client_id ?? null,
        client_secret: p.client_secret ?? null,
        scopes: p.scopes ?? [],
        email_addresses: p.email_addresses ?? [],
        email_domains: p.email_domains ?? [],
      };
      if (github) {
        const g = p as { teams?: string[] | null; organizations?: string[] | null };
        out.teams = g.teams ?? [];
        out.organizations = g.organizations ?? [];
      }
      return out;
    });
}

/** The read shape of one OAuth provider object (all fields present; teams/orgs on github only). */
export interface OAuthProviderRead {
  client_id: string | null;
  client_secret: string | null;
  scopes: string[];
  email_addresses: string[];
  email_domains: string[];
  teams?: string[];
  organizations?: string[];
}

const githubProvider = oauthProviderSchema(true).nullish();
const otherProvider = oauthProviderSchema(false).nullish();
const oauthProviderShape = {
  github: githubProvider,
  facebook: otherProvider,
  microsoft: otherProvider,
  google: otherProvider,
  linkedin: otherProvider,
  gitlab: otherProvider,
  twitch: otherProvider,
  amazon: otherProvider,
} satisfies Record<OAuthProviderName, z.ZodType>;

const oauthProvider = obj(oauthProviderShape)
  .refine((p) => OAUTH_PROVIDERS.filter((n) => p[n] != null).length === 1, {
    message: `provider must name exactly one of: ${OAUTH_PROVIDERS.join(', ')}`,
  })
  .transform((p) => {
    const out = {} as Record<OAuthProviderName, OAuthProviderRead | null>;
    for (const name of OAUTH_PROVIDERS) out[name] = p[name] ?? null;
    return out;
  });

const sessionFields = {
  enabled,
  options_passthrough: z.boolean().nullish(),
  cookie_prefix: z
    .string()
    .superRefine((v, ctx) => ruleIssue(ctx, checkCookiePrefix(v)))
    .nullish(),
  inactivity_timeout: uint32.nullish(),
  maximum_duration: uint32.nullish(),
};

/** Session settings with the documented defaults of `module` (src/spec/defaults.ts). */
function sessionDefaults(
  module: 'oauth' | 'oidc' | 'saml',
  m: {
    enabled: boolean;
    options_passthrough?: boolean | null | undefined;
    cookie_prefix?: string | null | undefined;
    inactivity_timeout?: number | null | undefined;
    maximum_duration?: number | null | undefined;
  },
) {
  const d = MODULE_DEFAULTS[module] as Record<string, never>;
  return {
    enabled: m.enabled,
    options_passthrough: m.options_passthrough ?? d.options_passthrough,
    cookie_prefix: m.cookie_prefix ?? d.cookie_prefix,
    // 0 means "the service's default" for the session timers.
    inactivity_timeout: m.inactivity_timeout ?? d.inactivity_timeout,
    maximum_duration: m.maximum_duration ?? d.maximum_duration,
  };
}

export const oauthSchema = obj({
  ...sessionFields,
  provider: oauthProvider,
  auth_check_interval: uint32.nullish(),
}).transform((m) => {
  const { enabled, ...session } = sessionDefaults('oauth', m);
  // Field order of the read shape: enabled, provider, then the session settings.
  return {
    enabled,
    provider: m.provider,
    ...session,
    auth_check_interval:
      m.auth_check_interval ?? (MODULE_DEFAULTS.oauth?.auth_check_interval as number),
  };
});

export const samlSchema = obj({
  ...sessionFields,
  idp_metadata: z.string().refine((v) => v.trim().startsWith('<'), {
    message: 'idp_metadata must be the IdP EntityDescriptor XML',
  }),
  force_authn: z.boolean().nullish(),
  allow_idp_initiated: z.boolean().nullish(),
  authorized_groups: uniqueList().nullish(),
  nameid_format: z.enum(NAMEID_FORMATS).nullish(),
}).transform((m) => ({
  ...sessionDefaults('saml', m),
  idp_metadata: m.idp_metadata,
  force_authn: m.force_authn ?? (MODULE_DEFAULTS.saml?.force_authn as boolean),
  allow_idp_initiated:
    m.allow_idp_initiated ?? (MODULE_DEFAULTS.saml?.allow_idp_initiated as boolean),
  authorized_groups: m.authorized_groups ?? [],
  nameid_format: (m.nameid_format ??
    MODULE_DEFAULTS.saml?.nameid_format) as (typeof NAMEID_FORMATS)[number],
}));

export const oidcSchema = obj({
  ...sessionFields,
  issuer: z.string().refine(isHttpUrl, { message: 'issuer must be an http(s) URL' }),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  scopes: uniqueList().nullish(),
}).transform((m) => ({
  ...sessionDefaults('oidc', m),
  issuer: m.issuer,
  client_id: m.client_id,
  client_secret: m.client_secret,
  scopes: m.scopes ?? [],
}));

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

const regexList = uniqueList(
  z.string().superRefine((v, ctx) => ruleIssue(ctx, checkUserAgentPattern(v))),
);

export const userAgentFilterSchema = obj({
  enabled,
  allow: regexList.nullish(),
  deny: regexList.nullish(),
}).transform((m) => ({ enabled: m.enabled, allow: m.allow ?? [], deny: m.deny ?? [] }));

/** Write schema of each module, per owner. */
export const TLS_EDGE_MODULE_SCHEMAS = {
  backend: backendSchema,
  ip_restriction: ipRestrictionSchema,
  mutual_tls: mutualTlsSchema,
  tls_termination: tlsTerminationSchema,
  traffic_policy: trafficPolicySchema,
};
export const HTTPS_EDGE_MODULE_SCHEMAS = {
  mutual_tls: mutualTlsSchema,
  tls_termination: tlsTerminationAtEdgeSchema,
};
export const ROUTE_MODULE_SCHEMAS = {
  backend: backendSchema,
  ip_restriction: ipRestrictionSchema,
  circuit_breaker: circuitBreakerSchema,
  compression: compressionSchema,
  request_headers: requestHeadersSchema,
  response_headers: responseHeadersSchema,
  webhook_verification: webhookVerificationSchema,
  oauth: oauthSchema,
  saml: samlSchema,
  oidc: oidcSchema,
  websocket_tcp_converter: websocketTcpConverterSchema,
  user_agent_filter: userAgentFilterSchema,
  traffic_policy: trafficPolicySchema,
} satisfies Record<(typeof ROUTE_MODULES)[number], z.ZodType>;

export type TlsEdgeModules = {
  [K in keyof typeof TLS_EDGE_MODULE_SCHEMAS]: z.output<(typeof TLS_EDGE_MODULE_SCHEMAS)[K]> | null;
};
export type HttpsEdgeModules = {
  [K in keyof typeof HTTPS_EDGE_MODULE_SCHEMAS]: z.output<
    (typeof HTTPS_EDGE_MODULE_SCHEMAS)[K]
  > | null;
};
/** The SAML module as stored: the normalized write fields plus the server-made certificate. */
export type StoredSaml = z.output<typeof samlSchema> & { request_signing_certificate_pem: string };
export type RouteModules = {
  [K in keyof typeof ROUTE_MODULE_SCHEMAS]: K extends 'saml'
    ? StoredSaml | null
    : z.output<(typeof ROUTE_MODULE_SCHEMAS)[K]> | null;
};

// ---- resources -----------------------------------------------------------------------------

/** Modules on create: null means "not set". */
function createModules<S extends Record<string, z.ZodType>>(schemas: S) {
  return Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, s.nullish()])) as {
    [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>>;
  };
}
/** Modules on update: absent means unchanged; null is refused (removal is the module's DELETE). */
function updateModules<S extends Record<string, z.ZodType>>(schemas: S) {
  return Object.fromEntries(
    Object.entries(schemas).map(([k, s]) => [
      k,
      s.nullish().refine((v) => v !== null, {
        message: 'a module cannot be removed by PATCH; use DELETE on its sub-resource',
      }),
    ]),
  ) as { [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>> };
}

const edgeScalars = {
  description: descriptionSchema.optional(),
  metadata: metadataSchema.optional(),
  hostports: hostportsSchema.optional(),
};

export const tlsEdgeCreateSchema = obj({
  ...edgeScalars,
  ...createModules(TLS_EDGE_MODULE_SCHEMAS),
});
export const tlsEdgeUpdateSchema = obj({
  id: prefixedId(ID_PREFIX.tlsEdge, 'id').optional(),
  ...edgeScalars,
  ...updateModules(TLS_EDGE_MODULE_SCHEMAS),
});
export const httpsEdgeCreateSchema = obj({
  ...edgeScalars,
  ...createModules(HTTPS_EDGE_MODULE_SCHEMAS),
});
export const httpsEdgeUpdateSchema = obj({
  id: prefixedId(ID_PREFIX.httpsEdge, 'id').optional(),
  ...edgeScalars,
  ...updateModules(HTTPS_EDGE_MODULE_SCHEMAS),
});

const matchSchema = z.string().regex(/^\/\S*$/, 'match must start with "/" and contain no spaces');

export const routeCreateSchema = obj({
  edge_id: prefixedId(ID_PREFIX.httpsEdge, 'edge_id').optional(),
  match_type: z.enum(MATCH_TYPES),
  match: matchSchema,
  description: descriptionSchema.optional(),
  metadata: metadataSchema.optional(),
  ...createModules(ROUTE_MODULE_SCHEMAS),
});
export const routeUpdateSchema = obj({
  edge_id: prefixedId(ID_PREFIX.httpsEdge, 'edge_id').optional(),
  id: prefixedId(ID_PREFIX.route, 'id').optional(),
  match_type: z.enum(MATCH_TYPES).optional(),
  match: matchSchema.optional(),
  description: descriptionSchema.optional(),
  metadata: metadataSchema.optional(),
  ...updateModules(ROUTE_MODULE_SCHEMAS),
});

const botName = z
  .string()
  .min(1, 'name must not be empty')
  .refine((v) => utf8Bytes(v) <= LIMITS.botUserNameBytes, {
    message: `name must be at most ${LIMITS.botUserNameBytes} bytes`,
  });

export const botUserCreateSchema = obj({ name: botName, active: z.boolean().optional() });
export const botUserUpdateSchema = obj({
  id: prefixedId(ID_PREFIX.botUser, 'id').optional(),
  name: botName.optional(),
  active: z.boolean().optional(),
});
