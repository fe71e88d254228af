/**
 * `edgesync release`: stop managing edges and cloud endpoints without deleting them. The pure half: which live edges
 * a list of `KIND/NAME` targets names for an owner, and the metadata each keeps once the
 * `edgesync/` keys are gone (the user's labels, key-sorted, or the empty string), and the plan of
 * those PATCHes the executor runs (`releasePlan`). After one PATCH per edge the edge is unowned, so a plan without its manifest deletes nothing (foreign edges are
 * never touched). Routes and modules need nothing: they belong to their edge.
 */
import type { LiveSnapshot } from '../api/observe.js';
import { parseStoredMetadata, storedRouteMetadata } from '../manifest/metadata.js';
import { PLAN_FORMAT_VERSION, type Plan, type ResourceChange } from '../plan/model.js';
import { type PlannedTarget, targetPath } from '../plan/target.js';

export type ReleaseKind = 'tls_edge' | 'https_edge' | 'cloud_endpoint';

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

const KINDS: Readonly<Record<string, ReleaseKind>> = {
  tlsedge: 'tls_edge',
  tls_edge: 'tls_edge',
  httpsedge: 'https_edge',
  https_edge: 'https_edge',
  cloudendpoint: 'cloud_endpoint',
  cloud_endpoint: 'cloud_endpoint',
};

/** The kinds a target may name, as the usage text shows them. */
export const RELEASE_KIND_NAMES = [
  'TLSEdge',
  'HTTPSEdge',
  'CloudEndpoint',
  'tls_edge',
  'https_edge',
  'cloud_endpoint',
] as const;

/** `TLSEdge/api`, `https_edge/web` (kind case-insensitive); a string saying what is wrong otherwise. */
export function parseReleaseTarget(text: string): ReleaseTarget | string {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) {
    return `"${text}" is not KIND/NAME (e.g. HTTPSEdge/storefront)`;
  }
  const kindText = text.slice(0, slash);
  const name = text.slice(slash + 1);
  if (kindText.toLowerCase() === 'botuser' || kindText.toLowerCase() === 'bot_user') {
    return `"${text}": bot users carry no metadata and are never deleted implicitly: there is nothing to release (remove the manifest)`;
  }
  const kind = KINDS[kindText.toLowerCase()];
  if (kind === undefined) {
    return `"${text}": unknown kind "${kindText}" (one of ${RELEASE_KIND_NAMES.join(', ')})`;
  }
  return { kind, name };
}

export interface ReleasePlan {
  readonly releases: Release[];
  /** Targets that name no edge this owner manages, each with the reason. */
  readonly problems: string[];
}

/**
 * The releases for `targets` in `live`. Every owned edge of that kind and name is released
 * (duplicates left by a crash too). A name held only by another owner, or by no one, is a problem.
 */
export function planRelease(
  targets: readonly ReleaseTarget[],
  live: Pick<LiveSnapshot, 'tlsEdges' | 'httpsEdges'> &
    Partial<Pick<LiveSnapshot, 'cloudEndpoints'>>,
  owner: string,
): ReleasePlan {
  const releases: Release[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const address = `${target.kind}.${target.name}`;
    if (seen.has(address)) continue;
    seen.add(address);
    const records: readonly {
      readonly id: string;
      readonly metadata?: string | null | undefined;
    }[] =
      target.kind === 'tls_edge'
        ? live.tlsEdges
        : target.kind === 'https_edge'
          ? live.httpsEdges
          : // Agent endpoints are never edgesync's, whatever their metadata says.
            (live.cloudEndpoints ?? []).filter((e) => e.type === 'cloud');
    const others = new Set<string>();
    let found = 0;
    for (const edge of records) {
      const meta = parseStoredMetadata(edge.metadata);
      if (meta === undefined || meta.name !== target.name || meta.owner === undefined) continue;
      if (meta.owner !== owner) {
        others.add(meta.owner);
        continue;
      }
      found += 1;
      releases.push({
        address,
        kind: target.kind,
        id: edge.id,
        metadata: storedRouteMetadata(meta.labels),
      });
    }
    if (found > 0) continue;
    problems.push(
      others.size > 0
        ? `${address}: managed by owner ${[...others].map((o) => `"${o}"`).join(', ')}, not "${owner}" (pass --owner)`
        : `${address}: no ${target.kind === 'cloud_endpoint' ? 'endpoint' : 'edge'} of this kind and name is managed by owner "${owner}"`,
    );
  }
  return { releases, problems };
}

/** What a release change says it does (plans and logs). */
const RELEASE_REASON = 'released: the edgesync/ keys removed, the labels kept';

/** The operation target of a release: the edge or the cloud endpoint itself. */
function releaseTarget(release: Release): PlannedTarget {
  if (release.kind === 'cloud_endpoint') return { kind: 'endpoint', id: release.id };
  return { kind: 'edge', edge_kind: release.kind === 'tls_edge' ? 'tls' : 'https', id: release.id };
}

/**
 * The releases as a plan the executor runs like any other (its guards, its log, its failure
 * semantics): one PATCH of `metadata` per released resource, each its own root (`address#id`,
 * as the planner names a duplicate), so a duplicate left by a crash is released too.
 */
export function releasePlan(owner: string, releases: readonly Release[]): Plan {
  const changes = releases.map((r): ResourceChange => {
    const target = releaseTarget(r);
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
