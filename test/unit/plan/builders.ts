/**
 * Plain builders for the planner's unit tests: manifests (through the manifest schemas, so
 * defaults are filled as the loader fills them) and live records in the exact read shape the
 * local server renders (through its own pure schemas and renderer, so server defaults, Refs and
 * SAML's server-made fields are the real ones).
 */
import {
  type BotUser,
  botUserSchema,
  type CloudEndpoint,
  cloudEndpointSchema,
  type HttpsEdge,
  httpsEdgeSchema,
  type TlsEdge,
  tlsEdgeSchema,
} from '../../../src/api/schemas.js';
import {
  HTTPS_EDGE_MODULES,
  ROUTE_MODULES,
  TLS_EDGE_MODULES,
} from '../../../src/hosted/modules/index.js';
import { storedMetadata, storedRouteMetadata } from '../../../src/manifest/metadata.js';
import type { FieldPath } from '../../../src/manifest/paths.js';
import {
  type BotUserManifest,
  BotUserSchema,
  type CloudEndpointManifest,
  type DesiredSet,
  type HttpsEdgeManifest,
  HttpsEdgeSchema,
  type RouteManifest,
  RouteSchema,
  type TlsEdgeManifest,
  TlsEdgeSchema,
} from '../../../src/manifest/schema.js';
import type { LiveState } from '../../../src/plan/plan.js';
import { EndpointRenderer } from '../../../src/server/endpoints/render.js';
import { parseEndpointUrl } from '../../../src/server/endpoints/url.js';
import type { EndpointRec, HttpsEdgeRec, RouteRec, TlsEdgeRec } from '../../../src/server/model.js';
import { Renderer } from '../../../src/server/render.js';
import {
  HTTPS_EDGE_MODULE_SCHEMAS,
  ROUTE_MODULE_SCHEMAS,
  TLS_EDGE_MODULE_SCHEMAS,
} from '../../../src/server/schemas.js';

const SOURCE = { file: 'edges.yaml', line: 1, column: 1 };
const CREATED = '2024-01-01T00:00:00Z';
export const renderer = new Renderer('https://api.test');

type Loose = Record<string, unknown>;

export function tlsManifest(
  fields: Loose & { name: string },
  sensitive: FieldPath[] = [],
): TlsEdgeManifest {
  return { ...TlsEdgeSchema.parse({ kind: 'TLSEdge', ...fields }), source: SOURCE, sensitive };
}

export function routeManifest(
  fields: Loose & { match: string },
  sensitive: FieldPath[] = [],
): RouteManifest {
  return {
    ...RouteSchema.parse({ match_type: 'path_prefix', ...fields }),
    source: SOURCE,
    sensitive,
  };
}

export function httpsManifest(
  fields: Loose & { name: string; routes?: RouteManifest[] },
  sensitive: FieldPath[] = [],
): HttpsEdgeManifest {
  const { routes = [], ...rest } = fields;
  const parsed = HttpsEdgeSchema.parse({ kind: 'HTTPSEdge', ...rest });
  return { ...parsed, routes, source: SOURCE, sensitive };
}

export function botManifest(fields: Loose & { name: string }): BotUserManifest {
  return { ...BotUserSchema.parse({ kind: 'BotUser', ...fields }), source: SOURCE, sensitive: [] };
}

export function desiredSet(
  resources: {
    tls?: TlsEdgeManifest[];
    https?: HttpsEdgeManifest[];
    bots?: BotUserManifest[];
    endpoints?: CloudEndpointManifest[];
  } = {},
): DesiredSet {
  return {
    tlsEdges: resources.tls ?? [],
    httpsEdges: resources.https ?? [],
    botUsers: resources.bots ?? [],
    cloudEndpoints: resources.endpoints ?? [],
  };
}

export function liveState(
  resources: {
    tls?: TlsEdge[];
    https?: HttpsEdge[];
    bots?: BotUser[];
    endpoints?: CloudEndpoint[];
  } = {},
): LiveState {
  return {
    tlsEdges: resources.tls ?? [],
    httpsEdges: resources.https ?? [],
    botUsers: resources.bots ?? [],
    cloudEndpoints: resources.endpoints ?? [],
  };
}

