/**
 * Every Edge API module, defined once (a file per module), and which owner carries which under
 * which name. Everything else that knows a module's fields derives from these definitions: the
 * manifest schemas (src/manifest/modules.ts), the client's write and read schemas (src/api/),
 * the defaults table (../defaults.ts), the JSON Schema and the manifest reference, the planner's
 * normalisation (src/plan/normalize.ts) and `import` (src/apply/import.ts). The local server
 * (src/server/) keeps its own schemas on purpose: a test holds it to these definitions.
 */
import type { z } from 'zod';
import { backend } from './backend.js';
import { checkCircuitBreaker, circuitBreaker } from './circuit-breaker.js';
import { compression } from './compression.js';
import type { Field, ModuleDefinition } from './field.js';
import { headers } from './headers.js';
import { ipRestriction } from './ip-restriction.js';
import { mutualTls } from './mutual-tls.js';
import { oauth } from './oauth.js';
import { oidc } from './oidc.js';
import { saml } from './saml.js';
import { tlsTermination, tlsTerminationAtEdge } from './tls-termination.js';
import { trafficPolicy } from './traffic-policy.js';
import { userAgentFilter } from './user-agent-filter.js';
import { webhookVerification } from './webhook-verification.js';
import { websocketTcpConverter } from './websocket-tcp-converter.js';

export type { DefaultValue, Field, ModuleDefinition } from './field.js';
export {
  backend,
  checkCircuitBreaker,
  circuitBreaker,
  compression,
  headers,
  ipRestriction,
  mutualTls,
  oauth,
  oidc,
  saml,
  tlsTermination,
  tlsTerminationAtEdge,
  trafficPolicy,
  userAgentFilter,
  webhookVerification,
  websocketTcpConverter,
};

/** The kinds of resource that carry modules, as sub-resources (`{owner}/{module}` paths). */
export type ModuleOwner = 'tls_edge' | 'https_edge' | 'route';

/**
 * Which owners carry each module, and with which definition: the one table of module
 * ownership. A row per sub-resource name, in the order of the read shapes (each owner's modules
 * are its rows in this order); a module two owners carry differently (TLS termination, which an
 * HTTPS edge always does at the edge) names a definition per owner. Every list of an owner's
 * modules (the names and their types below, the manifest's and the client's schemas of each
 * owner, the planner's diffs, the local server's module keys) is read from here.
 */
export const MODULE_OWNERS = {
  backend: { tls_edge: backend, route: backend },
  ip_restriction: { tls_edge: ipRestriction, route: ipRestriction },
  mutual_tls: { tls_edge: mutualTls, https_edge: mutualTls },
  tls_termination: { tls_edge: tlsTermination, https_edge: tlsTerminationAtEdge },
  circuit_breaker: { route: circuitBreaker },
  compression: { route: compression },
  request_headers: { route: headers },
  response_headers: { route: headers },
  webhook_verification: { route: webhookVerification },
  oauth: { route: oauth },
  saml: { route: saml },
  oidc: { route: oidc },
  websocket_tcp_converter: { route: websocketTcpConverter },
  user_agent_filter: { route: userAgentFilter },
  traffic_policy: { tls_edge: trafficPolicy, route: trafficPolicy },
} as const satisfies Readonly<Record<string, Partial<Record<ModuleOwner, ModuleDefinition>>>>;

type Table = typeof MODULE_OWNERS;
/** The names of the modules `O` carries. */
export type ModuleOf<O extends ModuleOwner> = {
  [M in keyof Table]: O extends keyof Table[M] ? M : never;
}[keyof Table];
export type TlsEdgeModule = ModuleOf<'tls_edge'>;
export type HttpsEdgeModule = ModuleOf<'https_edge'>;
export type RouteModule = ModuleOf<'route'>;

/** The modules of `O`, by sub-resource name, each with its definition for that owner. */
export type OwnerModules<O extends ModuleOwner> = {
  readonly [M in ModuleOf<O>]: Table[M] extends { readonly [K in O]: infer D } ? D : never;
};

