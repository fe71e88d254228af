/**
 * The Edge API's operations, in one table: each one's HTTP method, path template, what it
 * targets, the schema of its body and the schema of its answer. Everything that knows the URL
 * layout reads it: the client's methods are generated from it (./client.ts), the executor sends
 * a plan operation by looking it up (src/apply/dispatch.ts), plans show paths filled from it
 * (src/plan/target.ts), and the daemon's metrics label a response with its template. The local
 * server routes on its own (src/server/routes.ts): it is the oracle, and a test holds its router
 * to this table.
 *
 * A template's `{param}`s are named like the fields of a target that fill them (`id`,
 * `edge_id`), and a generated client method takes them, in template order, as its leading
 * arguments.
 */
import type { z } from 'zod';
import { EdgesyncError } from '../errors.js';
import {
  // Account resources.
  certificateAuthorityCreateSchema,
  certificateAuthorityListSchema,
  certificateAuthoritySchema,
  certificateAuthorityUpdateSchema,
  // IP policies and vaults.
  ipPolicyListSchema,
  ipPolicyRuleCreateSchema,
  ipPolicyRuleListSchema,
  ipPolicyRuleSchema,
  ipPolicyRuleUpdateSchema,
  ipPolicySchema,
  ipPolicyWriteSchema,
  reservedDomainCreateSchema,
  reservedDomainListSchema,
  reservedDomainSchema,
  reservedDomainUpdateSchema,
  secretCreateSchema,
  secretListSchema,
  secretSchema,
  secretUpdateSchema,
  serviceUserCreateSchema,
  serviceUserListSchema,
  serviceUserSchema,
  serviceUserUpdateSchema,
  vaultCreateSchema,
  vaultListSchema,
  vaultSchema,
  vaultUpdateSchema,
} from './account-schemas.js';
import type { HttpMethod } from './exchange.js';
import {
  botUserCreateSchema,
  botUserListSchema,
  botUserSchema,
  botUserUpdateSchema,
  cloudEndpointListSchema,
  cloudEndpointSchema,
  endpointCreateSchema,
  endpointUpdateSchema,
  httpsEdgeListSchema,
  httpsEdgeSchema,
  httpsEdgeWriteSchema,
  httpsRouteSchema,
  MODULE_READ_SCHEMAS,
  MODULE_WRITE_SCHEMAS,
  type ModuleOwner,
  type ModuleOwnerKind,
  routeCreateSchema,
  routeUpdateSchema,
  tlsEdgeListSchema,
  tlsEdgeSchema,
  tlsEdgeWriteSchema,
} from './schemas.js';
import type { ApiClient } from './types.js';

/** What an operation acts on: a collection, a resource, or a module of an edge or a route. */
export type TargetKind =
  | 'edges'
  | 'edge'
  | 'routes'
  | 'route'
  | 'edge_module'
  | 'route_module'
  | 'bot_users'
  | 'bot_user'
  | 'endpoints'
  | 'endpoint'
  // Account resources.
  | 'reserved_domains'
  | 'reserved_domain'
  | 'reserved_domain_certificate'
  | 'reserved_domain_certificate_management_policy'
  | 'certificate_authorities'
  | 'certificate_authority'
  | 'service_users'
  | 'service_user'
  // IP policies and vaults
  | 'ip_policies'
  | 'ip_policy'
  | 'ip_policy_rules'
  | 'ip_policy_rule'
  | 'vaults'
  | 'vault'
  | 'vault_secrets'
  | 'secrets'
  | 'secret';

/** A target without its IDs: enough to pick a template. */
export interface TargetAddress {
  readonly kind: TargetKind;
  readonly edge_kind?: 'tls' | 'https';
  readonly module?: string;
}

type ModuleMethod = 'getModule' | 'putModule' | 'deleteModule';
/** The client methods with one fixed template each (module methods pick it by owner and name). */
type FixedMethod = Exclude<keyof ApiClient, 'baseUrl' | 'close' | ModuleMethod>;

interface Row {
  readonly method: HttpMethod;
  readonly template: string;
  readonly target: TargetAddress;
  /** The write schema of its body; absent when it sends none. */
  readonly body?: z.ZodType;
  /** The schema of its answer (a page, for a list); absent when it answers 204. */
  readonly answer?: z.ZodType;
  /** For a paginated list: the page's key holding the items. */
  readonly items?: string;
}

export interface ApiOperation extends Row {
  /** The `ApiClient` method that sends it. */
  readonly name: FixedMethod | ModuleMethod;
}

