/**
 * The applier's own safety checks, run on the whole plan before its first write (design
 * section 3): once per run, by the engine (src/engine/run.ts), whose verdict the executor takes;
 * the executor checks a plan it is handed no verdict for. The planner already encodes guards as
 * `blocked` entries; these checks enforce the same rules again from the plan's operations and
 * the live snapshot, so a planner bug can never delete too much, delete a protected edge, or
 * touch an edge edgesync does not own.
 *
 * Policy for the planner's `blocked` entries:
 * - a `guard` entry (max deletes exceeded, empty manifest set, an `id:` that cannot be adopted)
 *   is a refusal: the whole apply stops before it writes anything, like Terraform refusing a
 *   plan with errors, and the message says how to override;
 * - except a protected edge whose manifest is gone: keeping it is the point of `protect`, so it
 *   is reported as kept and never blocks the rest (else one protected edge would block every
 *   apply forever). Telling it apart needs the live snapshot; without one, it is a refusal;
 * - a `conflict` (a hostport or an `id:` held by an edge we do not own) is not a refusal: the
 *   planner left that resource out, the rest is applied, and the post-apply check reports it.
 */
import type { CloudEndpoint, LiveSnapshot } from '../api/index.js';
import type { HttpsEdge, TlsEdge } from '../api/schemas.js';
import { recordMetadata } from '../manifest/metadata.js';
import type { DesiredSet } from '../manifest/schema.js';
import {
  type Blocked,
  leftAlone,
  type Operation,
  type Plan,
  type ResourceChange,
} from '../plan/model.js';
import { changesAt, outlineOf, rootChange } from '../plan/outline.js';
import { DEFAULT_MAX_DELETES } from '../plan/plan.js';
import { refersToCreated, targetEdge } from '../plan/target.js';
import { recordById } from './live-index.js';

export interface GuardOptions {
  /** Most edge deletions one apply may make; default 10. */
  readonly maxDeletes?: number | undefined;
  /** Let an empty manifest set delete what it owns. */
  readonly allowEmpty?: boolean | undefined;
  /**
   * Resources in the desired set (manifests); 0 means an empty set. Undefined: unknown, and the
   * empty-set check is left to the planner.
   */
  readonly desiredCount?: number | undefined;
  /** The live state the plan was computed from: enables the ownership and protect checks. */
  readonly live?: LiveSnapshot | undefined;
}

export interface GuardVerdict {
  /** Why the plan must not be applied at all; empty when it may. */
  readonly refusals: string[];
  /** The planner's `blocked` entries that refuse the plan (each one is among `refusals`). */
  readonly fatal: Blocked[];
  /** Resources the plan leaves out because of a foreign conflict: reported, not fatal. */
  readonly conflicts: Blocked[];
  /** Protected edges whose manifest is gone: kept on purpose, reported. */
  readonly kept: Blocked[];
}

interface LiveEdge {
  readonly owner: string | undefined;
  readonly protect: boolean;
}

/** Resources the manifests declare: the `desiredCount` of GuardOptions (0: an empty set). */
export function desiredCount(set: DesiredSet): number {
  return (
    set.tlsEdges.length + set.httpsEdges.length + set.botUsers.length + set.cloudEndpoints.length
  );
}

/**
 * A deletion the max-deletes guard counts: an edge's, or an endpoint's no manifest keeps (phase
 * `delete`; the DELETE of a replacement is followed by its create).
 */
export function isEdgeDelete(op: Operation): boolean {
  return (
    op.method === 'DELETE' &&
    (op.target.kind === 'edge' || (op.target.kind === 'endpoint' && op.phase === 'delete'))
  );
}

/**
 * A plan and its verdict, assessed once (the engine's run): the executor takes it instead of
 * checking the same plan again. Bound to the plan object it was made for.
 */
export interface AssessedPlan {
  readonly plan: Plan;
  readonly verdict: GuardVerdict;
}

