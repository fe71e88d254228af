/**
 * The route table of the local Edge API server: which handler serves which method on which
 * path (404 for unknown paths, 405 for a known path with another method), the path IDs' prefixes
 * (227), and the list endpoints' query parameters (231). Pure: no request, no response.
 */
import { ERROR_CODE, ID_PREFIX, LIMITS } from '../hosted/edge-api.js';
import { HTTPS_EDGE_MODULES, ROUTE_MODULES, TLS_EDGE_MODULES } from '../hosted/modules/index.js';
import { ACCOUNT_ID_PREFIX } from './account-codes.js';
import { CA_ID_PREFIX, DOMAIN_ID_PREFIX } from './domain-codes.js';
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
  /** The list also takes a CEL `filter` (cloud endpoints, reserved domains, CAs). */
  readonly filter?: boolean;
}

export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PATCH', 'PUT']);
// `beforeId`: the spelling of the service's official TypeScript client, an alias.
const PAGE_PARAMS = ['before_id', 'beforeId', 'limit'] as const;
const FILTER_PARAMS = [...PAGE_PARAMS, 'filter'] as const;

const TLS_MODULES: ReadonlySet<string> = new Set(TLS_EDGE_MODULES);
const HTTPS_MODULES: ReadonlySet<string> = new Set(HTTPS_EDGE_MODULES);
const RT_MODULES: ReadonlySet<string> = new Set(ROUTE_MODULES);

/**
 * One route of the server: a template whose segments are literals, IDs (`{id}`, `{edge_id}`:
 * any segment, its prefix checked later, 227) or `{module}` (one of `modules`), and the handler
 * of each method. The methods' order is the `Allow` header's.
 */
export interface ServerRoute {
  readonly template: string;
  readonly table: MethodTable;
  /** The prefix each ID of the template must carry, in template order. */
  readonly prefixes?: readonly string[];
  readonly modules?: ReadonlySet<string>;
  readonly list?: true;
  readonly filter?: true;
}

const READ_WRITE = (get: HandlerName, patch: HandlerName, del: HandlerName): MethodTable => ({
  GET: get,
  PATCH: patch,
  DELETE: del,
});
const MODULE = (get: HandlerName, put: HandlerName, del: HandlerName): MethodTable => ({
  GET: get,
  PUT: put,
  DELETE: del,
});
const TLS = [ID_PREFIX.tlsEdge];
const HTTPS = [ID_PREFIX.httpsEdge];
const ROUTE = [ID_PREFIX.httpsEdge, ID_PREFIX.route];

/**
 * The server's routes, written apart from the client's table of operations (src/api/routes.ts)
 * on purpose: the server is the oracle the client is tested against, and a test holds the two
 * together.
 */