const resource = (template: string, target: TargetAddress) => ({ template, target }) as const;
const TLS_EDGES = resource('/edges/tls', { kind: 'edges', edge_kind: 'tls' });
const TLS_EDGE = resource('/edges/tls/{id}', { kind: 'edge', edge_kind: 'tls' });
const HTTPS_EDGES = resource('/edges/https', { kind: 'edges', edge_kind: 'https' });
const HTTPS_EDGE = resource('/edges/https/{id}', { kind: 'edge', edge_kind: 'https' });
const ROUTES = resource('/edges/https/{edge_id}/routes', { kind: 'routes' });
const ROUTE = resource('/edges/https/{edge_id}/routes/{id}', { kind: 'route' });
const BOT_USERS = resource('/bot_users', { kind: 'bot_users' });
const BOT_USER = resource('/bot_users/{id}', { kind: 'bot_user' });
const ENDPOINTS = resource('/endpoints', { kind: 'endpoints' });
const ENDPOINT = resource('/endpoints/{id}', { kind: 'endpoint' });
// Account resources.
const DOMAINS = resource('/reserved_domains', { kind: 'reserved_domains' });
const DOMAIN = resource('/reserved_domains/{id}', { kind: 'reserved_domain' });
const DOMAIN_CERTIFICATE = resource('/reserved_domains/{id}/certificate', {
  kind: 'reserved_domain_certificate',
});
const DOMAIN_CERTIFICATE_POLICY = resource('/reserved_domains/{id}/certificate_management_policy', {
  kind: 'reserved_domain_certificate_management_policy',
});
const CAS = resource('/certificate_authorities', { kind: 'certificate_authorities' });
const CA = resource('/certificate_authorities/{id}', { kind: 'certificate_authority' });
const SERVICE_USERS = resource('/service_users', { kind: 'service_users' });
const SERVICE_USER = resource('/service_users/{id}', { kind: 'service_user' });
// IP policies and vaults
const IP_POLICIES = resource('/ip_policies', { kind: 'ip_policies' });
const IP_POLICY = resource('/ip_policies/{id}', { kind: 'ip_policy' });
const IP_POLICY_RULES = resource('/ip_policy_rules', { kind: 'ip_policy_rules' });
const IP_POLICY_RULE = resource('/ip_policy_rules/{id}', { kind: 'ip_policy_rule' });
const VAULTS = resource('/vaults', { kind: 'vaults' });
const VAULT = resource('/vaults/{id}', { kind: 'vault' });
const VAULT_SECRETS = resource('/vaults/{id}/secrets', { kind: 'vault_secrets' });
const SECRETS = resource('/vault_secrets', { kind: 'secrets' });
const SECRET = resource('/vault_secrets/{id}', { kind: 'secret' });

