/**
 * The planner: (desired set, live snapshot, options) -> Plan. Pure: no I/O, no clock, no client.
 *
 * Steps: ownership (./ownership.ts) matches manifests to live edges; the deletion guards
 * (protect, empty set, max deletes) decide which orphans may go; hostport conflicts are resolved
 * to a fixpoint (a hostport is claimable when it is free, already ours, or released in this
 * plan by an edge that is itself not blocked); then each resource gets its diff and the API
 * operations that realise it (design section 4):
 *
 * - create: one POST with every module in the body (binds the address); an HTTPS edge's routes
 *   follow as one POST each, on the path placeholder `{https_edge.<name>}`.
 * - update / adopt: one PATCH with every changed scalar and every `set` module, then one DELETE
 *   per removed module. Nothing else: one changed module is exactly one operation.
 * - a route whose auth module changes kind (oauth / oidc / saml) fails closed, in this order:
 *   DELETE backend (when live has one), DELETE the old auth module, one PATCH setting the new
 *   auth module together with the backend (and every other change; atomic on the server), then
 *   the other module DELETEs.
 * - hostports are released before they are claimed: an edge that drops a hostport another edge
 *   of this plan claims has its PATCH in phase `release`, or, when that PATCH also claims a
 *   hostport some other edge holds now, a release PATCH dropping only the claimed hostports
 *   followed by the normal PATCH in `main`; an edge being deleted whose hostports another edge
 *   claims gets such a release PATCH before its DELETE.
 * - deletions (routes, edges, bot users) are in phase `delete`, last.
 */

import type { BotUser, HttpsEdge, HttpsRoute, TlsEdge } from '../api/schemas.js';
import { compareCodeUnits } from '../compare.js';
import { DEFAULT_OWNER, storedMetadata, storedRouteMetadata } from '../manifest/metadata.js';
import type { BotUserManifest, DesiredSet, RouteManifest } from '../manifest/schema.js';
import { AUTH_MODULES, HTTPS_EDGE_MODULES, ROUTE_MODULES, TLS_EDGE_MODULES } from '../spec/api.js';
import { diffModule, fieldChanges, Sensitivity } from './diff.js';
import {
  type Action,
  type Blocked,
  type FieldChange,
  type ModuleChange,
  type Operation,
  type Phase,
  PLAN_FORMAT_VERSION,
  type Plan,
  type ResourceChange,
} from './model.js';
import { canonicalHostports, liveModules, sameHostports } from './normalize.js';
import { compareByAge } from './oldest.js';
import {
  classifyLive,
  type DesiredEdge,
  describeHolder,
  desiredEdges,
  type EdgeKind,
  type EdgeMatch,
  KIND_LABEL,
  type LiveEdge,
  type Orphan,
  resolveOwnership,
} from './ownership.js';

export const DEFAULT_MAX_DELETES = 10;

export interface PlanOptions {
  /** Owner id written to and matched in `edgesync/owner`. Default `default`. */
  readonly owner?: string | undefined;
  /** Let an empty desired set (no edge manifests) delete owned edges. Default false. */
  readonly allowEmpty?: boolean | undefined;
  /** More edge deletions than this in one plan blocks all of them. Default 10. */
  readonly maxDeletes?: number | undefined;
}

/** What the planner needs of the live account (an `observe()` snapshot fits). */
export interface LiveState {
  readonly tlsEdges: readonly TlsEdge[];
  readonly httpsEdges: readonly HttpsEdge[];
  readonly botUsers: readonly BotUser[];
}

type Fields = Record<string, unknown>;

const EDGE_MODULES: Readonly<Record<EdgeKind, readonly string[]>> = {
  tls_edge: TLS_EDGE_MODULES,
  https_edge: HTTPS_EDGE_MODULES,
};

function edgePath(kind: EdgeKind, id: string): string {
  return kind === 'tls_edge' ? `/edges/tls/${id}` : `/edges/https/${id}`;
}

function collectionPath(kind: EdgeKind): string {
  return kind === 'tls_edge' ? '/edges/tls' : '/edges/https';
}

export function routeAddress(edgeAddress: string, match: string): string {
  return `${edgeAddress}.route[${JSON.stringify(match)}]`;
}

