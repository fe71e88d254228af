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
 * The `uri` of records and Refs is not read either: nothing uses it (an ID and the base URL
 * locate everything), and at 10,000 edges it was a quarter of the snapshot's memory.
 */
import { z } from 'zod';
import { moduleSchemas, nullableEach } from '../hosted/modules/index.js';
import type { MODULE_WRITE_SCHEMAS } from './write-schemas.js';

export * from './account-schemas.js';
export * from './write-schemas.js';

// ---------------------------------------------------------------------------------------------
// Read shapes (responses)

/** Edges read `hostports` as a list; a null (no hostports) reads as an empty one. */
const hostportsRead = z
  .array(z.string())
  .nullable()
  .transform((v) => v ?? []);

/** Module read schemas per owner kind, keyed by the module's sub-resource name. */
export const MODULE_READ_SCHEMAS = moduleSchemas('read');

const m = MODULE_READ_SCHEMAS;
const recordCommon = {
  id: z.string(),
  created_at: z.string(),
  description: z.string().nullish(),
  metadata: z.string().nullish(),
};

export const tlsEdgeSchema = z.object({
  ...recordCommon,
  hostports: hostportsRead,
  ...nullableEach(m.tls_edge),
});

export const httpsRouteSchema = z.object({
  ...recordCommon,
  edge_id: z.string(),
  match_type: z.string(),
  match: z.string(),
  ...nullableEach(m.route),
});

export const httpsEdgeSchema = z.object({
  ...recordCommon,
  hostports: hostportsRead,
  ...nullableEach(m.https_edge),
  routes: z.array(httpsRouteSchema),
});

export const botUserSchema = z.object({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  created_at: z.string(),
});

/**
 * A cloud endpoint. The service omits empty fields rather than sending null: an unset
 * description, metadata or binding list is absent, and an agent endpoint may have no policy.
 * `type` and the binding names are read as plain strings (the service may add more).
 */
export const cloudEndpointSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  type: z.string(),
  url: z.string(),
  traffic_policy: z.string().optional(),
  description: z.string().optional(),
  metadata: z.string().optional(),
  bindings: z.array(z.string()).optional(),
  pooling_enabled: z.boolean().optional(),
  /** The reserved domain the endpoint's host matched (public http, https and tls only). */
  domain: z.object({ id: z.string() }).optional(),
});

const page = { uri: z.string(), next_page_uri: z.string().nullable() };
// Lists are compiled (`z.compile`: generated code, with zod's runtime parser as its fallback, so
// results and issues are zod's own): 10,000 edges are checked 0.1 s faster.
export const tlsEdgeListSchema = z.compile(
  z.object({ tls_edges: z.array(tlsEdgeSchema), ...page }),
);
export const httpsEdgeListSchema = z.compile(
  z.object({ https_edges: z.array(httpsEdgeSchema), ...page }),
);
export const botUserListSchema = z.object({ bot_users: z.array(botUserSchema), ...page });
/** The one endpoint type edgesync creates, changes and deletes. */
const MANAGED_ENDPOINT_TYPE = 'cloud';

/**
 * An endpoint of a type edgesync does not manage (`agent`, `edge`, any the service adds), as a
 * list returns it: read only for the URL and binding it may hold (a cloud endpoint cannot take
 * them), and tolerantly, since its other fields are that type's business. The API reference's
 * own list shows an `edge` entry without a `url`.
 */
const unmanagedEndpointSchema = z.object({
  id: z.string(),
  type: z.string(),
  url: z.string().optional().catch(undefined),
  created_at: z.string().optional().catch(undefined),
  bindings: z.array(z.string()).optional().catch(undefined),
  pooling_enabled: z.boolean().optional().catch(undefined),
});

/**
 * A list's entries: cloud endpoints read strictly (a broken one fails loudly, at its index),
 * the others as above. One that holds no URL claims nothing and is left out; the rest are
 * listed for the plan, which ignores them but for the URLs they hold.
 */
const endpointEntries = z.array(z.unknown()).transform((entries, ctx) => {
  const out: CloudEndpoint[] = [];
  entries.forEach((entry, i) => {
    const type = (entry as { type?: unknown } | null)?.type;
    const managed = type === MANAGED_ENDPOINT_TYPE;
    const read = (managed ? cloudEndpointSchema : unmanagedEndpointSchema).safeParse(entry);
    if (!read.success) {
      for (const issue of read.error.issues) {
        ctx.addIssue({ code: 'custom', message: issue.message, path: [i, ...issue.path] });
      }
      return;
    }
    const { url, created_at } = read.data;
    if (url === undefined) return;
    // An unmanaged entry's creation time is never compared; absent, it reads as unknown.
    out.push({ ...read.data, url, created_at: created_at ?? '' });
  });
  return out;
});

export const cloudEndpointListSchema = z.compile(z.object({ endpoints: endpointEntries, ...page }));

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

export type TlsEdge = z.infer<typeof tlsEdgeSchema>;
export type HttpsEdge = z.infer<typeof httpsEdgeSchema>;
export type HttpsRoute = z.infer<typeof httpsRouteSchema>;
export type BotUser = z.infer<typeof botUserSchema>;
export type CloudEndpoint = z.infer<typeof cloudEndpointSchema>;
export type ApiErrorBody = z.infer<typeof apiErrorBodySchema>;

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