// `satisfies` ties the rows to the client's surface: a method without a row, or a row without
// a method, fails the typecheck.
const FIXED = {
  listTlsEdges: { ...TLS_EDGES, method: 'GET', answer: tlsEdgeListSchema, items: 'tls_edges' },
  createTlsEdge: { ...TLS_EDGES, method: 'POST', body: tlsEdgeWriteSchema, answer: tlsEdgeSchema },
  getTlsEdge: { ...TLS_EDGE, method: 'GET', answer: tlsEdgeSchema },
  updateTlsEdge: { ...TLS_EDGE, method: 'PATCH', body: tlsEdgeWriteSchema, answer: tlsEdgeSchema },
  deleteTlsEdge: { ...TLS_EDGE, method: 'DELETE' },

  listHttpsEdges: {
    ...HTTPS_EDGES,
    method: 'GET',
    answer: httpsEdgeListSchema,
    items: 'https_edges',
  },
  createHttpsEdge: {
    ...HTTPS_EDGES,
    method: 'POST',
    body: httpsEdgeWriteSchema,
    answer: httpsEdgeSchema,
  },
  getHttpsEdge: { ...HTTPS_EDGE, method: 'GET', answer: httpsEdgeSchema },
  updateHttpsEdge: {
    ...HTTPS_EDGE,
    method: 'PATCH',
    body: httpsEdgeWriteSchema,
    answer: httpsEdgeSchema,
  },
  deleteHttpsEdge: { ...HTTPS_EDGE, method: 'DELETE' },

  createRoute: { ...ROUTES, method: 'POST', body: routeCreateSchema, answer: httpsRouteSchema },
  getRoute: { ...ROUTE, method: 'GET', answer: httpsRouteSchema },
  updateRoute: { ...ROUTE, method: 'PATCH', body: routeUpdateSchema, answer: httpsRouteSchema },
  deleteRoute: { ...ROUTE, method: 'DELETE' },

  listBotUsers: { ...BOT_USERS, method: 'GET', answer: botUserListSchema, items: 'bot_users' },
  createBotUser: { ...BOT_USERS, method: 'POST', body: botUserCreateSchema, answer: botUserSchema },
  getBotUser: { ...BOT_USER, method: 'GET', answer: botUserSchema },
  updateBotUser: { ...BOT_USER, method: 'PATCH', body: botUserUpdateSchema, answer: botUserSchema },
  deleteBotUser: { ...BOT_USER, method: 'DELETE' },

  listEndpoints: {
    ...ENDPOINTS,
    method: 'GET',
    answer: cloudEndpointListSchema,
    items: 'endpoints',
  },
  createEndpoint: {
    ...ENDPOINTS,
    method: 'POST',
    body: endpointCreateSchema,
    answer: cloudEndpointSchema,
  },
  getEndpoint: { ...ENDPOINT, method: 'GET', answer: cloudEndpointSchema },
  updateEndpoint: {
    ...ENDPOINT,
    method: 'PATCH',
    body: endpointUpdateSchema,
    answer: cloudEndpointSchema,
  },
  deleteEndpoint: { ...ENDPOINT, method: 'DELETE' },

  // ---- account resources: reserved domains, certificate authorities, service users
  listReservedDomains: {
    ...DOMAINS,
    method: 'GET',
    answer: reservedDomainListSchema,
    items: 'reserved_domains',
  },
  createReservedDomain: {
    ...DOMAINS,
    method: 'POST',
    body: reservedDomainCreateSchema,
    answer: reservedDomainSchema,
  },
  getReservedDomain: { ...DOMAIN, method: 'GET', answer: reservedDomainSchema },
  updateReservedDomain: {
    ...DOMAIN,
    method: 'PATCH',
    body: reservedDomainUpdateSchema,
    answer: reservedDomainSchema,
  },
  deleteReservedDomain: { ...DOMAIN, method: 'DELETE' },
  deleteReservedDomainCertificate: { ...DOMAIN_CERTIFICATE, method: 'DELETE' },
  deleteReservedDomainCertificateManagementPolicy: {
    ...DOMAIN_CERTIFICATE_POLICY,
    method: 'DELETE',
  },

  listCertificateAuthorities: {
    ...CAS,
    method: 'GET',
    answer: certificateAuthorityListSchema,
    items: 'certificate_authorities',
  },
  createCertificateAuthority: {
    ...CAS,
    method: 'POST',
    body: certificateAuthorityCreateSchema,
    answer: certificateAuthoritySchema,
  },
  getCertificateAuthority: { ...CA, method: 'GET', answer: certificateAuthoritySchema },
  updateCertificateAuthority: {
    ...CA,
    method: 'PATCH',
    body: certificateAuthorityUpdateSchema,
    answer: certificateAuthoritySchema,
  },
  deleteCertificateAuthority: { ...CA, method: 'DELETE' },

  listServiceUsers: {
    ...SERVICE_USERS,
    method: 'GET',
    answer: serviceUserListSchema,
    items: 'service_users',
  },
  createServiceUser: {
    ...SERVICE_USERS,
    method: 'POST',
    body: serviceUserCreateSchema,
    answer: serviceUserSchema,
  },
  getServiceUser: { ...SERVICE_USER, method: 'GET', answer: serviceUserSchema },
  updateServiceUser: {
    ...SERVICE_USER,
    method: 'PATCH',
    body: serviceUserUpdateSchema,
    answer: serviceUserSchema,
  },
  deleteServiceUser: { ...SERVICE_USER, method: 'DELETE' },
  // ---- end of account resources
  // ---- IP policies and vaults ----
  listIpPolicies: {
    ...IP_POLICIES,
    method: 'GET',
    answer: ipPolicyListSchema,
    items: 'ip_policies',
  },
  createIpPolicy: {
    ...IP_POLICIES,
    method: 'POST',
    body: ipPolicyWriteSchema,
    answer: ipPolicySchema,
  },
  getIpPolicy: { ...IP_POLICY, method: 'GET', answer: ipPolicySchema },
  updateIpPolicy: {
    ...IP_POLICY,
    method: 'PATCH',
    body: ipPolicyWriteSchema,
    answer: ipPolicySchema,
  },
  deleteIpPolicy: { ...IP_POLICY, method: 'DELETE' },

  listIpPolicyRules: {
    ...IP_POLICY_RULES,
    method: 'GET',
    answer: ipPolicyRuleListSchema,
    items: 'ip_policy_rules',
  },
  createIpPolicyRule: {
    ...IP_POLICY_RULES,
    method: 'POST',
    body: ipPolicyRuleCreateSchema,
    answer: ipPolicyRuleSchema,
  },
  getIpPolicyRule: { ...IP_POLICY_RULE, method: 'GET', answer: ipPolicyRuleSchema },
  updateIpPolicyRule: {
    ...IP_POLICY_RULE,
    method: 'PATCH',
    body: ipPolicyRuleUpdateSchema,
    answer: ipPolicyRuleSchema,
  },
  deleteIpPolicyRule: { ...IP_POLICY_RULE, method: 'DELETE' },

  listVaults: { ...VAULTS, method: 'GET', answer: vaultListSchema, items: 'vaults' },
  createVault: { ...VAULTS, method: 'POST', body: vaultCreateSchema, answer: vaultSchema },
  getVault: { ...VAULT, method: 'GET', answer: vaultSchema },
  updateVault: { ...VAULT, method: 'PATCH', body: vaultUpdateSchema, answer: vaultSchema },
  deleteVault: { ...VAULT, method: 'DELETE' },
  listVaultSecrets: {
    ...VAULT_SECRETS,
    method: 'GET',
    answer: secretListSchema,
    items: 'secrets',
  },

  listSecrets: { ...SECRETS, method: 'GET', answer: secretListSchema, items: 'secrets' },
  createVaultSecret: {
    ...SECRETS,
    method: 'POST',
    body: secretCreateSchema,
    answer: secretSchema,
  },
  getVaultSecret: { ...SECRET, method: 'GET', answer: secretSchema },
  updateVaultSecret: {
    ...SECRET,
    method: 'PATCH',
    body: secretUpdateSchema,
    answer: secretSchema,
  },
  deleteVaultSecret: { ...SECRET, method: 'DELETE' },
  // ---- end of IP policies and vaults ----
} as const satisfies Record<FixedMethod, Row>;

