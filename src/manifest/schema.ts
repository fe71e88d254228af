/**
 * The manifest schemas (zod): the single source of every manifest type, of shape validation and
 * of the published JSON Schema (`edgesync schema`).
 *
 * MODEL CONTRACT (what `loadManifests` returns; later stages build on it, keep it stable):
 *
 * - `DesiredSet = { tlsEdges, httpsEdges, botUsers, cloudEndpoints }`, each array sorted by
 *   `name` (see `CloudEndpointManifest` for the last).
 * - Every resource is plain, JSON-serialisable data (no functions, classes, Maps or undefined
 *   values: an absent optional field is an absent key).
 * - Field names and module shapes are the API's WRITE shapes, snake_case: `backend.backend_id`,
 *   `ip_restriction.ip_policy_ids`, `mutual_tls.certificate_authority_ids`, ... Every module has
 *   `enabled` (defaults to true). A module absent from the manifest is absent from the model
 *   (meaning: not set, to be removed live). Optional fields the server defaults (`min_version`,
 *   `cookie_prefix`, `nameid_format`, ...) are absent when the manifest does not set them.
 * - Strings given as `{ env: NAME }` / `{ file: PATH }` are already resolved to plain strings.
 * - `traffic_policy.value` is always a string: a YAML mapping is turned into compact JSON.
 * - Webhook `provider` is lower-cased (the API matches it case-insensitively).
 * - Edges: `metadata` holds the user's labels only (`{}` when none; never an `edgesync/` key);
 *   `protect` defaults to false; `hostports` to `[]`; `id` (adoption) is optional. How labels are
 *   stored on the live edge is `storedMetadata()` in `./metadata.ts`.
 * - HTTPS edges: `routes` (default `[]`) in manifest order, unique by `match`.
 * - Bot users: `active` defaults to true, `ensure` to `present`.
 * - Each edge, route and bot user carries `source: { file, line, column }` (file relative to the
 *   manifest directory, `/`-separated; 1-based position of the resource's mapping) and
 *   `sensitive: FieldPath[]`: paths of sensitive fields (relative to the resource; a route's
 *   paths are relative to the route and are NOT repeated on its edge), as segments, sorted
 *   (`uniquePaths`): `['oauth', 'provider', 'google', 'client_secret']`,
 *   `['request_headers', 'add', 'X-Key']`; formatted (`formatPath`) only where they are shown.
 *   Sensitive = every `client_secret`, every webhook `secret` and every value read from env/file.
 *   Later stages must mask them and never print or log them.
 */
import { z } from 'zod';
import { ENDPOINT_BINDINGS, ENDPOINT_ID_PREFIX } from '../hosted/cloud-endpoints.js';
import { checkHostport, ID_PREFIX, MATCH_TYPES } from '../hosted/edge-api.js';
import { optionalEach } from '../hosted/modules/index.js';
import type { Declared, KindDefinition } from '../kinds/definition.js';
import { GENERIC_KINDS, kindOfManifest } from '../kinds/index.js';
import { parseEndpointUrl } from './endpoint-url.js';
import type { ExcludedDeclarations } from './excluded.js';
import {
  describedText,
  idPattern,
  isJsonTree,
  KINDS,
  type Kind,
  labels,
  MANIFEST_MODULES,
  manifestName,
  refable,
  ruled,
  type ServiceUserKind,
  suspendFlag,
  textOrMapping,
  uniqueList,
} from './modules.js';
import { fieldPathSchema } from './paths.js';
import { PolicyDocumentSchema } from './policy/schema.js';
import { type PolicyCase, PolicyTestsSchema } from './policy/tests.js';

export * from './modules.js';

// ---- resources --------------------------------------------------------------------------------

const name = manifestName;

const hostports = () => uniqueList(refable(ruled(checkHostport)), { ignoreCase: true }).default([]);

const edgeCommon = {
  name: name(),
  description: describedText().optional(),
  metadata: labels(),
  protect: z.boolean().default(false),
  suspend: suspendFlag(),
};

export const TlsEdgeSchema = z
  .strictObject({
    kind: z.literal('TLSEdge'),
    ...edgeCommon,
    id: refable(
      z.string().regex(idPattern(ID_PREFIX.tlsEdge), {
        error: `must be a TLS edge ID (${ID_PREFIX.tlsEdge}...)`,
      }),
    ).optional(),
    hostports: hostports(),
    ...optionalEach(MANIFEST_MODULES.tls_edge),
  })
  .meta({
    description:
      'A TLS edge, keyed by name. protect: true forbids deleting it; id adopts an existing unowned edge.',
  });