export function checkGuards(plan: Plan, options: GuardOptions = {}): GuardVerdict {
  const refusals: string[] = [];
  const { fatal, conflicts, kept } = classifyBlocked(plan, options.live);
  for (const b of fatal) refusals.push(`${b.address}: ${b.reason}`);

  // The changes that write only: a 50,000-resource plan after one save has a few operations.
  const ops: { change: ResourceChange; op: Operation }[] = [];
  for (const c of outlineOf(plan).writing)
    for (const op of c.operations) ops.push({ change: c, op });
  const maxDeletes = options.maxDeletes ?? DEFAULT_MAX_DELETES;
  const edgeDeletes = ops.filter(({ op }) => isEdgeDelete(op)).length;
  if (edgeDeletes > maxDeletes) {
    refusals.push(
      `the plan deletes ${edgeDeletes} edges, more than --max-deletes ${maxDeletes}; ` +
        'raise --max-deletes if this is intended',
    );
  }
  if (
    options.desiredCount === 0 &&
    options.allowEmpty !== true &&
    ops.some(({ op }) => op.method === 'DELETE')
  ) {
    refusals.push(
      'the manifest set is empty and the plan deletes live resources; ' +
        'pass --allow-empty if everything should really go',
    );
  }

  refusals.push(...ownershipRefusals(plan, ops, options.live));
  refusals.push(...endpointRefusals(ops, plan.owner, options.live));
  return { refusals: dedupe(refusals), fatal, conflicts, kept };
}

/** Sorts the plan's `blocked` entries by what they mean for an apply (see the header). */
export function classifyBlocked(
  plan: Plan,
  live: LiveSnapshot | undefined,
): { fatal: Blocked[]; conflicts: Blocked[]; kept: Blocked[] } {
  const protectedAddresses = new Set<string>();
  // Nothing blocked (the usual plan): no live edge needs reading.
  const edges =
    plan.blocked.length === 0
      ? []
      : [
          ...(live?.tlsEdges ?? []).map((e) => ({ kind: 'tls_edge', e })),
          ...(live?.httpsEdges ?? []).map((e) => ({ kind: 'https_edge', e })),
        ];
  const endpoints =
    plan.blocked.length === 0
      ? []
      : (live?.cloudEndpoints ?? [])
          .filter((e) => e.type === 'cloud')
          .map((e) => ({ kind: 'cloud_endpoint', e }));
  for (const { kind, e } of [...edges, ...endpoints]) {
    const meta = recordMetadata(e);
    if (meta?.owner !== plan.owner || !meta.protect || meta.name === undefined) continue;
    protectedAddresses.add(`${kind}.${meta.name}`);
    protectedAddresses.add(`${kind}.${meta.name}#${e.id}`);
  }
  const fatal: Blocked[] = [];
  const conflicts: Blocked[] = [];
  const kept: Blocked[] = [];
  if (plan.blocked.length === 0) return { fatal, conflicts, kept };
  const changed = (address: string) => changesAt(plan, address).length > 0;
  for (const b of plan.blocked) {
    if (b.kind === 'conflict') conflicts.push(b);
    // `suspend: true`, or declared in an excluded file: left as it is on purpose, like a kept
    // protected edge.
    else if (leftAlone(b)) kept.push(b);
    // Protected and no manifest for it any more (no change at that address): kept on purpose.
    else if (protectedAddresses.has(b.address) && !changed(b.address)) kept.push(b);
    else fatal.push(b);
  }
  return { fatal, conflicts, kept };
}

