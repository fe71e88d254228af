/**
 * Edges: create (one POST with every module), update or adopt (one PATCH with every changed
 * scalar and `set` module, one DELETE per removed module), delete, and the hostport releases
 * that must run before another edge of the plan claims a hostport.
 */
import type { HttpsEdge, HttpsEdgeWrite, TlsEdgeWrite } from '../api/schemas.js';
import { HTTPS_EDGE_MODULES, TLS_EDGE_MODULES } from '../hosted/modules/index.js';
import { storedMetadata } from '../manifest/metadata.js';
import type { EdgeManifest } from '../manifest/schema.js';
import type { PlanContext } from './context.js';
import { Sensitivity } from './diff.js';
import type { Action, FieldChange, Operation, Phase } from './model.js';
import { canonicalHostports, liveModules, sameHostports } from './normalize.js';
import {
  createEdge,
  deleteEdge,
  deleteEdgeModule,
  type EdgeWrite,
  updateEdge,
} from './operations.js';
import {
  type DesiredEdge,
  type EdgeKind,
  type EdgeMatch,
  KIND_LABEL,
  type LiveEdge,
  type Orphan,
} from './ownership.js';
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
import { planRouteCreate, planRoutes } from './routes.js';

const EDGE_MODULES: Readonly<Record<EdgeKind, readonly string[]>> = {
  tls_edge: TLS_EDGE_MODULES,
  https_edge: HTTPS_EDGE_MODULES,
};

type TypedEdge =
  | { readonly kind: 'tls_edge'; readonly body: TlsEdgeWrite }
  | { readonly kind: 'https_edge'; readonly body: HttpsEdgeWrite };

function metadataOf(ctx: PlanContext, m: EdgeManifest): string {
  return storedMetadata(m.metadata, { owner: ctx.owner, name: m.name, protect: m.protect });
}

/** The body that creates the desired edge: scalars and every module it sets. */
function edgeBody(ctx: PlanContext, d: DesiredEdge): TypedEdge {
  const m = d.manifest;
  const scalars = {
    ...(m.description !== undefined ? { description: m.description } : {}),
    metadata: metadataOf(ctx, m),
    hostports: [...m.hostports],
  };
  return d.kind === 'tls_edge'
    ? { kind: d.kind, body: { ...scalars, ...pickModules(d.manifest, TLS_EDGE_MODULES) } }
    : { kind: d.kind, body: { ...scalars, ...pickModules(d.manifest, HTTPS_EDGE_MODULES) } };
}

export function planCreate(ctx: PlanContext, d: DesiredEdge): void {
  const m = d.manifest;
  const typed = edgeBody(ctx, d);
  const description = `create ${KIND_LABEL[d.kind]} ${m.name}`;
  const extra = { binds: d.address, sensitive: m.sensitive };
  const body: Readonly<Record<string, unknown>> = typed.body;
  ctx.changes.push({
    address: d.address,
    kind: d.kind,
    name: m.name,
    root: d.address,
    action: 'create',
    reason: 'not found live',
    source: m.source,
    fields: createFields(body, new Sensitivity(m.sensitive)),
    modules: EDGE_MODULES[d.kind]
      .filter((n) => body[n] !== undefined)
      .map((module) => moduleChange(module, 'set')),
    operations: [
      typed.kind === 'tls_edge'
        ? createEdge('tls_edge', typed.body, description, extra)
        : createEdge('https_edge', typed.body, description, extra),
    ],
  });
  if (d.kind === 'https_edge') {
    for (const r of d.manifest.routes) {
      planRouteCreate(ctx, d.address, { created: d.address }, r);
    }
  }
}

/** The scalar differences of an edge: description, metadata (with our keys), hostports. */
function edgeScalars<W extends EdgeWrite[EdgeKind]>(
  ctx: PlanContext,
  manifest: EdgeManifest,
  record: LiveEdge['record'],
): ScalarDiff<W>[] {
  const scalars: ScalarDiff<TlsEdgeWrite & HttpsEdgeWrite>[] = [];
  const description = manifest.description ?? '';
  if ((record.description ?? '') !== description) {
    scalars.push({ name: 'description', before: record.description ?? '', after: description });
  }
  const metadata = metadataOf(ctx, manifest);
  if ((record.metadata ?? '') !== metadata) {
    scalars.push({ name: 'metadata', before: record.metadata ?? '', after: metadata });
  }
  if (!sameHostports(record.hostports, manifest.hostports)) {
    scalars.push({
      name: 'hostports',
      before: [...record.hostports],
      after: [...manifest.hostports],
    });
  }
  return scalars as ScalarDiff<W>[];
}

export function planUpdate(
  ctx: PlanContext,
  m: EdgeMatch,
  claims: ReadonlyMap<string, string>,
  holders: ReadonlyMap<string, LiveEdge>,
): void {
  const manifest = m.desired.manifest;
  const record = (m.live as LiveEdge).record;
  const known = ctx.memo?.lookup(manifest, record, ctx.owner, m.adopt);
  if (known !== undefined) {
    for (const c of known) ctx.changes.push(c);
    return;
  }
  const from = ctx.changes.length;
  diffUpdate(ctx, m, claims, holders);
  ctx.memo?.keep(manifest, record, ctx.owner, m.adopt, ctx.changes.slice(from));
}

