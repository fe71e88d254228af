/**
 * `edgesync release`: stop managing edges, cloud endpoints and the resources of every other kind
 * owned by its metadata mark (src/kinds/), without deleting them. The pure half: which live
 * records a list of `KIND/NAME` targets names for an owner, the metadata each keeps once the
 * `edgesync/` keys are gone (the user's labels, key-sorted, or the empty string), and the plan of
 * those PATCHes the executor runs (`releasePlan`). After one PATCH per record it is unowned, so a
 * plan without its manifest deletes nothing (foreign edges are
 * never touched). Routes and modules need nothing: they belong to their edge.
 */
import type { LiveSnapshot } from '../api/observe.js';
import { KINDS, type KindDefinition, type LiveRecord } from '../kinds/index.js';
import { parseStoredMetadata, storedRouteMetadata } from '../manifest/metadata.js';
import { PLAN_FORMAT_VERSION, type Plan, type ResourceChange } from '../plan/model.js';
import { type PlannedTarget, routeTarget, targetPath } from '../plan/target.js';

/** A plan kind release takes (`tls_edge`, `cloud_endpoint`...). */
export type ReleaseKind = string;

export interface ReleaseTarget {
  readonly kind: ReleaseKind;
  readonly name: string;
}

export interface Release {
  readonly address: string;
  readonly kind: ReleaseKind;
  readonly id: string;
  /** The metadata after the release: the labels alone. */
  readonly metadata: string;
}

/**
 * The kinds release takes: every registered kind owned by the mark in its metadata (a kind
 * matched by a natural key is never deleted implicitly, so there is nothing to release).
 */
const RELEASE_KINDS: readonly KindDefinition[] = KINDS.filter((k) => k.ownership.by === 'metadata');

/** The manifest kinds release takes (`TLSEdge`), and their plan kinds (`tls_edge`). */
export const RELEASE_MANIFEST_KINDS: readonly string[] = RELEASE_KINDS.flatMap(
  (k) => k.manifestKinds,
);
export const RELEASE_PLAN_KINDS: readonly string[] = RELEASE_KINDS.map((k) => k.kind);

function releaseKindNames(kinds: readonly KindDefinition[]): string[] {
  return [...kinds.flatMap((k) => k.manifestKinds), ...kinds.map((k) => k.kind)];
}

/** A kind by any name a target may give it, lower-cased: `tlsedge`, `tls_edge`. */
function kindByName(kinds: readonly KindDefinition[], text: string): KindDefinition | undefined {
  const lower = text.toLowerCase();
  return kinds.find(
    (k) => k.kind === lower || k.manifestKinds.some((m) => m.toLowerCase() === lower),
  );
}

/**
 * `TLSEdge/api`, `https_edge/web` (kind case-insensitive); a string saying what is wrong
 * otherwise. `kinds`: the registered kinds (by default the registry).
 */
export function parseReleaseTarget(
  text: string,
  kinds: readonly KindDefinition[] = KINDS,
): ReleaseTarget | string {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) {
    return `"${text}" is not KIND/NAME (e.g. HTTPSEdge/storefront)`;
  }
  const kindText = text.slice(0, slash);
  const name = text.slice(slash + 1);
  const kind = kindByName(kinds, kindText);
  if (kind !== undefined && kind.ownership.by !== 'metadata') {
    return `"${text}": ${words(kind.plural)} carry no metadata edgesync reads and are never deleted implicitly: there is nothing to release (remove the manifest)`;
  }
  if (kind === undefined) {
    const names = releaseKindNames(kinds.filter((k) => k.ownership.by === 'metadata'));
    return `"${text}": unknown kind "${kindText}" (one of ${names.join(', ')})`;
  }
  return { kind: kind.kind, name };
}

/** `bot_users` -> `bot users`. */
function words(snake: string): string {
  return snake.replaceAll('_', ' ');
}

/** What a problem calls a resource of a kind: the last word of its name (`edge`, `endpoint`). */
function nounOf(kind: string): string {
  return kind.slice(kind.lastIndexOf('_') + 1);
}

export interface ReleasePlan {
  readonly releases: Release[];
  /** Targets that name no edge this owner manages, each with the reason. */
  readonly problems: string[];
}

/**
 * The releases for `targets` in `live`. Every owned record of that kind and name is released
 * (duplicates left by a crash too). A name held only by another owner, or by no one, is a problem.
 */