/** A terminating policy: the smallest document the service takes for an http(s) endpoint. */
export const DENY_POLICY = { on_http_request: [{ actions: [{ type: 'deny' }] }] };

/**
 * A `kind: CloudEndpoint` resource as the loader hands it over: URL normalised, the default
 * binding filled, `pooling_enabled` false and `protect` false unless given.
 */
export function endpointManifest(
  fields: Partial<Omit<CloudEndpointManifest, 'kind' | 'source' | 'sensitive'>> & {
    name: string;
    url: string;
  },
  sensitive: FieldPath[] = [],
): CloudEndpointManifest {
  const url = parseEndpointUrl(fields.url);
  return {
    kind: 'CloudEndpoint',
    bindings: [url.host.endsWith('.internal') ? 'internal' : 'public'],
    pooling_enabled: false,
    metadata: {},
    traffic_policy: DENY_POLICY,
    protect: false,
    ...fields,
    url: url.url,
    source: SOURCE,
    sensitive,
  };
}

let endpointIds = 0;
const endpointRenderer = new EndpointRenderer('https://api.test');

/** A live endpoint exactly as the local server renders it (empty fields omitted). */
export function liveEndpoint(input: {
  id?: string;
  url: string;
  name?: string;
  owner?: string;
  protect?: boolean;
  labels?: Record<string, string>;
  metadata?: string;
  type?: 'cloud' | 'agent';
  traffic_policy?: string;
  description?: string;
  bindings?: ('public' | 'internal' | 'kubernetes')[];
  pooling_enabled?: boolean;
  created_at?: string;
}): CloudEndpoint {
  const url = parseEndpointUrl(input.url);
  endpointIds += 1;
  const rec: EndpointRec = {
    id: input.id ?? `ep_${String(endpointIds).padStart(27, '0')}`,
    type: input.type ?? 'cloud',
    ...url,
    traffic_policy: input.traffic_policy ?? JSON.stringify(DENY_POLICY),
    bindings: input.bindings ?? [url.host.endsWith('.internal') ? 'internal' : 'public'],
    pooling_enabled: input.pooling_enabled ?? false,
    description: input.description ?? '',
    metadata: metadataOf({ id: '', ...input }),
    created_at: input.created_at ?? CREATED,
    updated_at: input.created_at ?? CREATED,
    principal_id: 'usr_1',
  };
  return cloudEndpointSchema.parse(JSON.parse(endpointRenderer.endpoint(rec)));
}

/** Stored (server-normalized) module values from write shapes, as the server would keep them. */
function stored(
  schemas: Record<string, { parse(v: unknown): unknown }>,
  names: readonly string[],
  modules: Loose,
) {
  const out: Loose = {};
  for (const name of names) {
    const value = modules[name];
    if (value === undefined) {
      out[name] = null;
      continue;
    }
    const s = (schemas[name] as { parse(v: unknown): unknown }).parse(value) as Loose;
    out[name] = name === 'saml' ? { ...s, request_signing_certificate_pem: 'PEM' } : s;
  }
  return out;
}

/** A module's read shape exactly as the local server returns it for this write shape. */
export function serverRead(
  owner: 'tls_edge' | 'https_edge' | 'route',
  module: string,
  write: unknown,
): unknown {
  const schemas =
    owner === 'tls_edge'
      ? TLS_EDGE_MODULE_SCHEMAS
      : owner === 'https_edge'
        ? HTTPS_EDGE_MODULE_SCHEMAS
        : ROUTE_MODULE_SCHEMAS;
  const modules = stored(schemas as Record<string, { parse(v: unknown): unknown }>, [module], {
    [module]: write,
  });
  return renderer.moduleValue(module as 'backend', modules, 'edghtsrt_1');
}

interface LiveEdgeInput extends Loose {
  id: string;
  name?: string;
  owner?: string;
  protect?: boolean;
  labels?: Record<string, string>;
  metadata?: string;
  description?: string;
  hostports?: string[];
  created_at?: string;
}