function ownedBy<O extends ModuleOwner>(owner: O): OwnerModules<O> {
  const out: Record<string, ModuleDefinition> = {};
  for (const [name, row] of Object.entries(MODULE_OWNERS)) {
    const def = (row as Partial<Record<ModuleOwner, ModuleDefinition>>)[owner];
    if (def !== undefined) out[name] = def;
  }
  return out as OwnerModules<O>;
}

/** The modules of each owner, by sub-resource name (the table's rows, per owner). */
export const MODULES: { readonly [O in ModuleOwner]: OwnerModules<O> } = {
  tls_edge: ownedBy('tls_edge'),
  https_edge: ownedBy('https_edge'),
  route: ownedBy('route'),
};

/** Module sub-resources per owner, in the order they appear in read shapes. */
export const TLS_EDGE_MODULES = Object.keys(MODULES.tls_edge) as readonly TlsEdgeModule[];
export const HTTPS_EDGE_MODULES = Object.keys(MODULES.https_edge) as readonly HttpsEdgeModule[];
export const ROUTE_MODULES = Object.keys(MODULES.route) as readonly RouteModule[];

type HeaderModule = {
  [M in RouteModule]: OwnerModules<'route'>[M] extends typeof headers ? M : never;
}[RouteModule];
/** The route modules the headers definition defines (request and response headers). */
export const HEADER_MODULES = ROUTE_MODULES.filter(
  (m) => MODULES.route[m] === headers,
) as readonly HeaderModule[];

/** At most one of these per route (7155 across an edge's routes, 7079 on one route). */
export const AUTH_MODULES = ['oauth', 'oidc', 'saml'] as const satisfies readonly RouteModule[];

type Schema = 'manifest' | 'write' | 'read';
/** One of each module's schemas (`manifest`, `write` or `read`) per owner, keyed like MODULES. */
export type ModuleSchemas<S extends Schema> = {
  readonly [O in ModuleOwner]: {
    readonly [M in keyof OwnerModules<O>]: OwnerModules<O>[M][S & keyof OwnerModules<O>[M]];
  };
};

/** The module definitions' `manifest`, `write` or `read` schemas, per owner. */
export function moduleSchemas<S extends Schema>(which: S): ModuleSchemas<S> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [owner, modules] of Object.entries(MODULES)) {
    out[owner] = Object.fromEntries(
      Object.entries(modules).map(([name, def]) => [name, (def as ModuleDefinition)[which]]),
    );
  }
  return out as ModuleSchemas<S>;
}

/** Each schema made optional: an owner's modules as the optional fields of a body or manifest. */
export function optionalEach<S extends Readonly<Record<string, z.ZodType>>>(schemas: S) {
  return Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, s.optional()])) as {
    -readonly [K in keyof S]: z.ZodOptional<S[K]>;
  };
}

/** Each schema made nullable: an owner's modules as a read shape holds them (null when unset). */
export function nullableEach<S extends Readonly<Record<string, z.ZodType>>>(schemas: S) {
  return Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, s.nullable()])) as {
    -readonly [K in keyof S]: z.ZodNullable<S[K]>;
  };
}

/**
 * Each module name with its definition, once (the first owner's where owners differ: a TLS
 * edge's TLS termination, the fullest). In the table's order, which the defaults table follows.
 */
export const MODULES_BY_NAME: ReadonlyMap<string, ModuleDefinition> = new Map(
  Object.entries(MODULE_OWNERS).map(([name, row]): [string, ModuleDefinition] => [
    name,
    Object.values(row)[0] as ModuleDefinition,
  ]),
);

/** The fields of `module` (by name) that satisfy `test`, in definition order. */
export function fieldsWhere(
  module: string,
  test: (field: Field) => boolean,
): [name: string, field: Field][] {
  const def = MODULES_BY_NAME.get(module);
  if (def === undefined) return [];
  return Object.entries(def.fields).filter(([, f]) => test(f));
}