function op(
  method: Operation['method'],
  path: string,
  phase: Phase,
  description: string,
  extra: { body?: Fields; binds?: string; sensitive?: readonly string[] } = {},
): Operation {
  const o: Operation = { method, path, phase, description, sensitive_paths: [] };
  if (extra.body !== undefined) {
    o.body = extra.body;
    o.sensitive_paths = bodySensitivePaths(extra.body, extra.sensitive ?? []);
  }
  if (extra.binds !== undefined) o.binds = extra.binds;
  return o;
}

/**
 * Manifest sensitive paths -> paths into a request body. Bodies mirror the manifest's write
 * shape, except that labels (and the name) travel inside the `metadata` string, which is then
 * sensitive as a whole. Paths whose field the body does not carry are dropped.
 */
function bodySensitivePaths(body: Fields, sensitive: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of sensitive) {
    const top = /^[A-Za-z_][A-Za-z0-9_]*/.exec(path)?.[0] ?? '';
    if (top === 'metadata' || top === 'name') {
      if ('metadata' in body) out.add('metadata');
    } else if (top in body) {
      out.add(path);
    }
  }
  return [...out].sort(compareCodeUnits);
}

function moduleFields(value: object): Fields {
  return value as unknown as Fields;
}

/** The modules of a manifest resource that are set, keyed by name. */
function desiredModules(resource: object, names: readonly string[]): Fields {
  const fields = moduleFields(resource);
  const out: Fields = {};
  for (const name of names) if (fields[name] !== undefined) out[name] = fields[name];
  return out;
}

interface ScalarDiff {
  readonly name: string;
  readonly before: unknown;
  readonly after: unknown;
}

interface ResourceDiff {
  readonly fields: FieldChange[];
  readonly modules: ModuleChange[];
  /** The PATCH body: changed scalars and `set` modules. */
  readonly patch: Fields;
  readonly setModules: string[];
  readonly removedModules: string[];
  readonly changedScalars: string[];
}

/** Diffs scalars and modules of one resource (edge or route) against its live record. */
function diffResource(
  scalars: readonly ScalarDiff[],
  moduleNames: readonly string[],
  desired: Fields,
  live: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  sensitivity: Sensitivity,
): ResourceDiff {
  const fields: FieldChange[] = [];
  const modules: ModuleChange[] = [];
  const patch: Fields = {};
  const setModules: string[] = [];
  const removedModules: string[] = [];
  const changedScalars: string[] = [];
  for (const s of scalars) {
    changedScalars.push(s.name);
    patch[s.name] = s.after;
    const change: FieldChange = { path: s.name, sensitive: sensitivity.isSensitive(s.name) };
    if (s.before !== undefined) change.before = s.before;
    if (s.after !== undefined) change.after = s.after;
    fields.push(change);
  }
  for (const name of moduleNames) {
    const want = desired[name] as Readonly<Record<string, unknown>> | undefined;
    const d = diffModule(name, want, live[name]);
    if (d === undefined) continue;
    modules.push({ module: name, status: d.status });
    if (d.status === 'unchanged') continue;
    fieldChanges([name], d.before, d.after, sensitivity, fields);
    if (d.status === 'set') {
      patch[name] = want;
      setModules.push(name);
    } else {
      removedModules.push(name);
    }
  }
  return { fields, modules, patch, setModules, removedModules, changedScalars };
}

function describeDiff(diff: ResourceDiff): string {
  const parts: string[] = [];
  if (diff.changedScalars.length > 0) parts.push(`changed ${diff.changedScalars.join(', ')}`);
  if (diff.setModules.length > 0) parts.push(`set ${diff.setModules.join(', ')}`);
  if (diff.removedModules.length > 0) parts.push(`removed ${diff.removedModules.join(', ')}`);
  return parts.join('; ');
}

function hasChanges(diff: ResourceDiff): boolean {
  return Object.keys(diff.patch).length > 0 || diff.removedModules.length > 0;
}

/** Field list of a resource being created: every value it will have. */
function createFields(values: Fields, sensitivity: Sensitivity): FieldChange[] {
  const out: FieldChange[] = [];
  for (const key of Object.keys(values).sort(compareCodeUnits)) {
    const value = values[key];
    if (value === undefined) continue;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const d = diffModule(key, value as Readonly<Record<string, unknown>>, undefined);
      fieldChanges([key], undefined, d?.after, sensitivity, out);
    } else {
      out.push({ path: key, after: value, sensitive: sensitivity.isSensitive(key) });
    }
  }
  return out;
}