export function planRelease(
  targets: readonly ReleaseTarget[],
  live: Pick<LiveSnapshot, 'tlsEdges' | 'httpsEdges'> &
    Partial<Pick<LiveSnapshot, 'cloudEndpoints' | 'resources'>>,
  owner: string,
  kinds: readonly KindDefinition[] = KINDS,
): ReleasePlan {
  const releases: Release[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const address = `${target.kind}.${target.name}`;
    if (seen.has(address)) continue;
    seen.add(address);
    const kind = kinds.find((k) => k.kind === target.kind);
    const others = new Set<string>();
    let found = 0;
    for (const record of kind === undefined ? [] : recordsOf(live, kind)) {
      const meta = parseStoredMetadata(record.metadata);
      if (meta === undefined || meta.name !== target.name || meta.owner === undefined) continue;
      if (meta.owner !== owner) {
        others.add(meta.owner);
        continue;
      }
      found += 1;
      releases.push({
        address,
        kind: target.kind,
        id: record.id,
        metadata: storedRouteMetadata(meta.labels),
      });
    }
    if (found > 0) continue;
    problems.push(
      others.size > 0
        ? `${address}: managed by owner ${[...others].map((o) => `"${o}"`).join(', ')}, not "${owner}" (pass --owner)`
        : `${address}: no ${nounOf(target.kind)} of this kind and name is managed by owner "${owner}"`,
    );
  }
  return { releases, problems };
}

/** What a release change says it does (plans and logs). */
const RELEASE_REASON = 'released: the edgesync/ keys removed, the labels kept';

/** The operation target of a release: the record itself, by its kind's update operation. */
function releaseTarget(release: Release, kinds: readonly KindDefinition[]): PlannedTarget {
  if (release.kind === 'cloud_endpoint') return { kind: 'endpoint', id: release.id };
  if (release.kind === 'tls_edge' || release.kind === 'https_edge') {
    return {
      kind: 'edge',
      edge_kind: release.kind === 'tls_edge' ? 'tls' : 'https',
      id: release.id,
    };
  }
  const kind = kinds.find((k) => k.kind === release.kind);
  return routeTarget(kind?.api.update ?? '', release.id);
}

/**
 * The releases as a plan the executor runs like any other (its guards, its log, its failure
 * semantics): one PATCH of `metadata` per released resource, each its own root (`address#id`,
 * as the planner names a duplicate), so a duplicate left by a crash is released too.
 */
export function releasePlan(
  owner: string,
  releases: readonly Release[],
  kinds: readonly KindDefinition[] = KINDS,
): Plan {
  const changes = releases.map((r): ResourceChange => {
    const target = releaseTarget(r, kinds);
    const address = `${r.address}#${r.id}`;
    return {
      address,
      kind: r.kind,
      name: r.address.slice(r.kind.length + 1),
      root: address,
      action: 'update',
      reason: RELEASE_REASON,
      id: r.id,
      fields: [],
      modules: [],
      operations: [
        {
          method: 'PATCH',
          target,
          path: targetPath(target),
          body: { metadata: r.metadata },
          phase: 'main',
          sensitive_paths: [],
          description: 'remove the edgesync/ keys from metadata',
        },
      ],
    };
  });
  return {
    format_version: PLAN_FORMAT_VERSION,
    owner,
    changes,
    blocked: [],
    warnings: [],
    summary: { create: 0, update: changes.length, delete: 0, adopt: 0, noop: 0 },
  };
}

type MarkedRecord = LiveRecord & { readonly metadata?: string | null | undefined };

/** The live records of a kind: its own list for the four first kinds, else by kind. */
function recordsOf(
  live: Pick<LiveSnapshot, 'tlsEdges' | 'httpsEdges'> &
    Partial<Pick<LiveSnapshot, 'cloudEndpoints' | 'resources'>>,
  kind: KindDefinition,
): readonly MarkedRecord[] {
  if (kind.setKey === 'cloudEndpoints') {
    // Agent endpoints are never edgesync's, whatever their metadata says.
    return (live.cloudEndpoints ?? []).filter((e) => e.type === 'cloud');
  }
  if (kind.setKey === 'tlsEdges' || kind.setKey === 'httpsEdges') return live[kind.setKey];
  return (live.resources?.[kind.kind] ?? []) as readonly MarkedRecord[];
}
