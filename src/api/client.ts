/**
 * The Edge API client (over Node's `http`/`https`). Owns everything about talking to the API:
 * headers, URLs, pagination, response validation at the edge (zod), typed errors, retries and
 * the client-side rate limit. It makes no decision about what a failure means for
 * reconciliation: a 404 on a DELETE is thrown like any other (`isNotFound`), and a create whose
 * outcome is unknown is thrown flagged (`isOutcomeUnknown`) for the applier to look before it
 * creates again.
 *
 * Rooms: ./transport.ts (one call: headers, timeout, retries, rate limit, errors), ./http.ts
 * (the HTTP exchange it goes through), ./pagination.ts (lists), ./endpoints.ts (the table of
 * endpoints the typed methods are generated from). This file holds the client's typed surface
 * and puts them together.
 *
 * Transport and time are injected (http, sleep, now, random): tests assert exact backoff
 * sequences without sleeping, and integration tests run against the local server over HTTP.
 */
import type { z } from 'zod';
import { EdgesyncError } from '../errors.js';
import type { Logger } from '../log.js';
import { ENDPOINTS, endpointMethod, segment } from './endpoints.js';
import type { HttpExchange } from './http.js';
import { listAll } from './pagination.js';
import type { Priority, RateLimiter, RateLimitOptions } from './rate-limit.js';
import type { RetryOptions, Sleep } from './retry.js';
import {
  type BotUser,
  type BotUserCreate,
  type BotUserUpdate,
  botUserListSchema,
  type CloudEndpoint,
  cloudEndpointListSchema,
  type EndpointCreate,
  type EndpointUpdate,
  type HttpsEdge,
  type HttpsEdgeWrite,
  type HttpsRoute,
  httpsEdgeListSchema,
  MODULE_READ_SCHEMAS,
  type ModuleName,
  type ModuleOwner,
  type ModuleOwnerKind,
  type ModuleRead,
  type ModuleWrite,
  type RouteCreate,
  type RouteUpdate,
  type TlsEdge,
  type TlsEdgeWrite,
  tlsEdgeListSchema,
} from './schemas.js';
import { createTransport } from './transport.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** One HTTP exchange, as the daemon's metrics see it. */
export interface ResponseInfo {
  readonly method: HttpMethod;
  /** The path template, e.g. `/edges/https/{edge_id}/routes/{id}`: bounded label cardinality. */
  readonly route: string;
  /** HTTP status, or 0 when no answer arrived (network error, timeout). */
  readonly status: number;
  readonly durationMs: number;
  /** 1 for the first try, 2 for the first retry... */
  readonly attempt: number;
}

export interface ApiClientOptions {
  /** Absolute base URL without trailing slash (see `resolveApiConfig`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /**
   * The HTTP exchange (./http.ts); an injected one is not closed by the client. Default:
   * undici with a keep-alive pool and the environment's proxy settings, owned (and closed) by
   * the client.
   */
  readonly http?: HttpExchange | undefined;
  /** Per HTTP exchange (headers and body), not per call with its retries. Default 30 s. */
  readonly timeoutMs?: number | undefined;
  /** Fields given override `DEFAULT_RETRY`; `false` sends every request once. */
  readonly retry?: Partial<RetryOptions> | false | undefined;
  /** Client-side budget: at most `limit` requests per rolling window (./rate-limit.ts). */
  readonly rateLimit?: RateLimitOptions | undefined;
  /** A limiter to share with other clients of the same account (wins over `rateLimit`). */
  readonly rateLimiter?: RateLimiter | undefined;
  /** The priority of this client's requests in the limiter, asked at each request. */
  readonly priority?: (() => Priority) | undefined;
  /** Called for every 429 answer (metrics). */
  readonly onThrottled?: (() => void) | undefined;
  readonly sleep?: Sleep | undefined;
  /** Wall clock in ms (also dates `Retry-After`). Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** In [0, 1). Default `Math.random`. */
  readonly random?: (() => number) | undefined;
  readonly logger?: Logger | undefined;
  readonly onResponse?: ((info: ResponseInfo) => void) | undefined;
  readonly userAgent?: string | undefined;
  /**
   * Masks the known secret values in a text (`ValueMask.apply`): every message the server sends
   * back (an error's `msg`, a non-JSON body) passes through it before it becomes an error, since
   * a server may echo the request body, secrets included.
   */
  readonly mask?: ((text: string) => string) | undefined;
}