export const SERVER_ROUTES: readonly ServerRoute[] = [
  { template: '/bot_users', table: { GET: 'listBotUsers', POST: 'createBotUser' }, list: true },
  {
    template: '/bot_users/{id}',
    table: READ_WRITE('getBotUser', 'updateBotUser', 'deleteBotUser'),
    prefixes: [ID_PREFIX.botUser],
  },
  {
    template: '/endpoints',
    table: { GET: 'listEndpoints', POST: 'createEndpoint' },
    list: true,
    filter: true,
  },
  {
    template: '/endpoints/{id}',
    table: READ_WRITE('getEndpoint', 'updateEndpoint', 'deleteEndpoint'),
    prefixes: [ENDPOINT_ID_PREFIX],
  },
  // ---- account resources: reserved domains, certificate authorities, service users
  {
    template: '/reserved_domains',
    table: { GET: 'listReservedDomains', POST: 'createReservedDomain' },
    list: true,
    filter: true,
  },
  {
    template: '/reserved_domains/{id}',
    table: READ_WRITE('getReservedDomain', 'updateReservedDomain', 'deleteReservedDomain'),
    prefixes: [DOMAIN_ID_PREFIX],
  },
  {
    template: '/reserved_domains/{id}/certificate',
    table: { DELETE: 'deleteReservedDomainCertificate' },
    prefixes: [DOMAIN_ID_PREFIX],
  },
  {
    template: '/reserved_domains/{id}/certificate_management_policy',
    table: { DELETE: 'deleteReservedDomainCertificateManagementPolicy' },
    prefixes: [DOMAIN_ID_PREFIX],
  },
  {
    template: '/certificate_authorities',
    table: { GET: 'listCertificateAuthorities', POST: 'createCertificateAuthority' },
    list: true,
    filter: true,
  },
  {
    template: '/certificate_authorities/{id}',
    table: READ_WRITE(
      'getCertificateAuthority',
      'updateCertificateAuthority',
      'deleteCertificateAuthority',
    ),
    prefixes: [CA_ID_PREFIX],
  },
  {
    template: '/service_users',
    table: { GET: 'listServiceUsers', POST: 'createServiceUser' },
    list: true,
  },
  {
    template: '/service_users/{id}',
    table: READ_WRITE('getServiceUser', 'updateServiceUser', 'deleteServiceUser'),
    prefixes: [ID_PREFIX.botUser],
  },
  // ---- end of account resources
  { template: '/edges/tls', table: { GET: 'listTlsEdges', POST: 'createTlsEdge' }, list: true },
  {
    template: '/edges/tls/{id}',
    table: READ_WRITE('getTlsEdge', 'updateTlsEdge', 'deleteTlsEdge'),
    prefixes: TLS,
  },
  {
    template: '/edges/tls/{id}/{module}',
    table: MODULE('getTlsEdgeModule', 'putTlsEdgeModule', 'deleteTlsEdgeModule'),
    prefixes: TLS,
    modules: TLS_MODULES,
  },
  {
    template: '/edges/https',
    table: { GET: 'listHttpsEdges', POST: 'createHttpsEdge' },
    list: true,
  },
  {
    template: '/edges/https/{id}',
    table: READ_WRITE('getHttpsEdge', 'updateHttpsEdge', 'deleteHttpsEdge'),
    prefixes: HTTPS,
  },
  {
    template: '/edges/https/{id}/{module}',
    table: MODULE('getHttpsEdgeModule', 'putHttpsEdgeModule', 'deleteHttpsEdgeModule'),
    prefixes: HTTPS,
    modules: HTTPS_MODULES,
  },
  { template: '/edges/https/{edge_id}/routes', table: { POST: 'createRoute' }, prefixes: HTTPS },
  {
    template: '/edges/https/{edge_id}/routes/{id}',
    table: READ_WRITE('getRoute', 'updateRoute', 'deleteRoute'),
    prefixes: ROUTE,
  },
  {
    template: '/edges/https/{edge_id}/routes/{id}/{module}',
    table: MODULE('getRouteModule', 'putRouteModule', 'deleteRouteModule'),
    prefixes: ROUTE,
    modules: RT_MODULES,
  },
  // ---- IP policies and vaults ----
  {
    template: '/ip_policies',
    table: { GET: 'listIpPolicies', POST: 'createIpPolicy' },
    list: true,
    filter: true,
  },
  {
    template: '/ip_policies/{id}',
    table: READ_WRITE('getIpPolicy', 'updateIpPolicy', 'deleteIpPolicy'),
    prefixes: [ACCOUNT_ID_PREFIX.ipPolicy],
  },
  {
    template: '/ip_policy_rules',
    table: { GET: 'listIpPolicyRules', POST: 'createIpPolicyRule' },
    list: true,
    filter: true,
  },
  {
    template: '/ip_policy_rules/{id}',
    table: READ_WRITE('getIpPolicyRule', 'updateIpPolicyRule', 'deleteIpPolicyRule'),
    prefixes: [ACCOUNT_ID_PREFIX.ipPolicyRule],
  },
  {
    template: '/vaults',
    table: { GET: 'listVaults', POST: 'createVault' },
    list: true,
    filter: true,
  },
  {
    template: '/vaults/{id}',
    table: READ_WRITE('getVault', 'updateVault', 'deleteVault'),
    prefixes: [ACCOUNT_ID_PREFIX.vault],
  },
  {
    template: '/vaults/{id}/secrets',
    table: { GET: 'listVaultSecrets' },
    prefixes: [ACCOUNT_ID_PREFIX.vault],
    list: true,
  },
  {
    template: '/vault_secrets',
    table: { GET: 'listSecrets', POST: 'createVaultSecret' },
    list: true,
    filter: true,
  },
  {
    template: '/vault_secrets/{id}',
    table: READ_WRITE('getVaultSecret', 'updateVaultSecret', 'deleteVaultSecret'),
    prefixes: [ACCOUNT_ID_PREFIX.secret],
  },
  // ---- end of IP policies and vaults ----
];

const COMPILED = SERVER_ROUTES.map((route) => ({ route, segments: route.template.split('/') }));

/** The route's answer for a path's segments (a leading `''` included); undefined if no match. */
function match(
  compiled: (typeof COMPILED)[number],
  segments: readonly string[],
): Resolved | undefined {
  const { route } = compiled;
  if (compiled.segments.length !== segments.length) return undefined;
  const found: string[] = [];
  let module: string | undefined;
  for (const [i, part] of compiled.segments.entries()) {
    const given = segments[i] as string;
    if (part === '{module}') {
      if (!route.modules?.has(given)) return undefined;
      module = given;
    } else if (part.startsWith('{')) {
      found.push(given);
    } else if (part !== given) {
      return undefined;
    }
  }
  const prefixes = route.prefixes ?? [];
  return {
    table: route.table,
    ids: found.map((id, i) => [id, prefixes[i] ?? ''] as const),
    ...(module === undefined ? {} : { module }),
    ...(route.list ? { list: true } : {}),
    ...(route.filter ? { filter: true } : {}),
  };
}

/** Maps a path's segments (as `splitPath` gives them) to its resource; undefined means 404. */
export function resolve(segments: readonly string[]): Resolved | undefined {
  const withRoot = ['', ...segments];
  for (const compiled of COMPILED) {
    const resolved = match(compiled, withRoot);
    if (resolved !== undefined) return resolved;
  }
  return undefined;
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
  const account = ACCOUNT_LIST_PREFIXES[resolved.table.GET ?? ''];
  if (account !== undefined) return account;
  return ID_PREFIX.botUser;
}

/** The IDs each list of the account resources pages by. */
const ACCOUNT_LIST_PREFIXES: Readonly<Record<string, string>> = {
  listReservedDomains: DOMAIN_ID_PREFIX,
  listCertificateAuthorities: CA_ID_PREFIX,
  listIpPolicies: ACCOUNT_ID_PREFIX.ipPolicy,
  listIpPolicyRules: ACCOUNT_ID_PREFIX.ipPolicyRule,
  listVaults: ACCOUNT_ID_PREFIX.vault,
  listVaultSecrets: ACCOUNT_ID_PREFIX.secret,
  listSecrets: ACCOUNT_ID_PREFIX.secret,
} satisfies Partial<Record<HandlerName, string>>;

function invalid(message: string): RequestError {
  return new RequestError(400, ERROR_CODE.invalidValue, message);
}
