/**
 * Ownership (design section 3): which live edges are edgesync's (this owner's), which one an
 * `id:` adopts, which are foreign; and which manifest each live edge belongs to. Pure.
 *
 * - owned: live metadata parses and `edgesync/owner` is our owner id. Matched to manifests by
 *   kind + `edgesync/name`; when several owned edges share one (a crash between POST and its
 *   answer, say), the oldest is kept and the others are deleted as duplicates.
 * - adoptable: metadata has no owner key, or is not edgesync's JSON at all. Touched only when a
 *   manifest names it by `id:`.
 * - foreign: owned by another owner id. Never diffed, never touched; `id:` on one is refused.
 */

import type { HttpsEdge, TlsEdge } from '../api/schemas.js';
import { type ParsedMetadata, recordMetadata } from '../manifest/metadata.js';
import type { DesiredSet, HttpsEdgeManifest, TlsEdgeManifest } from '../manifest/schema.js';
import type { Blocked } from './model.js';
import { canonicalHostports } from './normalize.js';
import { survivorFirst } from './survivor.js';

export type EdgeKind = 'tls_edge' | 'https_edge';

export interface LiveEdge {
  readonly kind: EdgeKind;
  readonly record: TlsEdge | HttpsEdge;
  /** Undefined when the metadata is not edgesync's JSON (written by someone else). */
  readonly meta: ParsedMetadata | undefined;
  /** `edgesync/owner` is ours. */
  readonly owned: boolean;
}

export type DesiredEdge =
  | { readonly kind: 'tls_edge'; readonly manifest: TlsEdgeManifest; readonly address: string }
  | { readonly kind: 'https_edge'; readonly manifest: HttpsEdgeManifest; readonly address: string };

export interface EdgeMatch {
  readonly desired: DesiredEdge;
  /** The live edge it maps to; undefined means create. */
  readonly live: LiveEdge | undefined;
  /** True when the live edge is taken over through `id:` (it was not ours). */
  readonly adopt: boolean;
}

export interface Orphan {
  readonly live: LiveEdge;
  readonly address: string;
  readonly reason: string;
}

export interface Ownership {
  readonly matches: EdgeMatch[];
  /** Owned live edges no manifest keeps: deletion candidates (before the guards). */
  readonly orphans: Orphan[];
  /** Manifests whose `id:` cannot be honoured. */
  readonly blocked: Blocked[];
  /** Every live edge by lower-cased hostport. */
  readonly hostportHolders: Map<string, LiveEdge>;
}

export const KIND_LABEL: Readonly<Record<EdgeKind, string>> = {
  tls_edge: 'TLS edge',
  https_edge: 'HTTPS edge',
};

export function edgeAddress(kind: EdgeKind, name: string): string {
  return `${kind}.${name}`;
}

function byAge(a: LiveEdge, b: LiveEdge): number {
  return survivorFirst(a.record, b.record);
}

/**
 * Each record's view, kept per record object: the daemon plans the same records cycle after
 * cycle, and a view is fixed by its record (never changed), kind and owner.
 */
const liveViews = new WeakMap<
  object,
  { readonly kind: EdgeKind; readonly ownerId: string; readonly edge: LiveEdge }
>();

export function liveEdgeOf(kind: EdgeKind, record: TlsEdge | HttpsEdge, owner: string): LiveEdge {
  const known = liveViews.get(record);
  if (known !== undefined && known.kind === kind && known.ownerId === owner) return known.edge;
  const meta = recordMetadata(record);
  const edge: LiveEdge = { kind, record, meta, owned: meta?.owner === owner };
  liveViews.set(record, { kind, ownerId: owner, edge });
  return edge;
}

export function classifyLive(
  live: { readonly tlsEdges: readonly TlsEdge[]; readonly httpsEdges: readonly HttpsEdge[] },
  owner: string,
): LiveEdge[] {
  const out: LiveEdge[] = [];
  for (const e of live.tlsEdges) out.push(liveEdgeOf('tls_edge', e, owner));
  for (const e of live.httpsEdges) out.push(liveEdgeOf('https_edge', e, owner));
  return out;
}

/** Each manifest's desired edge, kept per manifest object (a manifest is never changed). */
const desiredViews = new WeakMap<object, DesiredEdge>();

export function desiredEdgeOf(
  kind: EdgeKind,
  manifest: TlsEdgeManifest | HttpsEdgeManifest,
): DesiredEdge {
  const known = desiredViews.get(manifest);
  if (known !== undefined && known.kind === kind) return known;
  const edge = { kind, manifest, address: edgeAddress(kind, manifest.name) } as DesiredEdge;
  desiredViews.set(manifest, edge);
  return edge;
}

export function desiredEdges(desired: DesiredSet): DesiredEdge[] {
  const out: DesiredEdge[] = [];
  for (const m of desired.tlsEdges) out.push(desiredEdgeOf('tls_edge', m));
  for (const m of desired.httpsEdges) out.push(desiredEdgeOf('https_edge', m));
  return out;
}

