/**
 * The route operations of an HTTPS edge: create, get, update, delete and the module
 * sub-resources. Create, update and a module PUT re-check the edge-wide rules (a match used once
 * per edge, at most one authentication module per route and one authenticated route per edge),
 * and a SAML module gets its request-signing certificate once and keeps it across later writes.
 */
import type { z } from 'zod';
import { checkAuthRoutes, ERROR_CODE, ID_PREFIX } from '../hosted/edge-api.js';
import { AUTH_MODULES, ROUTE_MODULES } from '../hosted/modules/index.js';
import { RequestError } from './errors.js';
import {
  type AnyModules,
  type Call,
  checkBodyId,
  type HandlerDeps,
  httpsEdge,
  json,
  moduleBody,
  moduleReply,
  modulesFrom,
  noContent,
  patchModules,
  type Reply,
  refuse,
  route,
} from './handler-common.js';
import { type HttpsEdgeRec, type RouteRec, rfc3339Seconds } from './model.js';
import { makeSigningCertificate } from './saml-cert.js';
import {
  ROUTE_MODULE_SCHEMAS,
  type RouteModules,
  routeCreateSchema,
  routeUpdateSchema,
} from './schemas.js';
import { parseBody } from './validate.js';

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

// Long on purpose: a table of one short handler per route operation, over shared deps.
export function routeHandlers({ store, render, ids, now }: HandlerDeps) {
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

  return {
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
        created_at: rfc3339Seconds(now()),
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
      return moduleReply(render, call, r.modules, r.id);
    },
    putRouteModule(call: Call): Reply {
      const { edge, route: old } = route(call);
      const name = call.module as keyof typeof ROUTE_MODULE_SCHEMAS;
      const value = parseBody(
        ROUTE_MODULE_SCHEMAS[name] as z.ZodType,
        moduleBody(call.body, { id: old.id, edgeId: edge.id }),
      );
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
  };
}