interface Owner {
  readonly template: string;
  readonly target: TargetAddress;
}

/** Where each owner's modules hang: under the owner's own template. */
const MODULE_OWNERS: Readonly<Record<ModuleOwnerKind, Owner>> = {
  tls_edge: { template: TLS_EDGE.template, target: { kind: 'edge_module', edge_kind: 'tls' } },
  https_edge: {
    template: HTTPS_EDGE.template,
    target: { kind: 'edge_module', edge_kind: 'https' },
  },
  route: { template: ROUTE.template, target: { kind: 'route_module' } },
};

/** GET, PUT and DELETE of every module of every owner, from the module schema maps. */
function moduleOperations(): ApiOperation[] {
  const out: ApiOperation[] = [];
  for (const [kind, owner] of Object.entries(MODULE_OWNERS) as [ModuleOwnerKind, Owner][]) {
    const writes: Readonly<Record<string, z.ZodType>> = MODULE_WRITE_SCHEMAS[kind];
    const reads: Readonly<Record<string, z.ZodType>> = MODULE_READ_SCHEMAS[kind];
    for (const [module, body] of Object.entries(writes)) {
      const answer = reads[module];
      if (answer === undefined) {
        throw new EdgesyncError('ES_INTERNAL', `${kind} module ${module} has no read schema`);
      }
      const template = `${owner.template}/${module}`;
      const target = { ...owner.target, module };
      out.push(
        { name: 'getModule', method: 'GET', template, target, answer },
        { name: 'putModule', method: 'PUT', template, target, body, answer },
        { name: 'deleteModule', method: 'DELETE', template, target },
      );
    }
  }
  return out;
}

/** The client methods with a fixed template, each with its row. */
export const FIXED_OPERATIONS: readonly (ApiOperation & { readonly name: FixedMethod })[] =
  Object.entries(FIXED).map(([name, row]) => ({ ...row, name: name as FixedMethod }));

/** Every operation of the Edge API the client sends. */
export const API_OPERATIONS: readonly ApiOperation[] = [...FIXED_OPERATIONS, ...moduleOperations()];

/**
 * The rows by target: kind, then edge kind, then module (`''` for none), then method. Nested
 * maps rather than one joined string key: plans look a template up once per operation, and
 * building a key string each time cost more than the lookups.
 */
