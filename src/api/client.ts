/**
 * The Edge API client (undici). Owns everything about talking to the API: headers, URLs,
 * pagination, response validation at the edge (zod), typed errors, retries and the client-side
 * rate limit. It makes no decision about what a failure means for reconciliation: a 404 on a
 * DELETE is thrown like any other (`isNotFound`), and a create whose outcome is unknown is thrown
 * flagged (`isOutcomeUnknown`) for the applier to look before it creates again.
 *
 * Transport and time are injected (dispatcher, sleep, now, random): tests assert exact backoff
 * sequences without sleeping, and integration tests run against the local server over HTTP.
 */
import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher, request } from 'undici';
import type { z } from 'zod';
import {
  ApiError,
  ApiResponseError,
  EdgesyncError,
  errorMessage,
  NetworkError,
  TimeoutError,
} from '../errors.js';
import type { Logger } from '../log.js';
import { API_VERSION, LIMITS } from '../spec/api.js';
import { normalizeBaseUrl } from './config.js';
import { createTokenBucket, type RateLimitOptions, type TokenBucket } from './rate-limit.js';
import {
  type AttemptFailure,
  abortableSleep,
  abortedError,
  backoffDelay,
  classifyFailure,
  DEFAULT_RETRY,
  mayHaveBeenPerformed,
  parseRetryAfter,
  type RetryOptions,
  realSleep,
  requestNotSent,
  type Sleep,
  throwIfAborted,
} from './retry.js';
import {
  type ApiErrorBody,
  apiErrorBodySchema,
  type BotUser,
  type BotUserCreate,
  type BotUserUpdate,
  botUserListSchema,
  botUserSchema,
  type HttpsEdge,
  type HttpsEdgeWrite,
  type HttpsRoute,
  httpsEdgeListSchema,
  httpsEdgeSchema,
  httpsRouteSchema,
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
  tlsEdgeSchema,
} from './schemas.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_USER_AGENT = 'edgesync';

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
  /** Default: an undici `Agent` with keep-alive, owned (and closed) by the client. */
  readonly dispatcher?: Dispatcher | undefined;
  /** Per HTTP exchange (headers and body), not per call with its retries. Default 30 s. */
  readonly timeoutMs?: number | undefined;
  /** Fields given override `DEFAULT_RETRY`; `false` sends every request once. */
  readonly retry?: Partial<RetryOptions> | false | undefined;
  /** Client-side token bucket shared by every request of this client. */
  readonly rateLimit?: RateLimitOptions | undefined;
  readonly sleep?: Sleep | undefined;
  /** Wall clock in ms (also dates `Retry-After`). Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** In [0, 1). Default `Math.random`. */
  readonly random?: (() => number) | undefined;
  readonly logger?: Logger | undefined;
  readonly onResponse?: ((info: ResponseInfo) => void) | undefined;
  readonly userAgent?: string | undefined;
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

  /** Closes the keep-alive connections of a dispatcher the client created (not an injected one). */
  close(): Promise<void>;
}

/** One logical request: retried as a whole by `exchange`. */
interface Call {
  readonly method: HttpMethod;
  readonly route: string;
  /** Relative to the base URL, query included. */
  readonly path: string;
  readonly body?: unknown;
  readonly signal: AbortSignal | undefined;
}

interface Answer {
  readonly status: number;
  readonly text: string;
}

type AttemptResult =
  | ({ readonly ok: true } & Answer)
  | {
      readonly ok: false;
      readonly failure: AttemptFailure;
      readonly toError: (outcomeUnknown: boolean) => EdgesyncError;
    };

