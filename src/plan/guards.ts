/**
 * The planner's refusals: the deletion guards (exclusion, protect, the empty set, max deletes)
 * and the hostport conflicts, each recorded as a `blocked` entry of the plan.
 */
import type { ExcludedDeclarations } from '../manifest/excluded.js';
import type { Kind } from '../manifest/modules.js';
import { endpointAddress } from './cloud-endpoints.js';
import type { PlanContext } from './context.js';
import {
  describeHolder,
  type EdgeMatch,
  edgeAddress,
  KIND_LABEL,
  type LiveEdge,
  type Orphan,
} from './ownership.js';

/** The address a kind's resource of `name` has in a plan; service users are never orphans. */
const ORPHAN_ADDRESS: Readonly<Record<Kind, ((name: string) => string) | undefined>> = {
  TLSEdge: (name) => edgeAddress('tls_edge', name),
  HTTPSEdge: (name) => edgeAddress('https_edge', name),
  CloudEndpoint: endpointAddress,
  ServiceUser: undefined,
  BotUser: undefined,
};

/**
 * Exclusion never turns into deletion: an orphan that a file `--exclude` skipped declares (by
 * kind and name, duplicates `#ID` included) is left as it is live; when an excluded file could
 * not be read, what it declares is unknown and no orphan is deleted. Returns the others.
 */
export function leaveExcluded<T>(
  ctx: PlanContext,
  orphans: readonly T[],
  view: (o: T) => Deletable,
  excluded: ExcludedDeclarations | undefined,
): T[] {
  if (excluded === undefined || orphans.length === 0) return [...orphans];
  const declaredBy = new Map<string, string>();
  for (const d of excluded.declared) {
    const address = ORPHAN_ADDRESS[d.kind]?.(d.name);
    if (address !== undefined && !declaredBy.has(address)) declaredBy.set(address, d.file);
  }
  const unreadable = excluded.unreadable[0];
  return orphans.filter((o) => {
    const v = view(o);
    const hash = v.address.indexOf('#');
    const file = declaredBy.get(hash === -1 ? v.address : v.address.slice(0, hash));
    if (file === undefined && unreadable === undefined) return true;
    ctx.blocked.push({
      address: v.address,
      kind: 'excluded',
      reason:
        file !== undefined
          ? `${v.id}: declared in ${file}, which --exclude skips: left as it is live (an excluded file is never a reason to delete)`
          : `${v.id}: the excluded ${unreadable} cannot be read, so what it declares is unknown: nothing is deleted`,
    });
    return false;
  });
}

/** What the deletion guards need of a candidate (an owned edge or endpoint no manifest keeps). */
export interface Deletable {
  readonly address: string;
  readonly id: string;
  /** `edgesync/protect: "true"` live. */
  readonly protect: boolean;
  /** `edge`, `endpoint`, or the kind of a generically planned resource (`ip_policy`). */
  readonly noun: string;
}

/**
 * Applies protect, the empty-set guard and max-deletes to the owned edges and endpoints no
 * manifest keeps, counted together; returns the deletions allowed.
 */
export function guardDeletions<T>(
  ctx: PlanContext,
  orphans: readonly T[],
  view: (o: T) => Deletable,
  emptySet: boolean,
): T[] {
  const candidates: T[] = [];
  for (const o of orphans) {
    const v = view(o);
    if (v.protect) {
      ctx.blocked.push({
        address: v.address,
        kind: 'guard',
        reason: `${v.id} is protected (edgesync/protect=true) and is never deleted; to delete it, apply its manifest with protect: false first`,
      });
    } else {
      candidates.push(o);
    }
  }
  if (candidates.length === 0) return candidates;
  const edgesOnly = candidates.every((o) => view(o).noun === 'edge');
  const words = edgesOnly
    ? { one: 'edge', declared: 'edges', some: 'edge(s)', none: 'no edge is deleted' }
    : {
        one: 'edge or endpoint',
        declared: 'edges or endpoints',
        some: 'edge(s) and endpoint(s)',
        none: 'nothing is deleted',
      };
  let refusal: string | undefined;
  if (emptySet && !ctx.allowEmpty) {
    refusal = `the manifests declare no ${words.declared}: refusing to delete the ${candidates.length} ${words.some} owned by "${ctx.owner}" (pass --allow-empty to delete them)`;
  } else if (candidates.length > ctx.maxDeletes) {
    const n = candidates.length;
    refusal = `${n} ${words.one} deletion${n === 1 ? '' : 's'} ${n === 1 ? 'exceeds' : 'exceed'} the limit of ${ctx.maxDeletes} (--max-deletes): ${words.none}`;
  }
  if (refusal === undefined) return candidates;
  for (const o of candidates) {
    const v = view(o);
    ctx.blocked.push({ address: v.address, kind: 'guard', reason: `${v.id}: ${refusal}` });
  }
  return [];
}

/**
 * Blocks every desired edge that claims a hostport it cannot get: held by an edge that is not
 * ours, or by one of ours that keeps it (its own change blocked, its deletion refused). Runs
 * to a fixpoint because a blocked edge keeps the hostports it would have released.
 */
export function resolveHostports(
  ctx: PlanContext,
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
    return ctx.wanted(m.desired).includes(hostport)
      ? `(${m.desired.address}) which keeps it`
      : undefined;
  };

  let changed = true;
  while (changed) {
    changed = false;
    for (const m of matches) {
      if (blocked.has(m.desired.address)) continue;
      const selfId = m.live?.record.id;
      for (const h of ctx.wanted(m.desired)) {
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
  for (const [address, reason] of blocked) ctx.blocked.push({ address, kind: 'conflict', reason });
  return matches.filter((m) => !blocked.has(m.desired.address));
}
