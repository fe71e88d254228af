/**
 * The route table of the local Edge API server: which handler serves which method on which
 * path (404 for unknown paths, 405 for a known path with another method), the path IDs' prefixes
 * (227), and the list endpoints' query parameters (231). Pure: no request, no response.
 */
import {
  ERROR_CODE,
  HTTPS_EDGE_MODULES,
  ID_PREFIX,
  LIMITS,
  ROUTE_MODULES,
  TLS_EDGE_MODULES,
} from '../hosted/edge-api.js';
import { ENDPOINT_ID_PREFIX } from './endpoints/codes.js';
import { RequestError } from './errors.js';
import type { Handlers } from './handlers.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
type HandlerName = keyof Handlers;
type MethodTable = Partial<Record<Method, HandlerName>>;

export interface Resolved {
  readonly table: MethodTable;
  /** IDs from the path, with the prefix each must carry. */
  readonly ids: ReadonlyArray<readonly [string, string]>;
  readonly module?: string;
  readonly list?: boolean;
  /** The list also takes a CEL `filter` (cloud endpoints). */
  readonly filter?: boolean;
}

export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PATCH', 'PUT']);
// `beforeId`: the spelling of the service's official TypeScript client, an alias.
const PAGE_PARAMS = ['before_id', 'beforeId', 'limit'] as const;
const FILTER_PARAMS = [...PAGE_PARAMS, 'filter'] as const;

const TLS_MODULES: ReadonlySet<string> = new Set(TLS_EDGE_MODULES);
const HTTPS_MODULES: ReadonlySet<string> = new Set(HTTPS_EDGE_MODULES);
const RT_MODULES: ReadonlySet<string> = new Set(ROUTE_MODULES);

/** Maps a path to its resource; undefined means 404. */
export function resolve(segments: readonly string[]): Resolved | undefined {
  const [a, b, c, d, e, f, g, ...rest] = segments;
  if (rest.length > 0) return undefined;
  if (a === 'bot_users') {
    if (b === undefined) {
      return { table: { GET: 'listBotUsers', POST: 'createBotUser' }, ids: [], list: true };
    }
    if (c !== undefined) return undefined;
    return {
      table: { GET: 'getBotUser', PATCH: 'updateBotUser', DELETE: 'deleteBotUser' },
      ids: [[b, ID_PREFIX.botUser]],
    };
  }
  if (a === 'endpoints') {
    if (b === undefined) {
      return {
        table: { GET: 'listEndpoints', POST: 'createEndpoint' },
        ids: [],
        list: true,
        filter: true,
      };
    }
    if (c !== undefined) return undefined;
    return {
      table: { GET: 'getEndpoint', PATCH: 'updateEndpoint', DELETE: 'deleteEndpoint' },
      ids: [[b, ENDPOINT_ID_PREFIX]],
    };
  }
  if (a !== 'edges') return undefined;
  if (b === 'tls') {
    if (c === undefined) {
      return { table: { GET: 'listTlsEdges', POST: 'createTlsEdge' }, ids: [], list: true };
    }
    const ids = [[c, ID_PREFIX.tlsEdge]] as const;
    if (d === undefined) {
      return {
        table: { GET: 'getTlsEdge', PATCH: 'updateTlsEdge', DELETE: 'deleteTlsEdge' },
        ids,
      };
    }
    if (e !== undefined || !TLS_MODULES.has(d)) return undefined;
    return {
      table: { GET: 'getTlsEdgeModule', PUT: 'putTlsEdgeModule', DELETE: 'deleteTlsEdgeModule' },
      ids,
      module: d,
    };
  }
  if (b !== 'https') return undefined;
  if (c === undefined) {
    return { table: { GET: 'listHttpsEdges', POST: 'createHttpsEdge' }, ids: [], list: true };
  }
  const edgeIds = [[c, ID_PREFIX.httpsEdge]] as const;
  if (d === undefined) {
    return {
      table: { GET: 'getHttpsEdge', PATCH: 'updateHttpsEdge', DELETE: 'deleteHttpsEdge' },
      ids: edgeIds,
    };
  }
  if (d !== 'routes') {
    if (e !== undefined || !HTTPS_MODULES.has(d)) return undefined;
    return {
      table: {
        GET: 'getHttpsEdgeModule',
        PUT: 'putHttpsEdgeModule',
        DELETE: 'deleteHttpsEdgeModule',
      },
      ids: edgeIds,
      module: d,
    };
  }
  if (e === undefined) return { table: { POST: 'createRoute' }, ids: edgeIds };
  const routeIds = [...edgeIds, [e, ID_PREFIX.route] as const];
  if (f === undefined) {
    return {
      table: { GET: 'getRoute', PATCH: 'updateRoute', DELETE: 'deleteRoute' },
      ids: routeIds,
    };
  }
  if (g !== undefined || !RT_MODULES.has(f)) return undefined;
  return {
    table: { GET: 'getRouteModule', PUT: 'putRouteModule', DELETE: 'deleteRouteModule' },
    ids: routeIds,
    module: f,
  };
}

export function splitPath(path: string): string[] | undefined {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (!trimmed.startsWith('/')) return undefined;
  try {
    return trimmed.slice(1).split('/').map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

export function parseQuery(
  query: string,
  resolved: Resolved,
): { beforeId: string | undefined; limit: number; filter?: string } | undefined {
  const params = new URLSearchParams(query);
  const keys = [...new Set(params.keys())];
  const allowed: readonly string[] = resolved.filter
    ? FILTER_PARAMS
    : resolved.list
      ? PAGE_PARAMS
      : [];
  const unknown = keys.filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    const accepted = allowed.length > 0 ? allowed.join(', ') : 'none';
    throw new RequestError(
      400,
      ERROR_CODE.unknownQueryParam,
      `unknown query parameter(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}; accepted: ${accepted}`,
    );
  }
  if (!resolved.list) return undefined;
  for (const k of keys) {
    if (params.getAll(k).length > 1) throw invalid(`query parameter ${k} given more than once`);
  }
  let limit: number = LIMITS.pageLimitDefault;
  const limitText = params.get('limit');
  if (limitText !== null) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit >= 1 && limit <= LIMITS.pageLimitMax)) {
      throw invalid(`limit must be an integer from 1 to ${LIMITS.pageLimitMax}`);
    }
  }
  if (params.has('before_id') && params.has('beforeId')) {
    throw invalid('give before_id or its alias beforeId, not both');
  }
  const beforeId = params.get('before_id') ?? params.get('beforeId') ?? undefined;
  if (beforeId !== undefined) {
    const prefix = listPrefix(resolved);
    if (!beforeId.startsWith(prefix) || beforeId.length === prefix.length) {
      throw new RequestError(
        400,
        ERROR_CODE.wrongIdPrefix,
        `before_id must be an ID starting with "${prefix}"`,
      );
    }
  }
  const filter = params.get('filter') ?? undefined;
  return filter === undefined ? { beforeId, limit } : { beforeId, limit, filter };
}

export function listPrefix(resolved: Resolved): string {
  if (resolved.table.GET === 'listTlsEdges') return ID_PREFIX.tlsEdge;
  if (resolved.table.GET === 'listHttpsEdges') return ID_PREFIX.httpsEdge;
  if (resolved.table.GET === 'listEndpoints') return ENDPOINT_ID_PREFIX;
  return ID_PREFIX.botUser;
}

function invalid(message: string): RequestError {
  return new RequestError(400, ERROR_CODE.invalidValue, message);
}
