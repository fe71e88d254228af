/**
 * The write shapes of the Edge API as zod schemas: what request bodies may contain, and (through
 * transforms) the normalized form the store keeps, with every server default filled in. Types of
 * stored modules are inferred from here (`z.output`), never written by hand. Issues carry
 * `params.code` when they map to an error code other than ERR_SVC_215 (see validate.ts).
 */
import { z } from 'zod';
import {
  checkHeaderName,
  checkHeaderValue,
  checkUserAgentPattern,
  DEFAULT_TLS_MIN_VERSION,
  ID_PREFIX,
  LIMITS,
  MATCH_TYPES,
  TERMINATE_AT,
  TLS_VERSIONS,
  utf8Bytes,
  WEBHOOK_PROVIDER_WITHOUT_SECRET,
  WEBHOOK_PROVIDERS,
} from '../hosted/edge-api.js';
import {
  checkCircuitBreaker,
  type HttpsEdgeModule,
  type RouteModule,
  type TlsEdgeModule,
} from '../hosted/modules/index.js';
import { oauthSchema, oidcSchema, samlSchema } from './auth-schemas.js';
import {
  backendId,
  descriptionSchema,
  enabled,
  hostportsSchema,
  metadataSchema,
  obj,
  prefixedId,
  ruleIssue,
  uint32,
  uniqueList,
} from './schema-blocks.js';
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

const regexList = uniqueList(
  z.string().superRefine((v, ctx) => ruleIssue(ctx, checkUserAgentPattern(v))),
);

export const userAgentFilterSchema = obj({
  enabled,
  allow: regexList.nullish(),
  deny: regexList.nullish(),
}).transform((m) => ({ enabled: m.enabled, allow: m.allow ?? [], deny: m.deny ?? [] }));

/**
 * Write schema of each module, per owner: the server's own schemas, keyed by the module names
 * (a pure fact) of the one ownership table (src/hosted/modules/index.ts), which the types hold
 * them to: a module missing or extra here does not compile.
 */
export const TLS_EDGE_MODULE_SCHEMAS = {
  backend: backendSchema,
  ip_restriction: ipRestrictionSchema,
  mutual_tls: mutualTlsSchema,
  tls_termination: tlsTerminationSchema,
  traffic_policy: trafficPolicySchema,
} satisfies Record<TlsEdgeModule, z.ZodType>;
export const HTTPS_EDGE_MODULE_SCHEMAS = {
  mutual_tls: mutualTlsSchema,
  tls_termination: tlsTerminationAtEdgeSchema,
} satisfies Record<HttpsEdgeModule, z.ZodType>;
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
} satisfies Record<RouteModule, z.ZodType>;

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

export { samlSchema } from './auth-schemas.js';
