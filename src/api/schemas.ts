/**
 * The Edge API's wire shapes as zod schemas: what the service returns (read shapes, validated at
 * the client edge) and what we send (write shapes, typing the client's request bodies). Every
 * type here is inferred from its schema.
 *
 * Tolerance policy for read shapes: records are plain `z.object`s, so fields the hosted service
 * may add later are accepted and dropped (they cannot matter to a diff that does not know them),
 * while a known field that goes missing or changes type fails loudly. In particular a module key
 * is required (null when unset, as the API promises): silently reading a vanished key as "unset"
 * would make every plan try to set the module again, forever. Enum-like strings the service
 * might extend (`terminate_at`, `min_version`, `match_type`) are read as plain strings.
 */
import { z } from 'zod';
import {
  type HttpsEdgeModule,
  LIMITS,
  MATCH_TYPES,
  NAMEID_FORMATS,
  type OAUTH_PROVIDERS,
  type RouteModule,
  TERMINATE_AT,
  TLS_VERSIONS,
  type TlsEdgeModule,
} from '../spec/api.js';

/** Ties the module maps below to the module lists of src/spec/api.ts: no module forgotten. */
type ModuleSchemaMap = {
  readonly tls_edge: Record<TlsEdgeModule, z.ZodType>;
  readonly https_edge: Record<HttpsEdgeModule, z.ZodType>;
  readonly route: Record<RouteModule, z.ZodType>;
};

// ---------------------------------------------------------------------------------------------
// Read shapes (responses)

export const refSchema = z.object({ id: z.string(), uri: z.string() });

const uint32Read = z.number().int().min(0);
const stringList = z.array(z.string());
/** Edges read `hostports` as a list; a null (no hostports) reads as an empty one. */
const hostportsRead = z
  .array(z.string())
  .nullable()
  .transform((v) => v ?? []);

export const backendReadSchema = z.object({ enabled: z.boolean(), backend: refSchema });
export const ipRestrictionReadSchema = z.object({
  enabled: z.boolean(),
  ip_policies: z.array(refSchema),
});
export const mutualTlsReadSchema = z.object({
  enabled: z.boolean(),
  certificate_authorities: z.array(refSchema),
});
export const tlsTerminationReadSchema = z.object({
  enabled: z.boolean(),
  // HTTPS edges terminate at the edge by definition; the service may leave it out there.
  terminate_at: z.string().nullish(),
  min_version: z.string().nullable(),
});
export const trafficPolicyReadSchema = z.object({ enabled: z.boolean(), value: z.string() });
export const circuitBreakerReadSchema = z.object({
  enabled: z.boolean(),
  tripped_duration: uint32Read.nullish(),
  rolling_window: uint32Read.nullish(),
  num_buckets: uint32Read.nullish(),
  volume_threshold: uint32Read.nullish(),
  error_threshold_percentage: z.number().nullish(),
});
export const compressionReadSchema = z.object({ enabled: z.boolean() });
export const headersReadSchema = z.object({
  enabled: z.boolean(),
  add: z.record(z.string(), z.string()).nullish(),
  remove: stringList.nullish(),
});
export const webhookVerificationReadSchema = z.object({
  enabled: z.boolean(),
  provider: z.string(),
  secret: z.string().nullish(),
});

const oauthProviderCommonRead = {
  client_id: z.string().nullish(),
  client_secret: z.string().nullish(),
  scopes: stringList.nullish(),
  email_addresses: stringList.nullish(),
  email_domains: stringList.nullish(),
};
export const oauthProviderReadSchema = z.object(oauthProviderCommonRead);
export const oauthGithubReadSchema = z.object({
  ...oauthProviderCommonRead,
  teams: stringList.nullish(),
  organizations: stringList.nullish(),
});
/** Every provider key is listed, null for the unused ones; a missing key reads as null too. */
export const oauthProvidersReadSchema = z.object({
  github: oauthGithubReadSchema.nullish(),
  facebook: oauthProviderReadSchema.nullish(),
  microsoft: oauthProviderReadSchema.nullish(),
  google: oauthProviderReadSchema.nullish(),
  linkedin: oauthProviderReadSchema.nullish(),
  gitlab: oauthProviderReadSchema.nullish(),
  twitch: oauthProviderReadSchema.nullish(),
  amazon: oauthProviderReadSchema.nullish(),
} satisfies Record<(typeof OAUTH_PROVIDERS)[number], z.ZodType>);

