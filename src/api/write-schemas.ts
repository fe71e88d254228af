/**
 * The Edge API's write shapes (request bodies) as zod schemas, strict like the service (an
 * unknown field is its 400 ERR_214), so a caller that validates a body with these fails before
 * the request does. The read shapes are ./schemas.ts, which re-exports these.
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
export type ModuleSchemaMap = {
  readonly tls_edge: Record<TlsEdgeModule, z.ZodType>;
  readonly https_edge: Record<HttpsEdgeModule, z.ZodType>;
  readonly route: Record<RouteModule, z.ZodType>;
};

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

/** The bindings a cloud endpoint may be given (at most one). */
export const ENDPOINT_BINDINGS = ['public', 'internal', 'kubernetes'] as const;

/**
 * `POST /endpoints`: `url` and `traffic_policy` (the document as text) required. edgesync never
 * sends `type` (only `cloud` endpoints are created, the default).
 */
export const endpointCreateSchema = z.strictObject({
  url: z.string(),
  traffic_policy: z.string().min(1),
  description: z.string().optional(),
  metadata: z.string().optional(),
  bindings: z.array(z.enum(ENDPOINT_BINDINGS)).max(1).optional(),
  pooling_enabled: z.boolean().optional(),
});
/** `PATCH /endpoints/{id}`: partial; only the fields that changed are sent. */
export const endpointUpdateSchema = endpointCreateSchema.partial();

export type EndpointCreate = z.input<typeof endpointCreateSchema>;
export type EndpointUpdate = z.input<typeof endpointUpdateSchema>;
export type TlsEdgeWrite = z.input<typeof tlsEdgeWriteSchema>;
export type HttpsEdgeWrite = z.input<typeof httpsEdgeWriteSchema>;
export type RouteCreate = z.input<typeof routeCreateSchema>;
export type RouteUpdate = z.input<typeof routeUpdateSchema>;
export type BotUserCreate = z.input<typeof botUserCreateSchema>;
export type BotUserUpdate = z.input<typeof botUserUpdateSchema>;
