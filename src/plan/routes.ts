/**
 * Routes of HTTPS edges: create, update, delete, and the auth-kind swap. A route whose auth
 * module changes kind (oauth / oidc / saml) fails closed, in this order: DELETE backend (when
 * live has one), DELETE the old auth module, one PATCH setting the new auth module together
 * with the backend (and every other change; atomic on the server), then the other module
 * DELETEs. At most one route of an edge may carry an auth module (`releaseAuthFirst`).
 */
import type { HttpsEdge, HttpsRoute, RouteCreate, RouteUpdate } from '../api/schemas.js';
import { AUTH_MODULES, ROUTE_MODULES } from '../hosted/modules/index.js';
import { storedRouteMetadata } from '../manifest/metadata.js';
import type { RouteManifest } from '../manifest/schema.js';
import type { PlanContext } from './context.js';
import { Sensitivity } from './diff.js';
import type { Operation } from './model.js';
import { liveModules } from './normalize.js';
import { createRoute, deleteRoute, deleteRouteModule, updateRoute } from './operations.js';
import {
  createFields,
  describeDiff,
  diffResource,
  hasChanges,
  moduleChange,
  noOperations,
  pickModules,
  type ScalarDiff,
} from './resource-diff.js';
import { type Ref, targetModule } from './target.js';

export function routeAddress(edgeAddress: string, match: string): string {
  return `${edgeAddress}.route[${JSON.stringify(match)}]`;
}

function routeBody(r: RouteManifest): RouteCreate {
  const metadata = storedRouteMetadata(r.metadata);
  return {
    match_type: r.match_type,
    match: r.match,
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(metadata !== '' ? { metadata } : {}),
    ...pickModules(r, ROUTE_MODULES),
  };
}

/** A route created on `edge` (a live ID, or the edge this plan creates first). */
export function planRouteCreate(
  ctx: PlanContext,
  edgeAddress: string,
  edge: Ref,
  r: RouteManifest,
): void {
  const address = routeAddress(edgeAddress, r.match);
  const body = routeBody(r);
  const fields: Readonly<Record<string, unknown>> = body;
  ctx.changes.push({
    address,
    kind: 'route',
    name: r.match,
    root: edgeAddress,
    action: 'create',
    reason: 'not found live',
    source: r.source,
    fields: createFields(body, new Sensitivity(r.sensitive)),
    modules: ROUTE_MODULES.filter((n) => fields[n] !== undefined).map((module) =>
      moduleChange(module, 'set'),
    ),
    operations: [
      createRoute(edge, body, `create route ${r.match}`, {
        binds: address,
        sensitive: r.sensitive,
      }),
    ],
  });
}

export function planRoutes(
  ctx: PlanContext,
  edgeAddress: string,
  desired: readonly RouteManifest[],
  live: HttpsEdge,
): void {
  const liveByMatch = new Map(live.routes.map((r) => [r.match, r]));
  for (const r of desired) {
    const current = liveByMatch.get(r.match);
    if (current === undefined) planRouteCreate(ctx, edgeAddress, live.id, r);
    else planRouteUpdate(ctx, edgeAddress, r, current);
  }
  const wanted = new Set(desired.map((r) => r.match));
  for (const r of live.routes) {
    if (wanted.has(r.match)) continue;
    ctx.changes.push({
      address: routeAddress(edgeAddress, r.match),
      kind: 'route',
      name: r.match,
      root: edgeAddress,
      action: 'delete',
      // Removed from the manifest, or added by hand: the live route is simply not declared.
      reason: 'route not in the manifest',
      id: r.id,
      fields: [],
      modules: [],
      operations: [deleteRoute(live.id, r.id, `delete route ${r.match}`)],
    });
  }
}