export const RouteSchema = z
  .strictObject({
    match_type: refable(z.enum(MATCH_TYPES)),
    match: refable(z.string().startsWith('/', { error: 'must start with "/"' })),
    description: describedText().optional(),
    metadata: labels(),
    ...optionalEach(MANIFEST_MODULES.route),
  })
  .meta({ description: 'A route of an HTTPS edge, keyed by match (unique per edge).' });

export const HttpsEdgeSchema = z
  .strictObject({
    kind: z.literal('HTTPSEdge'),
    ...edgeCommon,
    id: refable(
      z.string().regex(idPattern(ID_PREFIX.httpsEdge), {
        error: `must be an HTTPS edge ID (${ID_PREFIX.httpsEdge}...)`,
      }),
    ).optional(),
    hostports: hostports(),
    ...optionalEach(MANIFEST_MODULES.https_edge),
    routes: z.array(RouteSchema).default([]),
  })
  .meta({
    description:
      'An HTTPS edge with its routes, keyed by name. protect: true forbids deleting it; id adopts an existing unowned edge.',
  });

/**
 * A service user's document under one of its two `kind:` names (`SERVICE_USER_KINDS`): the same
 * fields, the same records (the service lists them under `/service_users` and `/bot_users`).
 */
function serviceUserSchema<K extends ServiceUserKind>(kind: K, description: string) {
  return z
    .strictObject({
      kind: z.literal(kind),
      name: name(),
      active: z.boolean().default(true),
      /** `absent` deletes the service user; service users are never pruned implicitly. */
      ensure: refable(z.enum(['present', 'absent'])).default('present'),
      suspend: suspendFlag(),
    })
    .meta({ description });
}

export const ServiceUserSchema = serviceUserSchema(
  'ServiceUser',
  'A service user (the identity agents run as), matched by name; ensure: absent deletes it (service users are never pruned implicitly).',
);

export const BotUserSchema = serviceUserSchema(
  'BotUser',
  'The former name of ServiceUser: the same records, the same fields, the same behaviour.',
);

/**
 * A cloud endpoint's policy: a mapping (checked against the action table), or a string holding
 * the same document as YAML or JSON, which the shape phase reads into the mapping before this
 * schema sees it (a string that reaches it could not be read, and was reported).
 */
export const EndpointTrafficPolicySchema = textOrMapping(
  PolicyDocumentSchema.refine(isJsonTree, {
    error: 'must hold JSON values only (no .inf or .nan)',
  }).meta({
    description:
      'The traffic policy: phases to rules, written as a mapping or as a string holding the YAML or JSON document. { env } / { file } references work in its config values.',
  }),
);

export const CloudEndpointSchema = z
  .strictObject({
    kind: z.literal('CloudEndpoint'),
    name: name(),
    id: refable(
      z
        .string()
        .regex(idPattern(ENDPOINT_ID_PREFIX), {
          error: `must be a cloud endpoint ID (${ENDPOINT_ID_PREFIX}...)`,
        })
        .meta({
          description:
            'Adopt this existing cloud endpoint (made by hand, no owner mark) rather than create one.',
        }),
    ).optional(),
    url: z
      .string()
      .superRefine((text, ctx) => {
        const parsed = parseEndpointUrl(text);
        if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
      })
      .meta({
        description:
          'https://host, http://host, tls://host:port or tcp://host:port; compared in its normalised form (lower-case, no default port).',
      }),
    bindings: z
      .array(z.enum(ENDPOINT_BINDINGS))
      .max(1, { error: 'takes at most one binding' })
      .optional()
      .meta({
        description:
          'At most one of public, internal, kubernetes; default internal for a .internal host, else public.',
      }),
    pooling_enabled: z.boolean().default(false).meta({
      description: 'Endpoints on the same URL and binding must all pool (true) to coexist.',
    }),
    description: describedText().optional(),
    metadata: labels(),
    protect: z.boolean().default(false),
    suspend: edgeCommon.suspend,
    traffic_policy: EndpointTrafficPolicySchema,
    tests: PolicyTestsSchema.optional().meta({
      description:
        'Policy tests: requests and the outcome the policy must give them. Run by validate, edgesync test, apply and the daemon; never sent to the API.',
    }),
  })
  .meta({
    description:
      'A cloud endpoint with its traffic policy, keyed by name. protect: true forbids deleting it; id adopts an existing endpoint no owner claims.',
  });

/** One YAML document of a manifest file. */
export const ManifestDocumentSchema = z.discriminatedUnion('kind', [
  TlsEdgeSchema,
  HttpsEdgeSchema,
  ServiceUserSchema,
  BotUserSchema,
  CloudEndpointSchema,
]);

export const SCHEMA_BY_KIND = {
  TLSEdge: TlsEdgeSchema,
  HTTPSEdge: HttpsEdgeSchema,
  ServiceUser: ServiceUserSchema,
  BotUser: BotUserSchema,
  CloudEndpoint: CloudEndpointSchema,
} as const satisfies Record<Kind, z.ZodType>;