export function createApiClient(options: ApiClientOptions): ApiClient {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const { apiKey } = options;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retry: Required<RetryOptions> =
    options.retry === false
      ? { ...DEFAULT_RETRY, maxAttempts: 1 }
      : { ...DEFAULT_RETRY, ...definedFields(options.retry ?? {}) };
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const log = options.logger;
  const bucket: TokenBucket | undefined =
    options.rateLimit === undefined
      ? undefined
      : createTokenBucket(options.rateLimit, { now, sleep });
  const headers: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    'svc-version': API_VERSION,
    accept: 'application/json',
    'user-agent': options.userAgent ?? DEFAULT_USER_AGENT,
  };
  const bodyHeaders = { ...headers, 'content-type': 'application/json' };

  /** The key must never reach a message, whatever a server or a library echoes. */
  const redact = (text: string): string =>
    apiKey === '' ? text : text.split(apiKey).join('[redacted]');

  function report(info: ResponseInfo): void {
    log?.debug(info, 'api response');
    if (options.onResponse === undefined) return;
    try {
      options.onResponse(info);
    } catch (err) {
      // A metrics hook must not turn a successful call into a failed one.
      log?.error({ err: redact(errorMessage(err)) }, 'onResponse hook failed');
    }
  }

  async function attemptOnce(call: Call, attempt: number): Promise<AttemptResult> {
    const { method, path } = call;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    call.signal?.addEventListener('abort', onAbort, { once: true });
    const started = now();
    try {
      const res = await request(baseUrl + path, {
        dispatcher,
        method,
        headers: call.body === undefined ? headers : bodyHeaders,
        body: call.body === undefined ? null : JSON.stringify(call.body),
        signal: controller.signal,
      });
      const text = await res.body.text();
      const status = res.statusCode;
      report({ method, route: call.route, status, durationMs: now() - started, attempt });
      if (status >= 200 && status < 300) return { ok: true, status, text };
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now());
      const parsed = parseErrorBody(text);
      const operationId =
        parsed.details?.operation_id ?? headerValue(res.headers['svc-operation-id']);
      return {
        ok: false,
        failure: {
          kind: 'status',
          status,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        },
        toError: (outcomeUnknown) =>
          new ApiError({
            method,
            path,
            status,
            errorCode: parsed.error_code,
            apiMessage: redact(parsed.msg ?? fallbackMessage(status, text)),
            operationId,
            retryAfter: retryAfterMs === undefined ? undefined : retryAfterMs / 1000,
            outcomeUnknown,
          }),
      };
    } catch (err) {
      report({ method, route: call.route, status: 0, durationMs: now() - started, attempt });
      if (call.signal?.aborted) throw abortedError(call.signal);
      if (timedOut) {
        return {
          ok: false,
          failure: { kind: 'timeout' },
          toError: (outcomeUnknown) =>
            new TimeoutError(method, path, timeoutMs, { cause: err, outcomeUnknown }),
        };
      }
      return {
        ok: false,
        failure: { kind: 'network', sent: !requestNotSent(err) },
        toError: (outcomeUnknown) =>
          new NetworkError(method, path, {
            cause: err,
            reason: redact(networkReason(err)),
            outcomeUnknown,
          }),
      };
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Sends a call until it gets a 2xx answer, a final failure, or its retries run out. */
  async function exchange(call: Call): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(call.signal);
      await bucket?.take(call.signal);
      const result = await attemptOnce(call, attempt);
      if (result.ok) return result;
      const { failure } = result;
      const verdict = classifyFailure(call.method, failure);
      // Reads have no outcome to be unsure of; a refused or rate-limited write did nothing.
      const outcomeUnknown =
        verdict !== 'fail' && call.method !== 'GET' && mayHaveBeenPerformed(failure);
      if (verdict !== 'retry' || attempt >= retry.maxAttempts) {
        throw result.toError(outcomeUnknown);
      }
      const retryAfterMs = failure.kind === 'status' ? failure.retryAfterMs : undefined;
      if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) {
        throw result.toError(outcomeUnknown);
      }
      const delayMs = retryAfterMs ?? backoffDelay(attempt - 1, retry, random);
      log?.warn(
        {
          method: call.method,
          route: call.route,
          attempt,
          delayMs,
          failure: failure.kind === 'status' ? failure.status : failure.kind,
        },
        'retrying API request',
      );
      await abortableSleep(sleep, delayMs, call.signal);
    }
  }

  async function send<T>(call: Call, schema: z.ZodType<T>): Promise<T> {
    const answer = await exchange(call);
    const fail = (problem: string, cause?: unknown) =>
      new ApiResponseError({
        method: call.method,
        path: call.path,
        status: answer.status,
        problem: redact(problem),
        cause,
      });
    if (answer.text.trim() === '') throw fail('empty body');
    let data: unknown;
    try {
      data = JSON.parse(answer.text);
    } catch (err) {
      throw fail(`body is not JSON: ${snippet(answer.text)}`, err);
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) throw fail(describeIssues(parsed.error.issues), parsed.error);
    return parsed.data;
  }

  async function sendNoContent(call: Call): Promise<void> {
    // Deletes answer 204; any body a server adds carries nothing we need.
    await exchange(call);
  }

  /** Follows `next_page_uri` to the end; never returns part of a list. */
  async function listAll<P extends { readonly next_page_uri: string | null }, T>(
    route: string,
    schema: z.ZodType<P>,
    itemsOf: (page: P) => readonly T[],
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    const pageSize = options.pageSize ?? LIMITS.pageLimitMax;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > LIMITS.pageLimitMax) {
      throw new EdgesyncError(
        'ES_INTERNAL',
        `page size must be an integer in 1..${LIMITS.pageLimitMax}`,
      );
    }
    const items: T[] = [];
    const seen = new Set<string>();
    let path: string | undefined = `${route}?limit=${pageSize}`;
    let calls = 0;
    while (path !== undefined) {
      seen.add(path);
      const page: P = await send({ method: 'GET', route, path, signal: options.signal }, schema);
      calls += 1;
      const got = itemsOf(page);
      for (const item of got) items.push(item);
      // An empty page ends the list even if the server offers another one.
      if (page.next_page_uri === null || got.length === 0) break;
      const next = nextPagePath(page.next_page_uri, route, path);
      if (seen.has(next)) {
        throw new ApiResponseError({
          method: 'GET',
          path,
          status: 200,
          problem: 'next_page_uri points back to a page already read',
        });
      }
      path = next;
    }
    return { items, calls };
  }

  /**
   * The next page's path relative to the configured base URL. The link is followed on the
   * configured base, never on the origin it names: a server behind a reverse proxy or gateway
   * knows its own URL, not ours, and the API key must never go to another origin. The link's
   * path must end with the same list endpoint (any prefix the server or a proxy adds is
   * ignored); only its query (`before_id`, `limit`) is taken.
   */
  function nextPagePath(nextPageUri: string, route: string, currentPath: string): string {
    let url: URL | undefined;
    try {
      url = new URL(nextPageUri, `${baseUrl}/`);
    } catch {
      url = undefined;
    }
    const pathname = url?.pathname.replace(/\/+$/, '');
    if (url === undefined || pathname === undefined || !pathname.endsWith(route)) {
      throw new ApiResponseError({
        method: 'GET',
        path: currentPath,
        status: 200,
        problem: `next_page_uri is not a page of ${route}`,
      });
    }
    return `${route}${url.search}`;
  }

  const edgeCalls = <R, W>(collection: '/edges/tls' | '/edges/https', schema: z.ZodType<R>) => ({
    get: async (id: string, o: RequestOptions = {}) =>
      send(
        {
          method: 'GET',
          route: `${collection}/{id}`,
          path: `${collection}/${seg(id)}`,
          signal: o.signal,
        },
        schema,
      ),
    create: async (body: W, o: RequestOptions = {}) =>
      send({ method: 'POST', route: collection, path: collection, body, signal: o.signal }, schema),
    update: async (id: string, body: W, o: RequestOptions = {}) =>
      send(
        {
          method: 'PATCH',
          route: `${collection}/{id}`,
          path: `${collection}/${seg(id)}`,
          body,
          signal: o.signal,
        },
        schema,
      ),
    delete: async (id: string, o: RequestOptions = {}) =>
      sendNoContent({
        method: 'DELETE',
        route: `${collection}/{id}`,
        path: `${collection}/${seg(id)}`,
        signal: o.signal,
      }),
  });
  const tls = edgeCalls<TlsEdge, TlsEdgeWrite>('/edges/tls', tlsEdgeSchema);
  const https = edgeCalls<HttpsEdge, HttpsEdgeWrite>('/edges/https', httpsEdgeSchema);
  const bots = {
    get: async (id: string, o: RequestOptions = {}) =>
      send(
        {
          method: 'GET',
          route: '/bot_users/{id}',
          path: `/bot_users/${seg(id)}`,
          signal: o.signal,
        },
        botUserSchema,
      ),
  };

  const routePath = (edgeId: string, routeId?: string) =>
    `/edges/https/${seg(edgeId)}/routes${routeId === undefined ? '' : `/${seg(routeId)}`}`;

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
          path: `/edges/tls/${seg(owner.id)}/${module}`,
          schema,
        };
      case 'https_edge':
        return {
          route: `/edges/https/{id}/${module}`,
          path: `/edges/https/${seg(owner.id)}/${module}`,
          schema,
        };
      case 'route':
        return {
          route: `/edges/https/{edge_id}/routes/{id}/${module}`,
          path: `${routePath(owner.edgeId, owner.id)}/${module}`,
          schema,
        };
    }
  }

  const client: ApiClient = {
    baseUrl,
    listTlsEdges: (o) => listAll('/edges/tls', tlsEdgeListSchema, (p) => p.tls_edges, o),
    listHttpsEdges: (o) => listAll('/edges/https', httpsEdgeListSchema, (p) => p.https_edges, o),
    listBotUsers: (o) => listAll('/bot_users', botUserListSchema, (p) => p.bot_users, o),

    getTlsEdge: tls.get,
    createTlsEdge: tls.create,
    updateTlsEdge: tls.update,
    deleteTlsEdge: tls.delete,
    getHttpsEdge: https.get,
    createHttpsEdge: https.create,
    updateHttpsEdge: https.update,
    deleteHttpsEdge: https.delete,

    getRoute: async (edgeId, routeId, o = {}) =>
      send(
        {
          method: 'GET',
          route: '/edges/https/{edge_id}/routes/{id}',
          path: routePath(edgeId, routeId),
          signal: o.signal,
        },
        httpsRouteSchema,
      ),
    createRoute: async (edgeId, body, o = {}) =>
      send(
        {
          method: 'POST',
          route: '/edges/https/{edge_id}/routes',
          path: routePath(edgeId),
          body,
          signal: o.signal,
        },
        httpsRouteSchema,
      ),
    updateRoute: async (edgeId, routeId, body, o = {}) =>
      send(
        {
          method: 'PATCH',
          route: '/edges/https/{edge_id}/routes/{id}',
          path: routePath(edgeId, routeId),
          body,
          signal: o.signal,
        },
        httpsRouteSchema,
      ),
    deleteRoute: async (edgeId, routeId, o = {}) =>
      sendNoContent({
        method: 'DELETE',
        route: '/edges/https/{edge_id}/routes/{id}',
        path: routePath(edgeId, routeId),
        signal: o.signal,
      }),

    // The overloads' precise return types come from the read schema picked at run time by the
    // same (kind, module) key, which the type system cannot follow: hence `Promise<never>`.
    getModule: async (
      owner: ModuleOwner,
      module: string,
      o: RequestOptions = {},
    ): Promise<never> => {
      const { route, path, schema } = moduleCall(owner, module);
      return send({ method: 'GET', route, path, signal: o.signal }, schema) as Promise<never>;
    },
    putModule: async (
      owner: ModuleOwner,
      module: string,
      body: unknown,
      o: RequestOptions = {},
    ): Promise<never> => {
      const { route, path, schema } = moduleCall(owner, module);
      return send({ method: 'PUT', route, path, body, signal: o.signal }, schema) as Promise<never>;
    },
    deleteModule: async (owner, module, o = {}) => {
      const { route, path } = moduleCall(owner, module);
      return sendNoContent({ method: 'DELETE', route, path, signal: o.signal });
    },

    getBotUser: bots.get,
    createBotUser: async (body, o = {}) =>
      send(
        { method: 'POST', route: '/bot_users', path: '/bot_users', body, signal: o.signal },
        botUserSchema,
      ),
    updateBotUser: async (id, body, o = {}) =>
      send(
        {
          method: 'PATCH',
          route: '/bot_users/{id}',
          path: `/bot_users/${seg(id)}`,
          body,
          signal: o.signal,
        },
        botUserSchema,
      ),
    deleteBotUser: async (id, o = {}) =>
      sendNoContent({
        method: 'DELETE',
        route: '/bot_users/{id}',
        path: `/bot_users/${seg(id)}`,
        signal: o.signal,
      }),

    close: async () => {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
  return client;
}

/** A path segment from an ID: never empty (that would address the collection instead). */
function seg(id: string): string {
  if (id === '') throw new EdgesyncError('ES_INTERNAL', 'empty resource ID in an API path');
  return encodeURIComponent(id);
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The error body's fields when it is the API's JSON error; nothing when it is not (HTML, text). */
function parseErrorBody(text: string): ApiErrorBody {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return {};
  }
  const parsed = apiErrorBodySchema.safeParse(data);
  return parsed.success ? parsed.data : {};
}

function fallbackMessage(status: number, text: string): string {
  const reason = STATUS_CODES[status] ?? 'unknown status';
  const body = text.trim();
  return body === '' ? reason : `${reason} (non-JSON body: ${snippet(body)})`;
}

/** A short, single-line excerpt of a body for an error message. */
function snippet(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function networkReason(err: unknown): string {
  const message = errorMessage(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && !message.includes(code)) return `${code}: ${message}`;
  return message === '' && err instanceof AggregateError
    ? err.errors.map(errorMessage).join('; ')
    : message;
}

/** At most five zod issues as `path: message`, e.g. `https_edges[3].routes[0].oauth: Required`. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => {
    let path = '';
    for (const key of issue.path) {
      path += typeof key === 'number' ? `[${key}]` : path === '' ? String(key) : `.${String(key)}`;
    }
    return `${path === '' ? '(body)' : path}: ${issue.message}`;
  });
  const more = issues.length > shown.length ? ` (+${issues.length - shown.length} more)` : '';
  return shown.join('; ') + more;
}
