/**
 * The operations of the Edge API on one account's state: create, get, list, update and delete
 * of TLS edges, HTTPS edges, routes and bot users, and the module sub-resources. Each handler
 * validates, checks the combined state (hostports, route matches, one auth module), builds the
 * new immutable record and commits it; it renders the response before awaiting durability so
 * the answer shows exactly the state this request produced.
 */
import type { z } from 'zod';
import {
  AUTH_MODULES,
  checkAuthRoutes,
  checkMutualTlsTermination,
  ERROR_CODE,
  HTTPS_EDGE_MODULES,
  ID_PREFIX,
  ROUTE_MODULES,
  type RuleViolation,
  TLS_EDGE_MODULES,
} from '../spec/api.js';
import { invalidValue, RequestError } from './errors.js';
import type { IdGenerator } from './ids.js';
import {
  type BotUserRec,
  type HttpsEdgeRec,
  type RouteRec,
  rfc3339Seconds,
  type TlsEdgeRec,
} from './model.js';
import type { Renderer } from './render.js';
import { makeSigningCertificate } from './saml-cert.js';
import {
  botUserCreateSchema,
  botUserUpdateSchema,
  HTTPS_EDGE_MODULE_SCHEMAS,
  type HttpsEdgeModules,
  httpsEdgeCreateSchema,
  httpsEdgeUpdateSchema,
  ROUTE_MODULE_SCHEMAS,
  type RouteModules,
  routeCreateSchema,
  routeUpdateSchema,
  TLS_EDGE_MODULE_SCHEMAS,
  type TlsEdgeModules,
  tlsEdgeCreateSchema,
  tlsEdgeUpdateSchema,
} from './schemas.js';
import type { AccountState, Collection, Store } from './store.js';
import { parseBody } from './validate.js';

/** What a handler answers: a status and a JSON body (absent for 204). */
export interface Reply {
  readonly status: number;
  readonly body?: string;
  /** Resolves when the change is durable; the reply must not be sent before. */
  readonly durable?: Promise<void>;
}

export interface Call {
  readonly accountId: string;
  readonly account: AccountState;
  /** Path IDs, already checked for their prefix. */
  readonly ids: readonly string[];
  readonly module?: string;
  readonly page?: { beforeId: string | undefined; limit: number };
  readonly body?: unknown;
}

export interface HandlerDeps {
  readonly store: Store;
  readonly render: Renderer;
  readonly ids: IdGenerator;
  readonly now: () => number;
}

type AnyModules = Record<string, unknown>;