/**
 * Every manifest `kind:` the loader accepts: the four above, then those of every kind planned
 * generically (src/kinds/), each validated by its definition's schema.
 */
export const MANIFEST_KIND_NAMES: readonly string[] = [
  ...KINDS,
  ...GENERIC_KINDS.flatMap((k) => (k.schema === undefined ? [] : k.manifestKinds)),
];

/** The schema of a manifest `kind:` value; undefined for one no kind has. */
export function schemaOfKind(kind: string): z.ZodType | undefined {
  if (Object.hasOwn(SCHEMA_BY_KIND, kind)) return SCHEMA_BY_KIND[kind as Kind];
  return genericKindOf(kind)?.schema;
}

/**
 * The definition of a manifest `kind:` planned generically (its document carries its own schema
 * and lands in `DesiredSet.resources`); undefined for the four kinds above.
 */
export function genericKindOf(kind: string): KindDefinition | undefined {
  const found = kindOfManifest(kind);
  return found?.schema === undefined ? undefined : found;
}

// ---- the loaded model -------------------------------------------------------------------------

/** Where a resource was written: file relative to the manifest directory, 1-based position. */
export const SourceSchema = z.strictObject({
  file: z.string(),
  line: z.int(),
  column: z.int(),
});
export type Source = z.infer<typeof SourceSchema>;

/** What the loader adds to every resource and route. */
export const LocatedSchema = z.strictObject({
  source: SourceSchema,
  /** Paths (relative to this resource or route) of values to mask, as segments. */
  sensitive: z.array(fieldPathSchema),
});
export type Located = z.infer<typeof LocatedSchema>;

/** What users write (without `{env}`/`{file}` alternatives: see SecretRef). */

export type RouteManifest = z.output<typeof RouteSchema> & Located;
export type TlsEdgeManifest = z.output<typeof TlsEdgeSchema> & Located;
export type HttpsEdgeManifest = Omit<z.output<typeof HttpsEdgeSchema>, 'routes'> & {
  routes: RouteManifest[];
} & Located;
/** A service user, written `kind: ServiceUser` or `kind: BotUser` (one kind, two names). */
export type BotUserManifest = z.output<typeof ServiceUserSchema | typeof BotUserSchema> & Located;
export type EdgeManifest = TlsEdgeManifest | HttpsEdgeManifest;

/** Module value types, for the plan and apply stages. */

/** The desired state: every valid resource of the manifest directory, each kind sorted by name. */
export interface DesiredSet {
  tlsEdges: TlsEdgeManifest[];
  httpsEdges: HttpsEdgeManifest[];
  botUsers: BotUserManifest[];
  cloudEndpoints: CloudEndpointManifest[];
  /**
   * The declared resources of every kind planned generically (src/kinds/), by kind
   * (`reserved_domain`), each sorted by name. Absent: none.
   */
  resources?: Record<string, Declared[]>;
  /**
   * What the files `--exclude` skipped declare (./excluded.ts): left alone, never deleted.
   * Absent when nothing is excluded.
   */
  excluded?: ExcludedDeclarations;
}

/** The bindings of a cloud endpoint (at most one per endpoint). */
export type EndpointBinding = 'public' | 'internal' | 'kubernetes';

/**
 * A traffic policy as data: the parsed document (phases to rules), `{ env }` / `{ file }`
 * references resolved. Sent as its `JSON.stringify`, compared as data.
 */
export type TrafficPolicyDocument = { readonly [phase: string]: unknown };

/**
 * A `kind: CloudEndpoint` document in the model (keyed by `name`, which the API stores in
 * `metadata` like an edge's). `url` is in the service's normalised form (lower-case scheme and
 * host, no default port for https and http); `bindings` has the service's default filled in
 * (`internal` for a `.internal` host, else `public`); `pooling_enabled` defaults to false;
 * `sensitive` paths point into `traffic_policy`
 * (`['traffic_policy', 'on_http_request', 0, 'actions', 1, 'config', 'client_secret']`).
 */
export interface CloudEndpointManifest extends Located {
  kind: 'CloudEndpoint';
  name: string;
  /** Adopt this live endpoint (by ID) rather than create one. */
  id?: string;
  url: string;
  bindings: EndpointBinding[];
  pooling_enabled: boolean;
  description?: string;
  /** The user's labels (never an `edgesync/` key), stored like an edge's. */
  metadata: Record<string, string>;
  traffic_policy: TrafficPolicyDocument;
  /** Policy tests (kept in Git, never sent), each with where it was written. */
  tests?: (PolicyCase & { source: Source })[];
  protect: boolean;
  suspend?: boolean;
}