function ownershipRefusals(
  plan: Plan,
  ops: readonly { change: ResourceChange; op: Operation }[],
  live: LiveSnapshot | undefined,
): string[] {
  // Only the edges the operations target are read (a converged plan has none).
  const targeted = new Set<string>();
  for (const { op } of ops) {
    const id = targetEdge(op.target);
    if (typeof id === 'string') targeted.add(id);
  }
  const edges = new Map<string, LiveEdge>();
  for (const e of liveEdgesById(live, targeted)) {
    const meta = recordMetadata(e);
    edges.set(e.id, { owner: meta?.owner, protect: meta?.protect ?? false });
  }
  // Only the roots of the changes that write are looked up (none in a converged plan).
  const roots = new Map<string, ResourceChange | undefined>();
  for (const { change } of ops) {
    if (!roots.has(change.root)) roots.set(change.root, rootChange(plan, change.root));
  }

  const out: string[] = [];
  for (const { change, op } of ops) {
    // A reference to something this plan creates: ours by construction.
    if (refersToCreated(op.target)) continue;
    const edgeId = targetEdge(op.target);
    if (typeof edgeId !== 'string') continue;
    const root = roots.get(change.root);
    const where = `${change.address} (${op.method} ${op.path})`;
    if (root?.id !== undefined && root.id !== edgeId && root.kind !== 'bot_user') {
      out.push(`${where}: targets edge ${edgeId}, not ${root.id}, the edge of ${root.address}`);
      continue;
    }
    const edge = edges.get(edgeId);
    // Unknown: no snapshot given, or gone since observation (the API answers 404, handled).
    if (edge === undefined) continue;
    const adopting = root?.action === 'adopt' && root.id === edgeId;
    if (edge.owner !== plan.owner && !adopting) {
      const who = edge.owner === undefined ? 'not managed by edgesync' : `owned by "${edge.owner}"`;
      out.push(`${where}: refusing to touch edge ${edgeId}, ${who}`);
      continue;
    }
    if (edge.protect && isEdgeDelete(op)) {
      out.push(`${where}: edge ${edgeId} is protected (edgesync/protect) and is never deleted`);
    }
  }
  return out;
}

/** The live edges (TLS, then HTTPS) with one of `ids`, looked up by ID (./live-index.ts). */
function liveEdgesById(
  live: LiveSnapshot | undefined,
  ids: ReadonlySet<string>,
): (TlsEdge | HttpsEdge)[] {
  if (ids.size === 0 || live === undefined) return [];
  const out: (TlsEdge | HttpsEdge)[] = [];
  for (const list of [live.tlsEdges, live.httpsEdges]) {
    for (const id of ids) {
      const e = recordById<TlsEdge | HttpsEdge>(list, id);
      if (e !== undefined) out.push(e);
    }
  }
  return out;
}

/**
 * Every write to an existing endpoint must target a cloud endpoint of this owner (or the unowned
 * one its change adopts, by `id:`, with a PATCH), and never delete a protected one: agent
 * endpoints and other owners' are never touched.
 */
function endpointRefusals(
  ops: readonly { change: ResourceChange; op: Operation }[],
  owner: string,
  live: LiveSnapshot | undefined,
): string[] {
  const out: string[] = [];
  let byId: Map<string, CloudEndpoint> | undefined;
  for (const { change, op } of ops) {
    if (op.target.kind !== 'endpoint' || typeof op.target.id !== 'string') continue;
    const id = op.target.id;
    const where = `${change.address} (${op.method} ${op.path})`;
    if (change.id !== id) {
      out.push(`${where}: targets endpoint ${id}, not ${change.id ?? 'a new one'}`);
      continue;
    }
    byId ??= new Map((live?.cloudEndpoints ?? []).map((e) => [e.id, e]));
    const record = byId.get(id);
    if (record === undefined) continue;
    const meta = recordMetadata(record);
    if (record.type !== 'cloud') {
      out.push(`${where}: refusing to touch ${id}, an ${record.type} endpoint`);
    } else if (
      meta?.owner !== owner &&
      !(change.action === 'adopt' && meta?.owner === undefined && op.method === 'PATCH')
    ) {
      const who =
        meta?.owner === undefined ? 'not managed by edgesync' : `owned by "${meta.owner}"`;
      out.push(`${where}: refusing to touch endpoint ${id}, ${who}`);
    } else if (meta?.protect === true && op.method === 'DELETE') {
      out.push(`${where}: endpoint ${id} is protected (edgesync/protect) and is never deleted`);
    }
  }
  return out;
}

function dedupe(list: readonly string[]): string[] {
  return [...new Set(list)];
}
