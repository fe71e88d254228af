/**
 * The Edge API's write shapes (request bodies) as zod schemas, strict like the service (an
 * unknown field is its 400 ERR_214), so a caller that validates a body with these fails before
 * the request does. The read shapes are ./schemas.ts, which re-exports these.
 */
import { z } from 'zod';
import { ENDPOINT_BINDINGS } from '../hosted/cloud-endpoints.js';
import { MATCH_TYPES } from '../hosted/edge-api.js';
import { moduleSchemas, optionalEach } from '../hosted/modules/index.js';

/**
 * Module write schemas per owner kind: the bodies of `PUT {owner}/{module}`, from the module
 * definitions (src/hosted/modules/). Strict like the service (an unknown field is its 400
 * ERR_214), so a caller that validates a body with these fails before the request does.
 */
export const MODULE_WRITE_SCHEMAS = moduleSchemas('write');

const w = MODULE_WRITE_SCHEMAS;
const edgeScalarsWrite = {
  description: z.string().optional(),
  metadata: z.string().optional(),
};

/** `POST /edges/tls` and `PATCH /edges/tls/{id}`: every field optional in both. */
export const tlsEdgeWriteSchema = z.strictObject({
  ...edgeScalarsWrite,
  hostports: z.array(z.string()).optional(),
  ...optionalEach(w.tls_edge),
});

/** `POST /edges/https` and `PATCH /edges/https/{id}`. */
export const httpsEdgeWriteSchema = z.strictObject({
  ...edgeScalarsWrite,
  hostports: z.array(z.string()).optional(),
  ...optionalEach(w.https_edge),
});

const routeModulesWrite = optionalEach(w.route);

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
