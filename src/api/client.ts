/**
 * The Edge API client (over Node's `http`/`https`). Owns everything about talking to the API:
 * headers, URLs, pagination, response validation at the edge (zod), typed errors, retries and
 * the client-side rate limit. It makes no decision about what a failure means for
 * reconciliation: a 404 on a DELETE is thrown like any other (`isNotFound`), and a create whose
 * outcome is unknown is thrown flagged (`isOutcomeUnknown`) for the applier to look before it
 * creates again.
 *
 * Rooms: ./transport.ts (one call: headers, timeout, retries, rate limit, errors), ./exchange.ts
 * (the HTTP exchange it goes through), ./pagination.ts (lists), ./endpoints.ts (the table of
 * endpoints the typed methods are generated from); ./types.ts holds the client's typed surface
 * and options. This file puts them together.
 *
 * Transport and time are injected (http, sleep, now, random): tests assert exact backoff
 * sequences without sleeping, and integration tests run against the local server over HTTP.
 */
import type { z } from 'zod';
import { EdgesyncError } from '../errors.js';
import { ENDPOINTS, endpointMethod, segment } from './endpoints.js';
import { listAll } from './pagination.js';
import {
  botUserListSchema,
  cloudEndpointListSchema,
  httpsEdgeListSchema,
  MODULE_READ_SCHEMAS,
  type ModuleOwner,
  tlsEdgeListSchema,
} from './schemas.js';
import { createTransport } from './transport.js';
import type { ApiClient, ApiClientOptions, RequestOptions } from './types.js';

/** The module endpoint of an owner: its path template, concrete path and read schema. */
function moduleCall(
  owner: ModuleOwner,
  module: string,
): { route: string; path: string; schema: z.ZodType } {
  const schemas: Readonly<Record<string, z.ZodType>> = MODULE_READ_SCHEMAS[owner.kind];
  const schema = Object.hasOwn(schemas, module) ? schemas[module] : undefined;
  if (schema === undefined) {
    throw new EdgesyncError('ES_INTERNAL', `${owner.kind} has no module "${module}"`);
  }
  switch (owner.kind) {
    case 'tls_edge':
      return {
        route: `/edges/tls/{id}/${module}`,
        path: `/edges/tls/${segment(owner.id)}/${module}`,
        schema,
      };
    case 'https_edge':
      return {
        route: `/edges/https/{id}/${module}`,
        path: `/edges/https/${segment(owner.id)}/${module}`,
        schema,
      };
    case 'route':
      return {
        route: `/edges/https/{edge_id}/routes/{id}/${module}`,
        path: `/edges/https/${segment(owner.edgeId)}/routes/${segment(owner.id)}/${module}`,
        schema,
      };
  }
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const transport = createTransport(options);
  const generated = Object.fromEntries(
    Object.entries(ENDPOINTS).map(([name, endpoint]) => [
      name,
      endpointMethod(transport, endpoint),
    ]),
  ) as Pick<ApiClient, keyof typeof ENDPOINTS>;
  return {
    baseUrl: transport.baseUrl,
    ...generated,
    listTlsEdges: (o) => listAll(transport, '/edges/tls', tlsEdgeListSchema, (p) => p.tls_edges, o),
    listHttpsEdges: (o) =>
      listAll(transport, '/edges/https', httpsEdgeListSchema, (p) => p.https_edges, o),
    listBotUsers: (o) => listAll(transport, '/bot_users', botUserListSchema, (p) => p.bot_users, o),
    listEndpoints: (o) =>
      listAll(transport, '/endpoints', cloudEndpointListSchema, (p) => p.endpoints, o),

    // The overloads' precise return types come from the read schema picked at run time by the
    // same (kind, module) key, which the type system cannot follow: hence `Promise<never>`.
    getModule: async (
      owner: ModuleOwner,
      module: string,
      o: RequestOptions = {},
    ): Promise<never> => {
      const { route, path, schema } = moduleCall(owner, module);
      return transport.send(
        { method: 'GET', route, path, signal: o.signal },
        schema,
      ) as Promise<never>;
    },
    putModule: async (
      owner: ModuleOwner,
      module: string,
      body: unknown,
      o: RequestOptions = {},
    ): Promise<never> => {
      const { route, path, schema } = moduleCall(owner, module);
      return transport.send(
        { method: 'PUT', route, path, body, signal: o.signal },
        schema,
      ) as Promise<never>;
    },
    deleteModule: async (owner, module, o = {}) => {
      const { route, path } = moduleCall(owner, module);
      return transport.sendNoContent({ method: 'DELETE', route, path, signal: o.signal });
    },
    close: () => transport.close(),
  };
}