const sessionRead = {
  enabled: z.boolean(),
  options_passthrough: z.boolean().nullish(),
  cookie_prefix: z.string().nullish(),
  inactivity_timeout: uint32Read.nullish(),
  maximum_duration: uint32Read.nullish(),
};
export const oauthReadSchema = z.object({
  ...sessionRead,
  provider: oauthProvidersReadSchema,
  auth_check_interval: uint32Read.nullish(),
});
export const samlReadSchema = z.object({
  ...sessionRead,
  idp_metadata: z.string(),
  force_authn: z.boolean().nullish(),
  allow_idp_initiated: z.boolean().nullish(),
  authorized_groups: stringList.nullish(),
  nameid_format: z.string().nullish(),
  // Server-made: the planner ignores them, but they are part of the promised shape.
  entity_id: z.string(),
  assertion_consumer_service_url: z.string(),
  single_logout_url: z.string(),
  request_signing_certificate_pem: z.string(),
  metadata_url: z.string(),
});
export const oidcReadSchema = z.object({
  ...sessionRead,
  issuer: z.string(),
  client_id: z.string(),
  client_secret: z.string().nullish(),
  scopes: stringList.nullish(),
});
export const websocketTcpConverterReadSchema = z.object({ enabled: z.boolean() });
export const userAgentFilterReadSchema = z.object({
  enabled: z.boolean(),
  allow: stringList.nullish(),
  deny: stringList.nullish(),
});

/** Module read schemas per owner kind, keyed by the module's sub-resource name. */
export const MODULE_READ_SCHEMAS = {
  tls_edge: {
    backend: backendReadSchema,
    ip_restriction: ipRestrictionReadSchema,
    mutual_tls: mutualTlsReadSchema,
    tls_termination: tlsTerminationReadSchema,
    traffic_policy: trafficPolicyReadSchema,
  },
  https_edge: {
    mutual_tls: mutualTlsReadSchema,
    tls_termination: tlsTerminationReadSchema,
  },
  route: {
    backend: backendReadSchema,
    ip_restriction: ipRestrictionReadSchema,
    circuit_breaker: circuitBreakerReadSchema,
    compression: compressionReadSchema,
    request_headers: headersReadSchema,
    response_headers: headersReadSchema,
    webhook_verification: webhookVerificationReadSchema,
    oauth: oauthReadSchema,
    saml: samlReadSchema,
    oidc: oidcReadSchema,
    websocket_tcp_converter: websocketTcpConverterReadSchema,
    user_agent_filter: userAgentFilterReadSchema,
    traffic_policy: trafficPolicyReadSchema,
  },
} as const satisfies ModuleSchemaMap;

const m = MODULE_READ_SCHEMAS;
const recordCommon = {
  id: z.string(),
  uri: z.string(),
  created_at: z.string(),
  description: z.string().nullish(),
  metadata: z.string().nullish(),
};

export const tlsEdgeSchema = z.object({
  ...recordCommon,
  hostports: hostportsRead,
  backend: m.tls_edge.backend.nullable(),
  ip_restriction: m.tls_edge.ip_restriction.nullable(),
  mutual_tls: m.tls_edge.mutual_tls.nullable(),
  tls_termination: m.tls_edge.tls_termination.nullable(),
  traffic_policy: m.tls_edge.traffic_policy.nullable(),
});

export const httpsRouteSchema = z.object({
  ...recordCommon,
  edge_id: z.string(),
  match_type: z.string(),
  match: z.string(),
  backend: m.route.backend.nullable(),
  ip_restriction: m.route.ip_restriction.nullable(),
  circuit_breaker: m.route.circuit_breaker.nullable(),
  compression: m.route.compression.nullable(),
  request_headers: m.route.request_headers.nullable(),
  response_headers: m.route.response_headers.nullable(),
  webhook_verification: m.route.webhook_verification.nullable(),
  oauth: m.route.oauth.nullable(),
  saml: m.route.saml.nullable(),
  oidc: m.route.oidc.nullable(),
  websocket_tcp_converter: m.route.websocket_tcp_converter.nullable(),
  user_agent_filter: m.route.user_agent_filter.nullable(),
  traffic_policy: m.route.traffic_policy.nullable(),
});

export const httpsEdgeSchema = z.object({
  ...recordCommon,
  hostports: hostportsRead,
  mutual_tls: m.https_edge.mutual_tls.nullable(),
  tls_termination: m.https_edge.tls_termination.nullable(),
  routes: z.array(httpsRouteSchema),
});

export const botUserSchema = z.object({
  id: z.string(),
  uri: z.string(),
  name: z.string(),
  active: z.boolean(),
  created_at: z.string(),
});