class Planner {
  readonly owner: string;
  readonly allowEmpty: boolean;
  readonly maxDeletes: number;
  readonly changes: ResourceChange[] = [];
  readonly blocked: Blocked[] = [];
  readonly warnings: string[] = [];
  readonly #wanted = new Map<DesiredEdge, string[]>();

  constructor(options: PlanOptions) {
    this.owner = options.owner ?? DEFAULT_OWNER;
    this.allowEmpty = options.allowEmpty ?? false;
    this.maxDeletes = options.maxDeletes ?? DEFAULT_MAX_DELETES;
  }

  run(desired: DesiredSet, live: LiveState): Plan {
    const liveEdges = classifyLive(live, this.owner);
    const ownership = resolveOwnership(desiredEdges(desired), liveEdges);
    this.blocked.push(...ownership.blocked);

    const deletions = this.guardDeletions(
      ownership.orphans,
      desired.tlsEdges.length + desired.httpsEdges.length === 0,
    );
    const active = this.resolveHostports(ownership.matches, deletions, ownership.hostportHolders);
    const claims = new Map<string, string>();
    for (const m of active) {
      const own = new Set(canonicalHostports(m.live?.record.hostports));
      for (const h of this.wanted(m.desired)) {
        if (!own.has(h)) claims.set(h, m.desired.address);
      }
    }

    for (const m of active) {
      if (m.live === undefined) this.planCreate(m.desired);
      else this.planUpdate(m, claims, ownership.hostportHolders);
    }
    for (const d of deletions) this.planDelete(d, claims);
    this.planBotUsers(desired.botUsers, live.botUsers);
    this.releaseAuthFirst(live);

    this.changes.sort((a, b) => compareCodeUnits(a.address, b.address));
    this.blocked.sort(
      (a, b) => compareCodeUnits(a.address, b.address) || compareCodeUnits(a.reason, b.reason),
    );
    const summary = { create: 0, update: 0, delete: 0, adopt: 0, noop: 0 };
    for (const c of this.changes) summary[c.action] += 1;
    return {
      format_version: PLAN_FORMAT_VERSION,
      owner: this.owner,
      changes: this.changes,
      blocked: this.blocked,
      warnings: this.warnings,
      summary,
    };
  }

  /**
   * At most one route of an edge may carry an auth module (the service's rule 7155). When a route
   * gains one while another route of the same edge loses its own (its module removed, or the
   * route deleted), the losing side must go first: those operations move to phase `release`,
   * ahead of every PATCH or POST of phase `main`. The gaining route's own swap order (backend,
   * old auth, then the new auth) is left as it is.
   */
  releaseAuthFirst(live: LiveState): void {
    const authRoutes = new Set<string>();
    for (const e of live.httpsEdges) {
      for (const r of e.routes) {
        if (AUTH_MODULES.some((m) => (r as Record<string, unknown>)[m] != null))
          authRoutes.add(r.id);
      }
    }
    const setsAuth = (o: Operation) =>
      (o.method === 'PATCH' || o.method === 'POST' || o.method === 'PUT') &&
      o.body !== undefined &&
      AUTH_MODULES.some((m) => (o.body as Fields)[m] != null);
    const removesAuth = (o: Operation) =>
      o.method === 'DELETE' &&
      (AUTH_MODULES.some((m) => o.path.endsWith(`/${m}`)) ||
        authRoutes.has(o.path.slice(o.path.lastIndexOf('/') + 1)));
    const byEdge = new Map<string, ResourceChange[]>();
    for (const c of this.changes) {
      if (c.kind !== 'route') continue;
      const list = byEdge.get(c.root) ?? [];
      list.push(c);
      byEdge.set(c.root, list);
    }
    for (const routes of byEdge.values()) {
      const gaining = routes.filter((c) => c.operations.some(setsAuth));
      if (gaining.length === 0) continue;
      for (const c of routes) {
        if (gaining.includes(c)) continue;
        c.operations = c.operations.map((o) =>
          removesAuth(o) ? { ...o, phase: 'release' as const } : o,
        );
      }
    }
  }