function metadataOf(input: LiveEdgeInput): string {
  if (input.metadata !== undefined) return input.metadata;
  if (input.name === undefined) return '';
  return storedMetadata(input.labels ?? {}, {
    owner: input.owner ?? 'default',
    name: input.name,
    protect: input.protect ?? false,
  });
}

export function liveTls(input: LiveEdgeInput): TlsEdge {
  const rec = {
    id: input.id,
    created_at: input.created_at ?? CREATED,
    description: input.description ?? '',
    metadata: metadataOf(input),
    hostports: input.hostports ?? [],
    modules: stored(TLS_EDGE_MODULE_SCHEMAS, TLS_EDGE_MODULES, input),
  } as unknown as TlsEdgeRec;
  return tlsEdgeSchema.parse(JSON.parse(renderer.tlsEdge(rec)));
}

export interface LiveRouteInput extends Loose {
  id: string;
  match: string;
  match_type?: string;
  description?: string;
  metadata?: string;
}

export function liveHttps(input: LiveEdgeInput & { routes?: LiveRouteInput[] }): HttpsEdge {
  const routes = (input.routes ?? []).map(
    (r) =>
      ({
        edge_id: input.id,
        id: r.id,
        created_at: CREATED,
        match_type: r.match_type ?? 'path_prefix',
        match: r.match,
        description: r.description ?? '',
        metadata: r.metadata ?? '',
        modules: stored(ROUTE_MODULE_SCHEMAS, ROUTE_MODULES, r),
      }) as unknown as RouteRec,
  );
  const rec = {
    id: input.id,
    created_at: input.created_at ?? CREATED,
    description: input.description ?? '',
    metadata: metadataOf(input),
    hostports: input.hostports ?? [],
    modules: stored(HTTPS_EDGE_MODULE_SCHEMAS, HTTPS_EDGE_MODULES, input),
    routes,
  } as unknown as HttpsEdgeRec;
  return httpsEdgeSchema.parse(JSON.parse(renderer.httpsEdge(rec)));
}

export function liveBot(input: {
  id: string;
  name: string;
  active?: boolean;
  created_at?: string;
}): BotUser {
  return botUserSchema.parse({
    id: input.id,
    uri: `https://api.test/bot_users/${input.id}`,
    name: input.name,
    active: input.active ?? true,
    created_at: input.created_at ?? CREATED,
  });
}

function pick(resource: object, names: readonly string[]): Loose {
  const fields = resource as unknown as Loose;
  const out: Loose = {};
  for (const n of names) if (fields[n] !== undefined) out[n] = fields[n];
  return out;
}

/**
 * The live state that applying `desired` produces on the local server: every manifest value
 * through the server's own normalization and rendering. IDs are `<prefix>_<kind><n>`.
 */
export function liveFromDesired(desired: DesiredSet, owner = 'default'): LiveState {
  let n = 0;
  const next = () => {
    n += 1;
    return String(n).padStart(4, '0');
  };
  const own = (m: TlsEdgeManifest | HttpsEdgeManifest) =>
    storedMetadata(m.metadata, { owner, name: m.name, protect: m.protect });
  return liveState({
    tls: desired.tlsEdges.map((m) =>
      liveTls({
        id: `edgtls_${next()}`,
        metadata: own(m),
        hostports: [...m.hostports],
        ...(m.description === undefined ? {} : { description: m.description }),
        ...pick(m, TLS_EDGE_MODULES),
      }),
    ),
    https: desired.httpsEdges.map((m) =>
      liveHttps({
        id: `edghts_${next()}`,
        metadata: own(m),
        hostports: [...m.hostports],
        ...(m.description === undefined ? {} : { description: m.description }),
        ...pick(m, HTTPS_EDGE_MODULES),
        routes: m.routes.map((r) => ({
          id: `edghtsrt_${next()}`,
          match: r.match,
          match_type: r.match_type,
          metadata: storedRouteMetadata(r.metadata),
          ...(r.description === undefined ? {} : { description: r.description }),
          ...pick(r, ROUTE_MODULES),
        })),
      }),
    ),
    bots: desired.botUsers
      .filter((b) => b.ensure === 'present')
      .map((b) => liveBot({ id: `bot_${next()}`, name: b.name, active: b.active })),
  });
}