/** Who holds a live edge, in words, for conflict messages. */
export function describeHolder(edge: LiveEdge): string {
  if (edge.meta === undefined)
    return "which edgesync does not manage (its metadata is not edgesync's)";
  if (edge.meta.owner === undefined) return 'which has no edgesync owner';
  return `which belongs to owner "${edge.meta.owner}"`;
}

export function resolveOwnership(
  desired: readonly DesiredEdge[],
  liveEdges: readonly LiveEdge[],
): Ownership {
  const byId = new Map<string, LiveEdge>();
  for (const e of liveEdges) byId.set(e.record.id, e);
  const claimed = new Set<string>();
  const blocked: Blocked[] = [];
  const matches: EdgeMatch[] = [];
  /** Names (per kind) of manifests whose `id:` failed: their namesakes are left alone. */
  const reservedNames = byKind<true>();

  // Owned edges by kind and name, oldest first.
  const byName = ownedByName(liveEdges);

  // `id:` first, so a name match never takes an edge that a manifest adopts explicitly.
  const pending: DesiredEdge[] = [];
  for (const d of desired) {
    const id = d.manifest.id;
    if (id === undefined) {
      pending.push(d);
      continue;
    }
    const problem = adoptionProblem(d, byId.get(id), claimed);
    if (problem !== undefined) {
      blocked.push({ address: d.address, kind: problem.kind, reason: problem.reason });
      reservedNames[d.kind].set(d.manifest.name, true);
      continue;
    }
    const live = byId.get(id) as LiveEdge;
    claimed.add(id);
    matches.push({ desired: d, live, adopt: !live.owned });
  }
  for (const d of pending) {
    // The oldest owned namesake not taken by an `id:` above.
    const live = byName[d.kind].get(d.manifest.name)?.find((e) => !claimed.has(e.record.id));
    if (live !== undefined) claimed.add(live.record.id);
    matches.push({ desired: d, live, adopt: false });
  }

  const keptByName = byKind<string>();
  for (const m of matches) {
    if (m.live !== undefined)
      keptByName[m.desired.kind].set(m.desired.manifest.name, m.live.record.id);
  }
  const orphans: Orphan[] = [];
  for (const e of liveEdges) {
    if (!e.owned || claimed.has(e.record.id)) continue;
    const name = e.meta?.name;
    if (name !== undefined && reservedNames[e.kind].has(name)) continue;
    const kept = name === undefined ? undefined : keptByName[e.kind].get(name);
    if (name === undefined) {
      orphans.push({
        live: e,
        address: `${e.kind}#${e.record.id}`,
        reason: 'owned edge without an edgesync/name: no manifest can keep it',
      });
    } else if (kept !== undefined) {
      orphans.push({
        live: e,
        address: `${edgeAddress(e.kind, name)}#${e.record.id}`,
        reason: `duplicate of ${kept} (same edgesync/name; the oldest is kept)`,
      });
    } else {
      orphans.push({ live: e, address: edgeAddress(e.kind, name), reason: 'manifest removed' });
    }
  }

  const hostportHolders = new Map<string, LiveEdge>();
  for (const e of liveEdges) {
    // The same keys as each hostport lower-cased, without lower-casing them again each plan.
    for (const h of canonicalHostports(e.record.hostports)) hostportHolders.set(h, e);
  }
  return { matches, orphans, blocked, hostportHolders };
}

function byKind<V>(): Record<EdgeKind, Map<string, V>> {
  return { tls_edge: new Map(), https_edge: new Map() };
}

/** Owned live edges by kind and `edgesync/name`, oldest first. */
function ownedByName(liveEdges: readonly LiveEdge[]): Record<EdgeKind, Map<string, LiveEdge[]>> {
  const byName = byKind<LiveEdge[]>();
  for (const e of liveEdges) {
    const name = e.meta?.name;
    if (!e.owned || name === undefined) continue;
    const list = byName[e.kind].get(name);
    if (list === undefined) byName[e.kind].set(name, [e]);
    else list.push(e);
  }
  for (const names of Object.values(byName)) {
    for (const list of names.values()) if (list.length > 1) list.sort(byAge);
  }
  return byName;
}

function adoptionProblem(
  d: DesiredEdge,
  live: LiveEdge | undefined,
  claimed: ReadonlySet<string>,
): { kind: Blocked['kind']; reason: string } | undefined {
  const id = d.manifest.id as string;
  if (live === undefined) {
    return { kind: 'guard', reason: `id ${id}: no such ${KIND_LABEL[d.kind]} in the account` };
  }
  if (live.kind !== d.kind) {
    return {
      kind: 'guard',
      reason: `id ${id} is a ${KIND_LABEL[live.kind]}, not a ${KIND_LABEL[d.kind]}`,
    };
  }
  if (claimed.has(id)) {
    return { kind: 'guard', reason: `id ${id} is already named by another manifest` };
  }
  if (!live.owned && live.meta?.owner !== undefined) {
    return {
      kind: 'conflict',
      reason: `id ${id} belongs to owner "${live.meta.owner}": edgesync never adopts another owner's edge`,
    };
  }
  return undefined;
}