  /** The desired edge's hostports, canonical (computed once per edge). */
  wanted(d: DesiredEdge): string[] {
    let list = this.#wanted.get(d);
    if (list === undefined) {
      list = canonicalHostports(d.manifest.hostports);
      this.#wanted.set(d, list);
    }
    return list;
  }

  // ---- guards -------------------------------------------------------------------------------

  /** Applies protect, the empty-set guard and max-deletes; returns the deletions allowed. */
  guardDeletions(orphans: readonly Orphan[], emptySet: boolean): Orphan[] {
    const candidates: Orphan[] = [];
    for (const o of orphans) {
      if (o.live.meta?.protect === true) {
        this.blocked.push({
          address: o.address,
          kind: 'guard',
          reason: `${o.live.record.id} is protected (edgesync/protect=true) and is never deleted; to delete it, apply its manifest with protect: false first`,
        });
      } else {
        candidates.push(o);
      }
    }
    if (candidates.length === 0) return candidates;
    let refusal: string | undefined;
    if (emptySet && !this.allowEmpty) {
      refusal = `the manifests declare no edges: refusing to delete the ${candidates.length} edge(s) owned by "${this.owner}" (pass --allow-empty to delete them)`;
    } else if (candidates.length > this.maxDeletes) {
      const n = candidates.length;
      refusal = `${n} edge deletion${n === 1 ? '' : 's'} ${n === 1 ? 'exceeds' : 'exceed'} the limit of ${this.maxDeletes} (--max-deletes): no edge is deleted`;
    }
    if (refusal === undefined) return candidates;
    for (const o of candidates) {
      this.blocked.push({
        address: o.address,
        kind: 'guard',
        reason: `${o.live.record.id}: ${refusal}`,
      });
    }
    return [];
  }

  /**
   * Blocks every desired edge that claims a hostport it cannot get: held by an edge that is not
   * ours, or by one of ours that keeps it (its own change blocked, its deletion refused). Runs
   * to a fixpoint because a blocked edge keeps the hostports it would have released.
   */
  resolveHostports(
    matches: readonly EdgeMatch[],
    deletions: readonly Orphan[],
    holders: ReadonlyMap<string, LiveEdge>,
  ): EdgeMatch[] {
    const deleting = new Set(deletions.map((d) => d.live.record.id));
    const byLiveId = new Map<string, EdgeMatch>();
    for (const m of matches) if (m.live !== undefined) byLiveId.set(m.live.record.id, m);
    const blocked = new Map<string, string>();

    const keeps = (holder: LiveEdge, hostport: string): string | undefined => {
      if (deleting.has(holder.record.id)) return undefined;
      const m = byLiveId.get(holder.record.id);
      if (m === undefined) {
        if (!holder.owned) return describeHolder(holder);
        return 'which is ours but is not deleted (see the blocked entries)';
      }
      if (blocked.has(m.desired.address)) {
        return `(${m.desired.address}) whose own change is blocked`;
      }
      return this.wanted(m.desired).includes(hostport)
        ? `(${m.desired.address}) which keeps it`
        : undefined;
    };

    let changed = true;
    while (changed) {
      changed = false;
      for (const m of matches) {
        if (blocked.has(m.desired.address)) continue;
        const selfId = m.live?.record.id;
        for (const h of this.wanted(m.desired)) {
          const holder = holders.get(h);
          if (holder === undefined || holder.record.id === selfId) continue;
          const why = keeps(holder, h);
          if (why === undefined) continue;
          blocked.set(
            m.desired.address,
            `hostport ${h} is held by ${KIND_LABEL[holder.kind]} ${holder.record.id} ${why}; not attempted`,
          );
          changed = true;
          break;
        }
      }
    }
    for (const [address, reason] of blocked)
      this.blocked.push({ address, kind: 'conflict', reason });
    return matches.filter((m) => !blocked.has(m.desired.address));
  }

  // ---- edges --------------------------------------------------------------------------------

  edgeBody(d: DesiredEdge): Fields {
    const m = d.manifest;
    const body: Fields = {};
    if (m.description !== undefined) body.description = m.description;
    body.metadata = storedMetadata(m.metadata, {
      owner: this.owner,
      name: m.name,
      protect: m.protect,
    });
    body.hostports = [...m.hostports];
    Object.assign(body, desiredModules(m, EDGE_MODULES[d.kind]));
    return body;
  }