export function createHandlers(deps: HandlerDeps) {
  const { store, render, ids, now } = deps;

  const json = (status: number, body: string, durable?: Promise<void>): Reply =>
    durable === undefined ? { status, body } : { status, body, durable };
  const noContent = (durable?: Promise<void>): Reply =>
    durable === undefined ? { status: 204 } : { status: 204, durable };

  function id(call: Call, i: number): string {
    return call.ids[i] as string;
  }

  function tlsEdge(call: Call): TlsEdgeRec {
    const edge = call.account.tls.get(id(call, 0));
    if (edge === undefined) throw notFound('TLS edge', id(call, 0), ERROR_CODE.edgeNotFound);
    return edge;
  }
  function httpsEdge(call: Call): HttpsEdgeRec {
    const edge = call.account.https.get(id(call, 0));
    if (edge === undefined) throw notFound('HTTPS edge', id(call, 0), ERROR_CODE.edgeNotFound);
    return edge;
  }
  function route(call: Call): { edge: HttpsEdgeRec; route: RouteRec } {
    const edge = httpsEdge(call);
    const rid = id(call, 1);
    const found = edge.routes.find((r) => r.id === rid);
    if (found === undefined) throw notFound('route', rid, ERROR_CODE.routeNotFound);
    return { edge, route: found };
  }
  function botUser(call: Call): BotUserRec {
    const bot = call.account.bots.get(id(call, 0));
    if (bot === undefined) throw notFound('bot user', id(call, 0), ERROR_CODE.notFound);
    return bot;
  }

  function checkHostports(account: AccountState, hostports: readonly string[], selfId?: string) {
    const taken = account.hostportOwner(hostports, selfId);
    if (taken !== undefined) {
      throw new RequestError(
        400,
        ERROR_CODE.hostportInUse,
        `hostport ${taken} is already used by another edge of this account`,
      );
    }
  }

  function checkBodyId(value: string | undefined, expected: string, field: string) {
    if (value !== undefined && value !== expected) {
      throw invalidValue(`${field} in the body (${value}) does not match the path (${expected})`);
    }
  }

  function refuse(violation: RuleViolation | undefined): void {
    if (violation !== undefined) throw new RequestError(400, violation.code, violation.message);
  }

  /** `mutual_tls` needs TLS terminated at the edge (7062). */
  function checkTlsEdgeModules(modules: TlsEdgeModules): void {
    refuse(
      checkMutualTlsTermination(modules.tls_termination?.terminate_at, modules.mutual_tls != null),
    );
  }

  function checkRoute(edge: HttpsEdgeRec, match: string, modules: RouteModules, selfId?: string) {
    const clash = edge.routes.find((r) => r.match === match && r.id !== selfId);
    if (clash !== undefined) {
      throw new RequestError(
        400,
        ERROR_CODE.matchInUse,
        `match ${JSON.stringify(match)} is already used by route ${clash.id} of this edge`,
      );
    }
    const auth = AUTH_MODULES.filter((m) => modules[m] != null);
    if (auth.length > 1) {
      throw new RequestError(
        400,
        ERROR_CODE.authConflict,
        `a route may have at most one of oauth, oidc and saml; this would set ${auth.join(' and ')}`,
      );
    }
    // At most one route of the edge may carry an authentication module (7155).
    if (auth.length > 0) {
      const others = edge.routes.filter(
        (r) => r.id !== selfId && AUTH_MODULES.some((m) => r.modules[m] != null),
      );
      refuse(checkAuthRoutes(others.length + 1));
    }
  }

  /** Modules of a create body (null and absent both mean unset). */
  function modulesFrom<K extends string>(names: readonly K[], body: Partial<Record<K, unknown>>) {
    const out: Record<string, unknown> = {};
    for (const name of names) out[name] = body[name] ?? null;
    return out;
  }

  /** Modules after a PATCH: present ones replace, absent ones stay. */
  function patchModules(names: readonly string[], current: object, body: Record<string, unknown>) {
    const out: AnyModules = { ...current };
    for (const name of names) if (body[name] != null) out[name] = body[name];
    return out;
  }

  /** The stored SAML module: keeps the certificate the route already has. */
  function withSamlCertificate(routeId: string, next: AnyModules, previous?: RouteModules) {
    const saml = next.saml as
      | Omit<NonNullable<RouteModules['saml']>, 'request_signing_certificate_pem'>
      | null
      | undefined;
    if (saml == null || 'request_signing_certificate_pem' in saml) return next;
    const pem =
      previous?.saml?.request_signing_certificate_pem ?? makeSigningCertificate(routeId, now());
    return { ...next, saml: { ...saml, request_signing_certificate_pem: pem } };
  }

  function list<T extends { readonly id: string }>(
    call: Call,
    collection: Collection<T>,
    key: string,
    path: string,
    one: (rec: T) => string,
  ): Reply {
    const page = call.page ?? { beforeId: undefined, limit: 100 };
    const { items, more } = collection.page(page.beforeId, page.limit);
    const last = items[items.length - 1];
    const uri = `${render.base}${path}`;
    const next =
      more && last !== undefined
        ? JSON.stringify(`${uri}?before_id=${last.id}&limit=${page.limit}`)
        : 'null';
    return json(
      200,
      `{"${key}":[${items.map(one).join(',')}],"uri":${JSON.stringify(uri)},"next_page_uri":${next}}`,
    );
  }

  const created = () => rfc3339Seconds(now());

  return {
    // ---- TLS edges ---------------------------------------------------------------------------
    createTlsEdge(call: Call): Reply {
      const b = parseBody(tlsEdgeCreateSchema, call.body);
      const hostports = b.hostports ?? [];
      checkHostports(call.account, hostports);
      const rec: TlsEdgeRec = {
        id: ids.next(ID_PREFIX.tlsEdge),
        created_at: created(),
        description: b.description ?? '',
        metadata: b.metadata ?? '',
        hostports,
        modules: modulesFrom(TLS_EDGE_MODULES, b) as TlsEdgeModules,
      };
      checkTlsEdgeModules(rec.modules);
      const durable = store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec });
      return json(201, render.tlsEdge(rec), durable);
    },
    getTlsEdge: (call: Call): Reply => json(200, render.tlsEdge(tlsEdge(call))),
    listTlsEdges: (call: Call): Reply =>
      list(call, call.account.tls, 'tls_edges', '/edges/tls', (r) => render.tlsEdge(r)),
    updateTlsEdge(call: Call): Reply {
      const edge = tlsEdge(call);
      const b = parseBody(tlsEdgeUpdateSchema, call.body);
      checkBodyId(b.id, edge.id, 'id');
      if (b.hostports !== undefined) checkHostports(call.account, b.hostports, edge.id);
      const rec: TlsEdgeRec = {
        ...edge,
        description: b.description ?? edge.description,
        metadata: b.metadata ?? edge.metadata,
        hostports: b.hostports ?? edge.hostports,
        modules: patchModules(TLS_EDGE_MODULES, edge.modules, b) as TlsEdgeModules,
      };
      checkTlsEdgeModules(rec.modules);
      const durable = store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec });
      return json(200, render.tlsEdge(rec), durable);
    },
    deleteTlsEdge(call: Call): Reply {
      const edge = tlsEdge(call);
      return noContent(store.commit({ t: 'del', k: 'tls', a: call.accountId, id: edge.id }));
    },
    getTlsEdgeModule(call: Call): Reply {
      const edge = tlsEdge(call);
      return moduleReply(call, edge.modules, edge.id);
    },
    putTlsEdgeModule(call: Call): Reply {
      const edge = tlsEdge(call);
      const name = call.module as keyof typeof TLS_EDGE_MODULE_SCHEMAS;
      const value = parseBody(TLS_EDGE_MODULE_SCHEMAS[name] as z.ZodType, call.body);
      const rec: TlsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: value } };
      checkTlsEdgeModules(rec.modules);
      const durable = store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec });
      return json(200, render.module(name, rec.modules, rec.id), durable);
    },
    deleteTlsEdgeModule(call: Call): Reply {
      const edge = tlsEdge(call);
      const name = call.module as keyof TlsEdgeModules;
      if (edge.modules[name] == null) return noContent();
      const rec: TlsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: null } };
      return noContent(store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec }));
    },

    // ---- HTTPS edges -------------------------------------------------------------------------
    createHttpsEdge(call: Call): Reply {
      const b = parseBody(httpsEdgeCreateSchema, call.body);
      const hostports = b.hostports ?? [];
      checkHostports(call.account, hostports);
      const rec: HttpsEdgeRec = {
        id: ids.next(ID_PREFIX.httpsEdge),
        created_at: created(),
        description: b.description ?? '',
        metadata: b.metadata ?? '',
        hostports,
        modules: modulesFrom(HTTPS_EDGE_MODULES, b) as HttpsEdgeModules,
        routes: [],
      };
      const durable = store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec });
      return json(201, render.httpsEdge(rec), durable);
    },
    getHttpsEdge: (call: Call): Reply => json(200, render.httpsEdge(httpsEdge(call))),
    listHttpsEdges: (call: Call): Reply =>
      list(call, call.account.https, 'https_edges', '/edges/https', (r) => render.httpsEdge(r)),
    updateHttpsEdge(call: Call): Reply {
      const edge = httpsEdge(call);
      const b = parseBody(httpsEdgeUpdateSchema, call.body);
      checkBodyId(b.id, edge.id, 'id');
      if (b.hostports !== undefined) checkHostports(call.account, b.hostports, edge.id);
      const rec: HttpsEdgeRec = {
        ...edge,
        description: b.description ?? edge.description,
        metadata: b.metadata ?? edge.metadata,
        hostports: b.hostports ?? edge.hostports,
        modules: patchModules(HTTPS_EDGE_MODULES, edge.modules, b) as HttpsEdgeModules,
      };
      const durable = store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec });
      return json(200, render.httpsEdge(current(call.account, rec.id)), durable);
    },
    deleteHttpsEdge(call: Call): Reply {
      const edge = httpsEdge(call);
      return noContent(store.commit({ t: 'del', k: 'https', a: call.accountId, id: edge.id }));
    },
    getHttpsEdgeModule(call: Call): Reply {
      const edge = httpsEdge(call);
      return moduleReply(call, edge.modules, edge.id);
    },
    putHttpsEdgeModule(call: Call): Reply {
      const edge = httpsEdge(call);
      const name = call.module as keyof typeof HTTPS_EDGE_MODULE_SCHEMAS;
      const value = parseBody(HTTPS_EDGE_MODULE_SCHEMAS[name] as z.ZodType, call.body);
      const rec: HttpsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: value } };
      const durable = store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec });
      return json(200, render.module(name, rec.modules, rec.id), durable);
    },
    deleteHttpsEdgeModule(call: Call): Reply {
      const edge = httpsEdge(call);
      const name = call.module as keyof HttpsEdgeModules;
      if (edge.modules[name] == null) return noContent();
      const rec: HttpsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: null } };
      return noContent(store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec }));
    },

    // ---- routes ------------------------------------------------------------------------------
    createRoute(call: Call): Reply {
      const edge = httpsEdge(call);
      const b = parseBody(routeCreateSchema, call.body);
      checkBodyId(b.edge_id, edge.id, 'edge_id');
      const routeId = ids.next(ID_PREFIX.route);
      const modules = withSamlCertificate(routeId, modulesFrom(ROUTE_MODULES, b)) as RouteModules;
      checkRoute(edge, b.match, modules);
      const rec: RouteRec = {
        edge_id: edge.id,
        id: routeId,
        created_at: created(),
        match_type: b.match_type,
        match: b.match,
        description: b.description ?? '',
        metadata: b.metadata ?? '',
        modules,
      };
      const durable = store.commit({ t: 'put', k: 'route', a: call.accountId, r: rec });
      return json(201, render.route(rec), durable);
    },
    getRoute: (call: Call): Reply => json(200, render.route(route(call).route)),
    updateRoute(call: Call): Reply {
      const { edge, route: old } = route(call);
      const b = parseBody(routeUpdateSchema, call.body);
      checkBodyId(b.edge_id, edge.id, 'edge_id');
      checkBodyId(b.id, old.id, 'id');
      const modules = withSamlCertificate(
        old.id,
        patchModules(ROUTE_MODULES, old.modules, b),
        old.modules,
      ) as RouteModules;
      const match = b.match ?? old.match;
      checkRoute(edge, match, modules, old.id);
      const rec: RouteRec = {
        ...old,
        match_type: b.match_type ?? old.match_type,
        match,
        description: b.description ?? old.description,
        metadata: b.metadata ?? old.metadata,
        modules,
      };
      const durable = store.commit({ t: 'put', k: 'route', a: call.accountId, r: rec });
      return json(200, render.route(rec), durable);
    },
    deleteRoute(call: Call): Reply {
      const { edge, route: old } = route(call);
      const m = { t: 'del', k: 'route', a: call.accountId, id: old.id, e: edge.id } as const;
      return noContent(store.commit(m));
    },
    getRouteModule(call: Call): Reply {
      const { route: r } = route(call);
      return moduleReply(call, r.modules, r.id);
    },
    putRouteModule(call: Call): Reply {
      const { edge, route: old } = route(call);
      const name = call.module as keyof typeof ROUTE_MODULE_SCHEMAS;
      const value = parseBody(ROUTE_MODULE_SCHEMAS[name] as z.ZodType, call.body);
      const modules = withSamlCertificate(
        old.id,
        { ...old.modules, [name]: value },
        old.modules,
      ) as RouteModules;
      checkRoute(edge, old.match, modules, old.id);
      const rec: RouteRec = { ...old, modules };
      const durable = store.commit({ t: 'put', k: 'route', a: call.accountId, r: rec });
      return json(200, render.module(name, rec.modules, rec.id), durable);
    },
    deleteRouteModule(call: Call): Reply {
      const { route: old } = route(call);
      const name = call.module as keyof RouteModules;
      if (old.modules[name] == null) return noContent();
      const rec: RouteRec = { ...old, modules: { ...old.modules, [name]: null } };
      return noContent(store.commit({ t: 'put', k: 'route', a: call.accountId, r: rec }));
    },

    // ---- bot users ---------------------------------------------------------------------------
    createBotUser(call: Call): Reply {
      const b = parseBody(botUserCreateSchema, call.body);
      const rec: BotUserRec = {
        id: ids.next(ID_PREFIX.botUser),
        created_at: created(),
        name: b.name,
        active: b.active ?? true,
      };
      const durable = store.commit({ t: 'put', k: 'bot', a: call.accountId, r: rec });
      return json(201, render.botUser(rec), durable);
    },
    getBotUser: (call: Call): Reply => json(200, render.botUser(botUser(call))),
    listBotUsers: (call: Call): Reply =>
      list(call, call.account.bots, 'bot_users', '/bot_users', (r) => render.botUser(r)),
    updateBotUser(call: Call): Reply {
      const bot = botUser(call);
      const b = parseBody(botUserUpdateSchema, call.body);
      checkBodyId(b.id, bot.id, 'id');
      const rec: BotUserRec = { ...bot, name: b.name ?? bot.name, active: b.active ?? bot.active };
      const durable = store.commit({ t: 'put', k: 'bot', a: call.accountId, r: rec });
      return json(200, render.botUser(rec), durable);
    },
    deleteBotUser(call: Call): Reply {
      const bot = botUser(call);
      return noContent(store.commit({ t: 'del', k: 'bot', a: call.accountId, id: bot.id }));
    },
  };

  function moduleReply(call: Call, modules: object, ownerId: string): Reply {
    const name = call.module as keyof RouteModules;
    if ((modules as AnyModules)[name] == null) {
      throw new RequestError(404, ERROR_CODE.notFound, `module ${name} is not set on ${ownerId}`);
    }
    return json(200, render.module(name, modules as AnyModules, ownerId));
  }
}

/** The edge as the store now holds it (an edge put keeps its routes). */
function current(account: AccountState, id: string): HttpsEdgeRec {
  return account.https.get(id) as HttpsEdgeRec;
}

function notFound(what: string, id: string, code: (typeof ERROR_CODE)[keyof typeof ERROR_CODE]) {
  return new RequestError(404, code, `${what} ${id} not found`);
}

export type Handlers = ReturnType<typeof createHandlers>;