const BY_TARGET = new Map<string, Map<string, Map<string, Map<string, ApiOperation>>>>();
for (const op of API_OPERATIONS) {
  const { kind, edge_kind = '', module = '' } = op.target;
  const byEdgeKind =
    BY_TARGET.get(kind) ?? new Map<string, Map<string, Map<string, ApiOperation>>>();
  const byModule = byEdgeKind.get(edge_kind) ?? new Map<string, Map<string, ApiOperation>>();
  const byMethod = byModule.get(module) ?? new Map<string, ApiOperation>();
  byMethod.set(op.method, op);
  byModule.set(module, byMethod);
  byEdgeKind.set(edge_kind, byModule);
  BY_TARGET.set(kind, byEdgeKind);
}

/** The rows of one target, by method. */
function rowsOf(target: TargetAddress): Map<string, ApiOperation> | undefined {
  return BY_TARGET.get(target.kind)
    ?.get(target.edge_kind ?? '')
    ?.get(target.module ?? '');
}

/** The operation of a method on a target; undefined when the API has none. */
export function operationFor(method: HttpMethod, target: TargetAddress): ApiOperation | undefined {
  return rowsOf(target)?.get(method);
}

/** A module owner's address for one of its modules. */
function moduleAddress(owner: ModuleOwner, module: string): TargetAddress {
  return { ...MODULE_OWNERS[owner.kind].target, module };
}

/** The module operation of a method; undefined when the owner has no such module. */
export function moduleOperation(
  method: HttpMethod,
  owner: ModuleOwner,
  module: string,
): ApiOperation | undefined {
  return operationFor(method, moduleAddress(owner, module));
}

/** The template parameters of a module owner. */
export function ownerParams(owner: ModuleOwner): Readonly<Record<string, string>> {
  return owner.kind === 'route' ? { edge_id: owner.edgeId, id: owner.id } : { id: owner.id };
}

/**
 * The path template of a target. A module the table lacks still renders, under its owner's
 * template: a refused operation is shown by its path too.
 */
export function templateOf(target: TargetAddress): string {
  // Every method on one target shares its template: any row answers.
  const known = rowsOf(target)?.values().next().value;
  if (known !== undefined) return known.template;
  if (target.module !== undefined) {
    const owner = Object.values(MODULE_OWNERS).find(
      (o) => o.target.kind === target.kind && o.target.edge_kind === target.edge_kind,
    );
    if (owner !== undefined) return `${owner.template}/${target.module}`;
  }
  throw new EdgesyncError('ES_INTERNAL', `no API path for a ${target.kind} target`);
}

type Part = string | { readonly param: string };

function parse(template: string): readonly Part[] {
  return template
    .split(/(\{[a-z_]+\})/)
    .filter((p) => p !== '')
    .map((p) => (p.startsWith('{') ? { param: p.slice(1, -1) } : p));
}

/** The table's templates as literal text and `{param}` slots, parsed once. */
const PARTS = new Map(API_OPERATIONS.map((op) => [op.template, parse(op.template)]));

function partsOf(template: string): readonly Part[] {
  return PARTS.get(template) ?? parse(template);
}

/** The template's parameter names, in order. */
export function templateParams(template: string): string[] {
  return partsOf(template).flatMap((p) => (typeof p === 'string' ? [] : [p.param]));
}

/** Fills each `{param}` of a template with `segmentOf(param)` (already a path segment). */
export function fillTemplate(template: string, segmentOf: (param: string) => string): string {
  let out = '';
  for (const part of partsOf(template))
    out += typeof part === 'string' ? part : segmentOf(part.param);
  return out;
}

/** A path segment from an ID: never empty (that would address the collection instead). */
export function segment(id: string): string {
  if (id === '') throw new EdgesyncError('ES_INTERNAL', 'empty resource ID in an API path');
  return encodeURIComponent(id);
}

const TEMPLATES: ReadonlySet<string> = new Set(API_OPERATIONS.map((op) => op.template));
const TEMPLATE_SEGMENTS = [...TEMPLATES].map((t) => ({ template: t, segments: t.split('/') }));

/**
 * The template of a path, or of a template (which is its own): each `{param}` stands for one
 * segment. Undefined for a path of no operation of the table.
 */
export function templateOfPath(path: string): string | undefined {
  if (TEMPLATES.has(path)) return path;
  const segments = path.split('/');
  const found = TEMPLATE_SEGMENTS.find(
    (t) =>
      t.segments.length === segments.length &&
      t.segments.every((s, i) => s === segments[i] || (s.startsWith('{') && segments[i] !== '')),
  );
  return found?.template;
}