function planRouteUpdate(
  ctx: PlanContext,
  edgeAddress: string,
  r: RouteManifest,
  live: HttpsRoute,
): void {
  const sensitivity = new Sensitivity(r.sensitive);
  const scalars: ScalarDiff<RouteUpdate>[] = [];
  if (live.match_type !== r.match_type) {
    scalars.push({ name: 'match_type', before: live.match_type, after: r.match_type });
  }
  const description = r.description ?? '';
  if ((live.description ?? '') !== description) {
    scalars.push({ name: 'description', before: live.description ?? '', after: description });
  }
  const metadata = storedRouteMetadata(r.metadata);
  if ((live.metadata ?? '') !== metadata) {
    scalars.push({ name: 'metadata', before: live.metadata ?? '', after: metadata });
  }
  const current = liveModules(live, ROUTE_MODULES);
  const want: RouteUpdate = pickModules(r, ROUTE_MODULES);
  const diff = diffResource<RouteUpdate>(scalars, ROUTE_MODULES, want, current, sensitivity);
  const operations: Operation[] = [];
  const liveAuth = AUTH_MODULES.find((m) => current[m] !== undefined);
  const wantAuth = AUTH_MODULES.find((m) => want[m] !== undefined);
  const patch: RouteUpdate = { ...diff.patch };
  let removed = diff.removedModules;
  const { edge_id: edgeId, id } = live;
  if (liveAuth !== undefined && wantAuth !== undefined && liveAuth !== wantAuth) {
    // Fail closed: the route serves nothing while its authentication changes kind.
    if (current.backend !== undefined) {
      operations.push(
        deleteRouteModule(
          edgeId,
          id,
          'backend',
          'take the route offline (remove backend) before switching auth',
        ),
      );
    }
    operations.push(deleteRouteModule(edgeId, id, liveAuth, `remove old auth module ${liveAuth}`));
    if (want.backend !== undefined) patch.backend = want.backend;
    removed = removed.filter((n) => n !== 'backend' && n !== liveAuth);
    const and = want.backend !== undefined ? ' and the backend' : '';
    operations.push(
      updateRoute(edgeId, id, patch, `set auth module ${wantAuth}${and}`, {
        sensitive: r.sensitive,
      }),
    );
  } else if (Object.keys(patch).length > 0) {
    operations.push(
      updateRoute(edgeId, id, patch, `update route ${r.match}`, { sensitive: r.sensitive }),
    );
  }
  for (const name of removed) operations.push(deleteRouteModule(edgeId, id, name));
  const changed = hasChanges(diff);
  ctx.changes.push({
    address: routeAddress(edgeAddress, r.match),
    kind: 'route',
    name: r.match,
    root: edgeAddress,
    action: changed ? 'update' : 'noop',
    reason: changed ? describeDiff(diff) : 'up to date',
    id: live.id,
    source: r.source,
    fields: diff.fields,
    modules: diff.modules,
    operations: noOperations(operations),
  });
}

/**
 * At most one route of an edge may carry an auth module (the service's rule 7155). When a route
 * gains one while another route of the same edge loses its own (its module removed, or the
 * route deleted), the losing side must go first: those operations move to role `release`,
 * ahead of every PATCH or POST of role `main` (the graph's `sequence` edges within the edge's
 * root, ./graph.ts). The gaining route's own swap order (backend,
 * old auth, then the new auth) is left as it is.
 */
export function releaseAuthFirst(ctx: PlanContext, live: readonly HttpsEdge[]): void {
  const setsAuth = (o: Operation) =>
    o.method !== 'DELETE' &&
    typeof o.body === 'object' &&
    o.body !== null &&
    AUTH_MODULES.some((m) => (o.body as Readonly<Record<string, unknown>>)[m] != null);
  // Edges with a route that gains an auth module: the only ones with anything to reorder.
  const gaining = new Set<string>();
  for (const c of ctx.changes) {
    if (c.kind === 'route' && c.operations.some(setsAuth)) gaining.add(c.root);
  }
  if (gaining.size === 0) return;
  const authRoutes = new Set<string>();
  for (const e of live) {
    for (const r of e.routes) {
      if (AUTH_MODULES.some((m) => r[m] != null)) authRoutes.add(r.id);
    }
  }
  const isAuth = (module: string | undefined) => AUTH_MODULES.some((m) => m === module);
  const removesAuth = (o: Operation) =>
    o.method === 'DELETE' &&
    ((o.target.kind === 'route_module' && isAuth(targetModule(o.target))) ||
      (o.target.kind === 'route' &&
        typeof o.target.id === 'string' &&
        authRoutes.has(o.target.id)));
  for (const c of ctx.changes) {
    if (c.kind !== 'route' || !gaining.has(c.root) || c.operations.length === 0) continue;
    // The gaining routes keep their own order; the others' auth removals go first.
    if (c.operations.some(setsAuth)) continue;
    c.operations = c.operations.map((o) =>
      removesAuth(o) ? { ...o, phase: 'release' as const } : o,
    );
  }
}
