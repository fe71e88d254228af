/**
 * The endpoint table: every typed client method that maps to one fixed path template, with its
 * HTTP method and the schema of its answer. `createApiClient` generates the methods from it:
 * path parameters first (in template order), then the body for POST/PATCH, then the options.
 * `satisfies` ties every entry to a method of `ApiClient`, so a method missing from the table or
 * an entry without a method fails the typecheck. Lists and modules are not in the table: lists
 * paginate (./pagination.ts) and module calls pick their schema by owner and module name.
 */
import type { z } from 'zod';
import { EdgesyncError } from '../errors.js';
import type { ApiClient, HttpMethod, RequestOptions } from './client.js';
import {
  botUserSchema,
  cloudEndpointSchema,
  httpsEdgeSchema,
  httpsRouteSchema,
  tlsEdgeSchema,
} from './schemas.js';
import type { Transport } from './transport.js';

export interface Endpoint {
  readonly method: HttpMethod;
  /** Path template; each `{param}` is filled, in order, from the method's leading arguments. */
  readonly route: string;
  /** Schema of the answer; absent for endpoints answering 204. */
  readonly schema?: z.ZodType;
}

const TLS_EDGE = '/edges/tls/{id}';
const HTTPS_EDGE = '/edges/https/{id}';
const ROUTES = '/edges/https/{edge_id}/routes';
const ROUTE = '/edges/https/{edge_id}/routes/{id}';
const BOT_USER = '/bot_users/{id}';
const ENDPOINT = '/endpoints/{id}';

type Generated = Exclude<
  keyof ApiClient,
  | 'baseUrl'
  | 'close'
  | 'listTlsEdges'
  | 'listHttpsEdges'
  | 'listBotUsers'
  | 'listEndpoints'
  | 'getModule'
  | 'putModule'
  | 'deleteModule'
>;

export const ENDPOINTS = {
  getTlsEdge: { method: 'GET', route: TLS_EDGE, schema: tlsEdgeSchema },
  createTlsEdge: { method: 'POST', route: '/edges/tls', schema: tlsEdgeSchema },
  updateTlsEdge: { method: 'PATCH', route: TLS_EDGE, schema: tlsEdgeSchema },
  deleteTlsEdge: { method: 'DELETE', route: TLS_EDGE },
  getHttpsEdge: { method: 'GET', route: HTTPS_EDGE, schema: httpsEdgeSchema },
  createHttpsEdge: { method: 'POST', route: '/edges/https', schema: httpsEdgeSchema },
  updateHttpsEdge: { method: 'PATCH', route: HTTPS_EDGE, schema: httpsEdgeSchema },
  deleteHttpsEdge: { method: 'DELETE', route: HTTPS_EDGE },
  getRoute: { method: 'GET', route: ROUTE, schema: httpsRouteSchema },
  createRoute: { method: 'POST', route: ROUTES, schema: httpsRouteSchema },
  updateRoute: { method: 'PATCH', route: ROUTE, schema: httpsRouteSchema },
  deleteRoute: { method: 'DELETE', route: ROUTE },
  getBotUser: { method: 'GET', route: BOT_USER, schema: botUserSchema },
  createBotUser: { method: 'POST', route: '/bot_users', schema: botUserSchema },
  updateBotUser: { method: 'PATCH', route: BOT_USER, schema: botUserSchema },
  deleteBotUser: { method: 'DELETE', route: BOT_USER },
  getEndpoint: { method: 'GET', route: ENDPOINT, schema: cloudEndpointSchema },
  createEndpoint: { method: 'POST', route: '/endpoints', schema: cloudEndpointSchema },
  updateEndpoint: { method: 'PATCH', route: ENDPOINT, schema: cloudEndpointSchema },
  deleteEndpoint: { method: 'DELETE', route: ENDPOINT },
} as const satisfies Record<Generated, Endpoint>;

/** A path segment from an ID: never empty (that would address the collection instead). */
export function segment(id: string): string {
  if (id === '') throw new EdgesyncError('ES_INTERNAL', 'empty resource ID in an API path');
  return encodeURIComponent(id);
}

/** The client method of one endpoint: `(...params, body?, options?) => answer`. */
export function endpointMethod(
  transport: Transport,
  endpoint: Endpoint,
): (...args: unknown[]) => Promise<unknown> {
  const params = endpoint.route.match(/\{[^}]+\}/g)?.length ?? 0;
  const hasBody = endpoint.method === 'POST' || endpoint.method === 'PATCH';
  return async (...args: unknown[]) => {
    let i = 0;
    const path = endpoint.route.replace(/\{[^}]+\}/g, () => segment(String(args[i++])));
    const body = hasBody ? args[params] : undefined;
    const options = (args[params + (hasBody ? 1 : 0)] ?? {}) as RequestOptions;
    const call = {
      method: endpoint.method,
      route: endpoint.route,
      path,
      signal: options.signal,
      ...(hasBody ? { body } : {}),
    };
    if (endpoint.schema === undefined) return transport.sendNoContent(call);
    return transport.send(call, endpoint.schema);
  };
}