export interface RequestOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface ListOptions extends RequestOptions {
  /** Items per page, 1..100; default 100 (the maximum: fewest calls). */
  readonly pageSize?: number | undefined;
}

export interface ListResult<T> {
  readonly items: T[];
  /** HTTP list calls it took (retries of one page not counted). */
  readonly calls: number;
}

type OwnerOf<K extends ModuleOwnerKind> = Extract<ModuleOwner, { readonly kind: K }>;
/** Any module name of any owner, for callers holding module names as data (a serialized plan). */
export type AnyModuleName = ModuleName<'tls_edge'> | ModuleName<'https_edge'> | ModuleName<'route'>;

export interface ApiClient {
  readonly baseUrl: string;

  listTlsEdges(options?: ListOptions): Promise<ListResult<TlsEdge>>;
  listHttpsEdges(options?: ListOptions): Promise<ListResult<HttpsEdge>>;
  listBotUsers(options?: ListOptions): Promise<ListResult<BotUser>>;
  /** Cloud and agent endpoints alike (the caller tells them apart by `type`). */
  listEndpoints(options?: ListOptions): Promise<ListResult<CloudEndpoint>>;

  getTlsEdge(id: string, options?: RequestOptions): Promise<TlsEdge>;
  createTlsEdge(body: TlsEdgeWrite, options?: RequestOptions): Promise<TlsEdge>;
  updateTlsEdge(id: string, body: TlsEdgeWrite, options?: RequestOptions): Promise<TlsEdge>;
  deleteTlsEdge(id: string, options?: RequestOptions): Promise<void>;

  getHttpsEdge(id: string, options?: RequestOptions): Promise<HttpsEdge>;
  createHttpsEdge(body: HttpsEdgeWrite, options?: RequestOptions): Promise<HttpsEdge>;
  updateHttpsEdge(id: string, body: HttpsEdgeWrite, options?: RequestOptions): Promise<HttpsEdge>;
  deleteHttpsEdge(id: string, options?: RequestOptions): Promise<void>;

  getRoute(edgeId: string, routeId: string, options?: RequestOptions): Promise<HttpsRoute>;
  createRoute(edgeId: string, body: RouteCreate, options?: RequestOptions): Promise<HttpsRoute>;
  updateRoute(
    edgeId: string,
    routeId: string,
    body: RouteUpdate,
    options?: RequestOptions,
  ): Promise<HttpsRoute>;
  deleteRoute(edgeId: string, routeId: string, options?: RequestOptions): Promise<void>;

  getModule<K extends ModuleOwnerKind, M extends ModuleName<K>>(
    owner: OwnerOf<K>,
    module: M,
    options?: RequestOptions,
  ): Promise<ModuleRead<K, M>>;
  getModule(owner: ModuleOwner, module: AnyModuleName, options?: RequestOptions): Promise<unknown>;
  /** PUT replaces the module whole (or sets it); answers the module's read shape. */
  putModule<K extends ModuleOwnerKind, M extends ModuleName<K>>(
    owner: OwnerOf<K>,
    module: M,
    body: ModuleWrite<K, M>,
    options?: RequestOptions,
  ): Promise<ModuleRead<K, M>>;
  putModule(
    owner: ModuleOwner,
    module: AnyModuleName,
    body: Readonly<Record<string, unknown>>,
    options?: RequestOptions,
  ): Promise<unknown>;
  /** 204 also when the module was not set. */
  deleteModule(owner: ModuleOwner, module: AnyModuleName, options?: RequestOptions): Promise<void>;

  getBotUser(id: string, options?: RequestOptions): Promise<BotUser>;
  createBotUser(body: BotUserCreate, options?: RequestOptions): Promise<BotUser>;
  updateBotUser(id: string, body: BotUserUpdate, options?: RequestOptions): Promise<BotUser>;
  deleteBotUser(id: string, options?: RequestOptions): Promise<void>;

  getEndpoint(id: string, options?: RequestOptions): Promise<CloudEndpoint>;
  createEndpoint(body: EndpointCreate, options?: RequestOptions): Promise<CloudEndpoint>;
  /** Partial: absent fields are left as they are. */
  updateEndpoint(
    id: string,
    body: EndpointUpdate,
    options?: RequestOptions,
  ): Promise<CloudEndpoint>;
  deleteEndpoint(id: string, options?: RequestOptions): Promise<void>;

  /**
   * Destroys the connections of the exchange the client created, idle or in use (an injected
   * exchange is left alone): a process or test can exit at once.
   */
  close(): Promise<void>;
}

/** One logical request: retried as a whole by `exchange`. */
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