const page = { uri: z.string(), next_page_uri: z.string().nullable() };
export const tlsEdgeListSchema = z.object({ tls_edges: z.array(tlsEdgeSchema), ...page });
export const httpsEdgeListSchema = z.object({ https_edges: z.array(httpsEdgeSchema), ...page });
export const botUserListSchema = z.object({ bot_users: z.array(botUserSchema), ...page });

/** The error body. Every field is loose: a broken error body must never hide the status. */
export const apiErrorBodySchema = z.object({
  error_code: z.string().optional().catch(undefined),
  status_code: z.number().optional().catch(undefined),
  msg: z.string().optional().catch(undefined),
  details: z
    .object({ operation_id: z.string().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

export type Ref = z.infer<typeof refSchema>;
export type TlsEdge = z.infer<typeof tlsEdgeSchema>;
export type HttpsEdge = z.infer<typeof httpsEdgeSchema>;
export type HttpsRoute = z.infer<typeof httpsRouteSchema>;
export type BotUser = z.infer<typeof botUserSchema>;
export type TlsEdgeList = z.infer<typeof tlsEdgeListSchema>;
export type HttpsEdgeList = z.infer<typeof httpsEdgeListSchema>;
export type BotUserList = z.infer<typeof botUserListSchema>;
export type ApiErrorBody = z.infer<typeof apiErrorBodySchema>;

export type BackendRead = z.infer<typeof backendReadSchema>;
export type IpRestrictionRead = z.infer<typeof ipRestrictionReadSchema>;
export type MutualTlsRead = z.infer<typeof mutualTlsReadSchema>;
export type TlsTerminationRead = z.infer<typeof tlsTerminationReadSchema>;
export type TrafficPolicyRead = z.infer<typeof trafficPolicyReadSchema>;
export type CircuitBreakerRead = z.infer<typeof circuitBreakerReadSchema>;
export type CompressionRead = z.infer<typeof compressionReadSchema>;
export type HeadersRead = z.infer<typeof headersReadSchema>;
export type WebhookVerificationRead = z.infer<typeof webhookVerificationReadSchema>;
export type OAuthProviderRead = z.infer<typeof oauthProviderReadSchema>;
export type OAuthGithubRead = z.infer<typeof oauthGithubReadSchema>;
export type OAuthProvidersRead = z.infer<typeof oauthProvidersReadSchema>;
export type OAuthRead = z.infer<typeof oauthReadSchema>;
export type SamlRead = z.infer<typeof samlReadSchema>;
export type OidcRead = z.infer<typeof oidcReadSchema>;
export type WebsocketTcpConverterRead = z.infer<typeof websocketTcpConverterReadSchema>;
export type UserAgentFilterRead = z.infer<typeof userAgentFilterReadSchema>;

// ---------------------------------------------------------------------------------------------
// Write shapes (request bodies). Strict like the service (an unknown field is its 400 ERR_214),
// so a caller that validates a body with these fails before the request does.

const uint32 = z.number().int().min(0).max(LIMITS.uint32Max);
const enabledWrite = { enabled: z.boolean().optional() };

export const backendWriteSchema = z.strictObject({ ...enabledWrite, backend_id: z.string() });
export const ipRestrictionWriteSchema = z.strictObject({
  ...enabledWrite,
  ip_policy_ids: z.array(z.string()),
});
export const mutualTlsWriteSchema = z.strictObject({
  ...enabledWrite,
  certificate_authority_ids: z.array(z.string()),
});
/** TLS edges: `EndpointTLSTermination`. */
export const tlsTerminationWriteSchema = z.strictObject({
  ...enabledWrite,
  terminate_at: z.enum(TERMINATE_AT).optional(),
  min_version: z.enum(TLS_VERSIONS).nullable().optional(),
});
/** HTTPS edges: `EndpointTLSTerminationAtEdge` (no `terminate_at`). */
export const tlsTerminationAtEdgeWriteSchema = z.strictObject({
  ...enabledWrite,
  min_version: z.enum(TLS_VERSIONS).nullable().optional(),
});
export const trafficPolicyWriteSchema = z.strictObject({ ...enabledWrite, value: z.string() });
export const circuitBreakerWriteSchema = z.strictObject({
  ...enabledWrite,
  tripped_duration: uint32.optional(),
  rolling_window: uint32.optional(),
  num_buckets: uint32.max(LIMITS.numBucketsMax).optional(),
  volume_threshold: uint32.optional(),
  error_threshold_percentage: z.number().min(0).max(1).optional(),
});
export const compressionWriteSchema = z.strictObject({ ...enabledWrite });
export const headersWriteSchema = z.strictObject({
  ...enabledWrite,
  add: z.record(z.string(), z.string()).optional(),
  remove: z.array(z.string()).optional(),
});
export const webhookVerificationWriteSchema = z.strictObject({
  ...enabledWrite,
  provider: z.string(),
  secret: z.string().optional(),
});

const oauthProviderCommonWrite = {
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  email_addresses: z.array(z.string()).optional(),
  email_domains: z.array(z.string()).optional(),
};
export const oauthProviderWriteSchema = z.strictObject(oauthProviderCommonWrite);
export const oauthGithubWriteSchema = z.strictObject({
  ...oauthProviderCommonWrite,
  teams: z.array(z.string()).optional(),
  organizations: z.array(z.string()).optional(),
});
export const oauthProvidersWriteSchema = z.strictObject({
  github: oauthGithubWriteSchema.optional(),
  facebook: oauthProviderWriteSchema.optional(),
  microsoft: oauthProviderWriteSchema.optional(),
  google: oauthProviderWriteSchema.optional(),
  linkedin: oauthProviderWriteSchema.optional(),
  gitlab: oauthProviderWriteSchema.optional(),
  twitch: oauthProviderWriteSchema.optional(),
  amazon: oauthProviderWriteSchema.optional(),
} satisfies Record<(typeof OAUTH_PROVIDERS)[number], z.ZodType>);

const sessionWrite = {
  ...enabledWrite,
  options_passthrough: z.boolean().optional(),
  cookie_prefix: z.string().optional(),
  inactivity_timeout: uint32.optional(),
  maximum_duration: uint32.optional(),
};
export const oauthWriteSchema = z.strictObject({
  ...sessionWrite,
  provider: oauthProvidersWriteSchema,
  auth_check_interval: uint32.optional(),
});
export const samlWriteSchema = z.strictObject({
  ...sessionWrite,
  idp_metadata: z.string(),
  force_authn: z.boolean().optional(),
  allow_idp_initiated: z.boolean().optional(),
  authorized_groups: z.array(z.string()).optional(),
  nameid_format: z.enum(NAMEID_FORMATS).optional(),
});
export const oidcWriteSchema = z.strictObject({
  ...sessionWrite,
  issuer: z.string(),
  client_id: z.string(),
  client_secret: z.string(),
  scopes: z.array(z.string()).optional(),
});
export const websocketTcpConverterWriteSchema = z.strictObject({ ...enabledWrite });
export const userAgentFilterWriteSchema = z.strictObject({
  ...enabledWrite,
  allow: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
});

/** Module write schemas per owner kind: the bodies of `PUT {owner}/{module}`. */
export const MODULE_WRITE_SCHEMAS = {
  tls_edge: {
    backend: backendWriteSchema,
    ip_restriction: ipRestrictionWriteSchema,
    mutual_tls: mutualTlsWriteSchema,
    tls_termination: tlsTerminationWriteSchema,
    traffic_policy: trafficPolicyWriteSchema,
  },
  https_edge: {
    mutual_tls: mutualTlsWriteSchema,
    tls_termination: tlsTerminationAtEdgeWriteSchema,
  },
  route: {
    backend: backendWriteSchema,
    ip_restriction: ipRestrictionWriteSchema,
    circuit_breaker: circuitBreakerWriteSchema,
    compression: compressionWriteSchema,
    request_headers: headersWriteSchema,
    response_headers: headersWriteSchema,
    webhook_verification: webhookVerificationWriteSchema,
    oauth: oauthWriteSchema,
    saml: samlWriteSchema,
    oidc: oidcWriteSchema,
    websocket_tcp_converter: websocketTcpConverterWriteSchema,
    user_agent_filter: userAgentFilterWriteSchema,
    traffic_policy: trafficPolicyWriteSchema,
  },
} as const satisfies ModuleSchemaMap;

const w = MODULE_WRITE_SCHEMAS;
const edgeScalarsWrite = {
  description: z.string().optional(),
  metadata: z.string().optional(),
};

/** `POST /edges/tls` and `PATCH /edges/tls/{id}`: every field optional in both. */
export const tlsEdgeWriteSchema = z.strictObject({
  ...edgeScalarsWrite,
  hostports: z.array(z.string()).optional(),
  backend: w.tls_edge.backend.optional(),
  ip_restriction: w.tls_edge.ip_restriction.optional(),
  mutual_tls: w.tls_edge.mutual_tls.optional(),
  tls_termination: w.tls_edge.tls_termination.optional(),
  traffic_policy: w.tls_edge.traffic_policy.optional(),
});

/** `POST /edges/https` and `PATCH /edges/https/{id}`. */
export const httpsEdgeWriteSchema = z.strictObject({
  ...edgeScalarsWrite,
  hostports: z.array(z.string()).optional(),
  mutual_tls: w.https_edge.mutual_tls.optional(),
  tls_termination: w.https_edge.tls_termination.optional(),
});

const routeModulesWrite = {
  backend: w.route.backend.optional(),
  ip_restriction: w.route.ip_restriction.optional(),
  circuit_breaker: w.route.circuit_breaker.optional(),
  compression: w.route.compression.optional(),
  request_headers: w.route.request_headers.optional(),
  response_headers: w.route.response_headers.optional(),
  webhook_verification: w.route.webhook_verification.optional(),
  oauth: w.route.oauth.optional(),
  saml: w.route.saml.optional(),
  oidc: w.route.oidc.optional(),
  websocket_tcp_converter: w.route.websocket_tcp_converter.optional(),
  user_agent_filter: w.route.user_agent_filter.optional(),
  traffic_policy: w.route.traffic_policy.optional(),
};

/** `POST /edges/https/{edge_id}/routes`: `match_type` and `match` required. */
export const routeCreateSchema = z.strictObject({
  ...edgeScalarsWrite,
  match_type: z.enum(MATCH_TYPES),
  match: z.string(),
  ...routeModulesWrite,
});
/** `PATCH /edges/https/{edge_id}/routes/{id}`: all optional. */
export const routeUpdateSchema = routeCreateSchema.partial();

export const botUserCreateSchema = z.strictObject({
  name: z.string(),
  active: z.boolean().optional(),
});
export const botUserUpdateSchema = botUserCreateSchema.partial();

export type TlsEdgeWrite = z.input<typeof tlsEdgeWriteSchema>;
export type HttpsEdgeWrite = z.input<typeof httpsEdgeWriteSchema>;
export type RouteCreate = z.input<typeof routeCreateSchema>;
export type RouteUpdate = z.input<typeof routeUpdateSchema>;
export type BotUserCreate = z.input<typeof botUserCreateSchema>;
export type BotUserUpdate = z.input<typeof botUserUpdateSchema>;

export type BackendWrite = z.input<typeof backendWriteSchema>;
export type IpRestrictionWrite = z.input<typeof ipRestrictionWriteSchema>;
export type MutualTlsWrite = z.input<typeof mutualTlsWriteSchema>;
export type TlsTerminationWrite = z.input<typeof tlsTerminationWriteSchema>;
export type TlsTerminationAtEdgeWrite = z.input<typeof tlsTerminationAtEdgeWriteSchema>;
export type TrafficPolicyWrite = z.input<typeof trafficPolicyWriteSchema>;
export type CircuitBreakerWrite = z.input<typeof circuitBreakerWriteSchema>;
export type CompressionWrite = z.input<typeof compressionWriteSchema>;
export type HeadersWrite = z.input<typeof headersWriteSchema>;
export type WebhookVerificationWrite = z.input<typeof webhookVerificationWriteSchema>;
export type OAuthWrite = z.input<typeof oauthWriteSchema>;
export type SamlWrite = z.input<typeof samlWriteSchema>;
export type OidcWrite = z.input<typeof oidcWriteSchema>;
export type WebsocketTcpConverterWrite = z.input<typeof websocketTcpConverterWriteSchema>;
export type UserAgentFilterWrite = z.input<typeof userAgentFilterWriteSchema>;

// ---------------------------------------------------------------------------------------------
// Module owners: which sub-resources exist where, and their typed bodies.

export type ModuleOwnerKind = keyof typeof MODULE_WRITE_SCHEMAS;
/** The edge or route a module hangs off. */
export type ModuleOwner =
  | { readonly kind: 'tls_edge'; readonly id: string }
  | { readonly kind: 'https_edge'; readonly id: string }
  | { readonly kind: 'route'; readonly edgeId: string; readonly id: string };
export type ModuleName<K extends ModuleOwnerKind> = keyof (typeof MODULE_WRITE_SCHEMAS)[K] & string;
export type ModuleWrite<K extends ModuleOwnerKind, M extends ModuleName<K>> = z.input<
  (typeof MODULE_WRITE_SCHEMAS)[K][M] & z.ZodType
>;
export type ModuleRead<K extends ModuleOwnerKind, M extends ModuleName<K>> = z.output<
  (typeof MODULE_READ_SCHEMAS)[K][M & keyof (typeof MODULE_READ_SCHEMAS)[K]] & z.ZodType
>;