  planCreate(d: DesiredEdge): void {
    const m = d.manifest;
    const sensitivity = new Sensitivity(m.sensitive);
    const body = this.edgeBody(d);
    this.changes.push({
      address: d.address,
      kind: d.kind,
      name: m.name,
      root: d.address,
      action: 'create',
      reason: 'not found live',
      source: m.source,
      fields: createFields(body, sensitivity),
      modules: EDGE_MODULES[d.kind]
        .filter((n) => body[n] !== undefined)
        .map((module) => ({ module, status: 'set' as const })),
      operations: [
        op('POST', collectionPath(d.kind), 'main', `create ${KIND_LABEL[d.kind]} ${m.name}`, {
          body,
          binds: d.address,
          sensitive: m.sensitive,
        }),
      ],
    });
    if (d.kind === 'https_edge') {
      for (const r of d.manifest.routes) {
        this.planRouteCreate(d.address, `/edges/https/{${d.address}}/routes`, r);
      }
    }
  }

  planUpdate(
    m: EdgeMatch,
    claims: ReadonlyMap<string, string>,
    holders: ReadonlyMap<string, LiveEdge>,
  ): void {
    const d = m.desired;
    const live = m.live as LiveEdge;
    const manifest = d.manifest;
    const record = live.record;
    const sensitivity = new Sensitivity(manifest.sensitive);
    const scalars: ScalarDiff[] = [];
    const description = manifest.description ?? '';
    if ((record.description ?? '') !== description) {
      scalars.push({ name: 'description', before: record.description ?? '', after: description });
    }
    const metadata = storedMetadata(manifest.metadata, {
      owner: this.owner,
      name: manifest.name,
      protect: manifest.protect,
    });
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
    const names = EDGE_MODULES[d.kind];
    const diff = diffResource(
      scalars,
      names,
      desiredModules(manifest, names),
      liveModules(record, names),
      sensitivity,
    );

    const path = edgePath(d.kind, record.id);
    const operations: Operation[] = [];
    if (Object.keys(diff.patch).length > 0) {
      const wanted = this.wanted(d);
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
          operations.push(this.releaseOp(path, record.hostports, released, claims));
        } else {
          phase = 'release';
        }
      }
      const what = phase === 'release' ? ` (releases ${released.join(', ')} first)` : '';
      operations.push(
        op('PATCH', path, phase, `update ${KIND_LABEL[d.kind]} ${manifest.name}${what}`, {
          body: diff.patch,
          sensitive: manifest.sensitive,
        }),
      );
    }
    for (const name of diff.removedModules) {
      operations.push(op('DELETE', `${path}/${name}`, 'main', `remove module ${name}`));
    }

    let action: Action = hasChanges(diff) ? 'update' : 'noop';
    let reason = hasChanges(diff) ? describeDiff(diff) : 'up to date';
    if (m.adopt) {
      action = 'adopt';
      const why = live.meta === undefined ? "its metadata is not edgesync's" : 'it has no owner';
      reason = `adopt ${record.id} named by id: (${why})${hasChanges(diff) ? `; ${describeDiff(diff)}` : ''}`;
    }
    this.changes.push({
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
      operations,
    });
    if (d.kind === 'https_edge') this.planRoutes(d.address, d.manifest.routes, record as HttpsEdge);
  }

  /** A PATCH that only drops the hostports other edges of this plan claim. */
  releaseOp(
    path: string,
    liveHostports: readonly string[],
    released: readonly string[],
    claims: ReadonlyMap<string, string>,
  ): Operation {
    const drop = new Set(released);
    const kept = liveHostports.filter((h) => !drop.has(h.toLowerCase()));
    const to = [...new Set(released.map((h) => claims.get(h)))].join(', ');
    return op(
      'PATCH',
      path,
      'release',
      `release hostports ${released.join(', ')} (claimed by ${to})`,
      {
        body: { hostports: kept },
      },
    );
  }

  planDelete(o: Orphan, claims: ReadonlyMap<string, string>): void {
    const record = o.live.record;
    const path = edgePath(o.live.kind, record.id);
    const operations: Operation[] = [];
    const released = canonicalHostports(record.hostports).filter((h) => claims.has(h));
    if (released.length > 0)
      operations.push(this.releaseOp(path, record.hostports, released, claims));
    operations.push(op('DELETE', path, 'delete', `delete ${KIND_LABEL[o.live.kind]} ${record.id}`));
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
    this.changes.push({
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

  // ---- routes -------------------------------------------------------------------------------

  routeBody(r: RouteManifest): Fields {
    const body: Fields = { match_type: r.match_type, match: r.match };
    if (r.description !== undefined) body.description = r.description;
    const metadata = storedRouteMetadata(r.metadata);
    if (metadata !== '') body.metadata = metadata;
    Object.assign(body, desiredModules(r, ROUTE_MODULES));
    return body;
  }

  planRouteCreate(edge: string, collection: string, r: RouteManifest): void {
    const address = routeAddress(edge, r.match);
    const body = this.routeBody(r);
    this.changes.push({
      address,
      kind: 'route',
      name: r.match,
      root: edge,
      action: 'create',
      reason: 'not found live',
      source: r.source,
      fields: createFields(body, new Sensitivity(r.sensitive)),
      modules: ROUTE_MODULES.filter((n) => body[n] !== undefined).map((module) => ({
        module,
        status: 'set' as const,
      })),
      operations: [
        op('POST', collection, 'main', `create route ${r.match}`, {
          body,
          binds: address,
          sensitive: r.sensitive,
        }),
      ],
    });
  }

  planRoutes(edge: string, desired: readonly RouteManifest[], live: HttpsEdge): void {
    const liveByMatch = new Map(live.routes.map((r) => [r.match, r]));
    for (const r of desired) {
      const current = liveByMatch.get(r.match);
      if (current === undefined) this.planRouteCreate(edge, `/edges/https/${live.id}/routes`, r);
      else this.planRouteUpdate(edge, r, current);
    }
    const wanted = new Set(desired.map((r) => r.match));
    for (const r of live.routes) {
      if (wanted.has(r.match)) continue;
      this.changes.push({
        address: routeAddress(edge, r.match),
        kind: 'route',
        name: r.match,
        root: edge,
        action: 'delete',
        // Removed from the manifest, or added by hand: the live route is simply not declared.
        reason: 'route not in the manifest',
        id: r.id,
        fields: [],
        modules: [],
        operations: [
          op(
            'DELETE',
            `/edges/https/${live.id}/routes/${r.id}`,
            'delete',
            `delete route ${r.match}`,
          ),
        ],
      });
    }
  }

  planRouteUpdate(edge: string, r: RouteManifest, live: HttpsRoute): void {
    const sensitivity = new Sensitivity(r.sensitive);
    const scalars: ScalarDiff[] = [];
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
    const want = desiredModules(r, ROUTE_MODULES);
    const diff = diffResource(scalars, ROUTE_MODULES, want, current, sensitivity);
    const path = `/edges/https/${live.edge_id}/routes/${live.id}`;
    const operations: Operation[] = [];
    const liveAuth = AUTH_MODULES.find((m) => current[m] !== undefined);
    const wantAuth = AUTH_MODULES.find((m) => want[m] !== undefined);
    const patch: Fields = { ...diff.patch };
    let removed = diff.removedModules;
    if (liveAuth !== undefined && wantAuth !== undefined && liveAuth !== wantAuth) {
      // Fail closed: the route serves nothing while its authentication changes kind.
      if (current.backend !== undefined) {
        operations.push(
          op(
            'DELETE',
            `${path}/backend`,
            'main',
            'take the route offline (remove backend) before switching auth',
          ),
        );
      }
      operations.push(
        op('DELETE', `${path}/${liveAuth}`, 'main', `remove old auth module ${liveAuth}`),
      );
      if (want.backend !== undefined) patch.backend = want.backend;
      removed = removed.filter((n) => n !== 'backend' && n !== liveAuth);
      operations.push(
        op(
          'PATCH',
          path,
          'main',
          `set auth module ${wantAuth}${want.backend !== undefined ? ' and the backend' : ''}`,
          {
            body: patch,
            sensitive: r.sensitive,
          },
        ),
      );
    } else if (Object.keys(patch).length > 0) {
      operations.push(
        op('PATCH', path, 'main', `update route ${r.match}`, {
          body: patch,
          sensitive: r.sensitive,
        }),
      );
    }
    for (const name of removed) {
      operations.push(op('DELETE', `${path}/${name}`, 'main', `remove module ${name}`));
    }
    const changed = hasChanges(diff);
    this.changes.push({
      address: routeAddress(edge, r.match),
      kind: 'route',
      name: r.match,
      root: edge,
      action: changed ? 'update' : 'noop',
      reason: changed ? describeDiff(diff) : 'up to date',
      id: live.id,
      source: r.source,
      fields: diff.fields,
      modules: diff.modules,
      operations,
    });
  }

  // ---- bot users ----------------------------------------------------------------------------

  planBotUsers(desired: readonly BotUserManifest[], live: readonly BotUser[]): void {
    const byName = new Map<string, BotUser[]>();
    for (const b of live) {
      const list = byName.get(b.name);
      if (list === undefined) byName.set(b.name, [b]);
      else list.push(b);
    }
    for (const list of byName.values()) {
      list.sort(compareByAge);
    }
    for (const d of desired) {
      const address = `bot_user.${d.name}`;
      const found = byName.get(d.name) ?? [];
      // Bot users carry no metadata, so two with one name (a person's, or two racing applies')
      // cannot be told apart: say so, and give every one of them the desired state.
      if (found.length > 1) {
        this.warnings.push(
          `${found.length} bot users named ${JSON.stringify(d.name)} (${found.map((b) => b.id).join(', ')}): ` +
            (d.ensure === 'absent'
              ? 'ensure: absent deletes all of them'
              : `active: ${d.active} is applied to every one; delete the extra ones by hand`),
        );
      }
      const base = {
        kind: 'bot_user' as const,
        name: d.name,
        source: d.source,
        modules: [],
      };
      // The oldest keeps the plain address; namesakes are addressed by ID.
      const addressOf = (b: BotUser, i: number) => (i === 0 ? address : `${address}#${b.id}`);
      if (d.ensure === 'absent') {
        found.forEach((b, i) => {
          const at = addressOf(b, i);
          this.changes.push({
            ...base,
            address: at,
            root: at,
            action: 'delete',
            reason: 'ensure: absent',
            id: b.id,
            fields: [{ path: 'active', before: b.active, sensitive: false }],
            operations: [op('DELETE', `/bot_users/${b.id}`, 'delete', `delete bot user ${d.name}`)],
          });
        });
        continue;
      }
      if (found.length === 0) {
        this.changes.push({
          ...base,
          address,
          root: address,
          action: 'create',
          reason: 'not found live',
          fields: [
            { path: 'name', after: d.name, sensitive: false },
            { path: 'active', after: d.active, sensitive: false },
          ],
          operations: [
            op('POST', '/bot_users', 'main', `create bot user ${d.name}`, {
              body: { name: d.name, active: d.active },
              binds: address,
            }),
          ],
        });
        continue;
      }
      found.forEach((current, i) => {
        const at = addressOf(current, i);
        const common = { ...base, address: at, root: at, id: current.id };
        if (current.active !== d.active) {
          this.changes.push({
            ...common,
            action: 'update',
            reason: i === 0 ? 'changed active' : 'changed active (a namesake)',
            fields: [{ path: 'active', before: current.active, after: d.active, sensitive: false }],
            operations: [
              op('PATCH', `/bot_users/${current.id}`, 'main', `update bot user ${d.name}`, {
                body: { active: d.active },
              }),
            ],
          });
        } else {
          this.changes.push({
            ...common,
            action: 'noop',
            reason: 'up to date',
            fields: [],
            operations: [],
          });
        }
      });
    }
  }
}

/** The plan that makes `live` match `desired`. Pure and deterministic (sorted by address). */
export function buildPlan(desired: DesiredSet, live: LiveState, options: PlanOptions = {}): Plan {
  return new Planner(options).run(desired, live);
}

/** How many API operations applying the plan would issue (0: nothing to write). */
export function operationCount(plan: Plan): number {
  return plan.changes.reduce((n, c) => n + c.operations.length, 0);
}

/** True when applying the plan would write something (or something is blocked). */
export function planHasChanges(plan: Plan): boolean {
  return plan.blocked.length > 0 || plan.changes.some((c) => c.action !== 'noop');
}