function diffUpdate(
  ctx: PlanContext,
  m: EdgeMatch,
  claims: ReadonlyMap<string, string>,
  holders: ReadonlyMap<string, LiveEdge>,
): void {
  const d = m.desired;
  const live = m.live as LiveEdge;
  const manifest = d.manifest;
  const record = live.record;
  const sensitivity = new Sensitivity(manifest.sensitive);
  const diff =
    d.kind === 'tls_edge'
      ? diffResource<TlsEdgeWrite>(
          edgeScalars(ctx, manifest, record),
          TLS_EDGE_MODULES,
          pickModules(d.manifest, TLS_EDGE_MODULES),
          liveModules(record, TLS_EDGE_MODULES),
          sensitivity,
        )
      : diffResource<HttpsEdgeWrite>(
          edgeScalars(ctx, manifest, record),
          HTTPS_EDGE_MODULES,
          pickModules(d.manifest, HTTPS_EDGE_MODULES),
          liveModules(record, HTTPS_EDGE_MODULES),
          sensitivity,
        );

  const operations: Operation[] = [];
  if (Object.keys(diff.patch).length > 0) {
    const wanted = ctx.wanted(d);
    const held = canonicalHostports(record.hostports);
    const released = held.filter((h) => claims.has(h) && !wanted.includes(h));
    const newClaims = wanted.filter((h) => !held.includes(h));
    let phase: Phase = 'main';
    if (released.length > 0) {
      const claimsHeld = newClaims.some((h) => {
        const holder = holders.get(h);
        return holder !== undefined && holder.record.id !== record.id;
      });
      if (claimsHeld) {
        operations.push(releaseOp(d.kind, record, released, claims));
      } else {
        phase = 'release';
      }
    }
    const what = phase === 'release' ? ` (releases ${released.join(', ')} first)` : '';
    const description = `update ${KIND_LABEL[d.kind]} ${manifest.name}${what}`;
    operations.push(
      updateEdge(d.kind, record.id, diff.patch, phase, description, {
        sensitive: manifest.sensitive,
      }),
    );
  }
  for (const name of diff.removedModules) {
    operations.push(deleteEdgeModule(d.kind, record.id, name));
  }

  let action: Action = hasChanges(diff) ? 'update' : 'noop';
  let reason = hasChanges(diff) ? describeDiff(diff) : 'up to date';
  if (m.adopt) {
    action = 'adopt';
    const why = live.meta === undefined ? "its metadata is not edgesync's" : 'it has no owner';
    reason = `adopt ${record.id} named by id: (${why})${hasChanges(diff) ? `; ${describeDiff(diff)}` : ''}`;
  }
  ctx.changes.push({
    address: d.address,
    kind: d.kind,
    name: manifest.name,
    root: d.address,
    action,
    reason,
    id: record.id,
    source: manifest.source,
    fields: diff.fields,
    modules: diff.modules,
    operations: noOperations(operations),
  });
  if (d.kind === 'https_edge') planRoutes(ctx, d.address, d.manifest.routes, record as HttpsEdge);
}

/** A PATCH that only drops the hostports other edges of this plan claim. */
function releaseOp(
  kind: EdgeKind,
  record: LiveEdge['record'],
  released: readonly string[],
  claims: ReadonlyMap<string, string>,
): Operation {
  const drop = new Set(released);
  const kept = record.hostports.filter((h) => !drop.has(h.toLowerCase()));
  const to = [...new Set(released.map((h) => claims.get(h)))].join(', ');
  const description = `release hostports ${released.join(', ')} (claimed by ${to})`;
  return updateEdge(kind, record.id, { hostports: kept }, 'release', description);
}

/**
 * `claims` are the hostports other edges claim (released by a PATCH first); a `cutover` edge is
 * deleted in phase `cutover`, where the cloud endpoints taking its hosts and ports follow it.
 */
export function planDelete(
  ctx: PlanContext,
  o: Orphan,
  claims: ReadonlyMap<string, string>,
  cutover = false,
): void {
  const record = o.live.record;
  const operations: Operation[] = [];
  const released = canonicalHostports(record.hostports).filter((h) => claims.has(h));
  if (released.length > 0) operations.push(releaseOp(o.live.kind, record, released, claims));
  const label = `delete ${KIND_LABEL[o.live.kind]} ${record.id}`;
  operations.push(
    cutover
      ? deleteEdge(o.live.kind, record.id, `${label} (cut-over to cloud endpoints)`, 'cutover')
      : deleteEdge(o.live.kind, record.id, label),
  );
  const fields: FieldChange[] = [];
  if ((record.description ?? '') !== '') {
    fields.push({ path: 'description', before: record.description, sensitive: false });
  }
  if (record.hostports.length > 0) {
    fields.push({ path: 'hostports', before: [...record.hostports], sensitive: false });
  }
  if (o.live.kind === 'https_edge') {
    const routes = (record as HttpsEdge).routes.map((r) => r.match);
    if (routes.length > 0) fields.push({ path: 'routes', before: routes, sensitive: false });
  }
  ctx.changes.push({
    address: o.address,
    kind: o.live.kind,
    name: o.live.meta?.name ?? record.id,
    root: o.address,
    action: 'delete',
    reason: o.reason,
    id: record.id,
    fields,
    modules: [],
    operations,
  });
}
