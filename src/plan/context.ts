/**
 * What the parts of the planner share while one plan is built: the options, the lists the plan
 * is assembled from, and the canonical hostports of each desired edge.
 */
import type { BotUser, CloudEndpoint, HttpsEdge, TlsEdge } from '../api/schemas.js';
import type { LiveRecord, Readiness, Reference } from '../kinds/index.js';
import { DEFAULT_OWNER } from '../manifest/metadata.js';
import type { DesiredSet } from '../manifest/schema.js';
import type { PolicyImpactEntry } from './impact.js';
import type { Blocked, Plan, ReadinessEntry, ResourceChange } from './model.js';
import { canonicalHostports } from './normalize.js';
import type { DesiredEdge, EdgeMatch, LiveEdge } from './ownership.js';

/** What the planner needs of the live account (an `observe()` snapshot fits). */
export interface LiveState {
  readonly tlsEdges: readonly TlsEdge[];
  readonly httpsEdges: readonly HttpsEdge[];
  readonly botUsers: readonly BotUser[];
  /** Every endpoint listed, agent ones included (never touched); absent reads as none. */
  readonly cloudEndpoints?: readonly CloudEndpoint[] | undefined;
  /** The account has no access to edges (its edge lists were refused): it has none. */
  readonly edgesUnavailable?: boolean | undefined;
  /** Every registered kind's records by kind (what the generic planner reads); absent: none. */
  readonly resources?: Readonly<Record<string, readonly LiveRecord[]>> | undefined;
}

/** What the last plan was made from, and the whole-set results a patch of it reuses (./patch.ts). */
export interface PlanBasis {
  readonly desired: DesiredSet;
  readonly live: LiveState;
  readonly options: PlanOptions;
  readonly plan: Plan;
  /** The edges the plan updated (matched live, not blocked, not suspended), by address. */
  readonly updated: Map<string, EdgeMatch>;
  /** Live edge ID -> address, for the same edges. */
  readonly addressOf: Map<string, string>;
  /** Hostport -> address of the edge that claims it (`edgeClaimsOf`, endpoints' claims too). */
  readonly claims: ReadonlyMap<string, string>;
  /** Every live edge by canonical hostport (`Ownership.hostportHolders`). */
  readonly holders: Map<string, LiveEdge>;
}

export const DEFAULT_MAX_DELETES = 10;

/** What a reference resolves to: the ID (or placeholder), and how ready the resource is. */
export interface ResolvedReference {
  /** The live ID, or the placeholder of its create in this plan. */
  readonly value: string;
  /** The address whose create in this plan provides the ID. */
  readonly created?: string;
  /** The address of the resource referred to. */
  readonly address: string;
  /** Its readiness, when it exists live and its kind has one (a create's is not known yet). */
  readonly readiness?: Readiness;
}

/**
 * Resolves a reference by name to a live ID, or to the placeholder of a create in this plan
 * (`created` then names the address to require); undefined when it names nothing; `unchecked`
 * when it names nothing and need not (`Reference.onlyWhereUsed` on an account without the kind).
 */
export type ResolveReference = (ref: Reference) => ResolvedReference | 'unchecked' | undefined;

export interface PlanOptions {
  /** Owner id written to and matched in `edgesync/owner`. Default `default`. */
  readonly owner?: string | undefined;
  /** Let an empty desired set (no edge manifests) delete owned edges. Default false. */
  readonly allowEmpty?: boolean | undefined;
  /** More edge deletions than this in one plan blocks all of them. Default 10. */
  readonly maxDeletes?: number | undefined;
  /**
   * Verdicts of earlier plans to reuse (`PlanMemo`): the daemon keeps one between cycles. A plan
   * without one diffs every resource.
   */
  readonly memo?: PlanMemo | undefined;
  /**
   * Bot users this process provably created (IDs from its own 201 answers to creates whose
   * first attempt's outcome was unknown). Bot users carry no ownership mark, so these are the
   * only namesakes the plan may delete as duplicates; any other namesake is only reported.
   */
  readonly ownBotUsers?: ReadonlySet<string> | undefined;
  /**
   * `--target`: the addresses of the only resources to plan (edges with their routes and
   * modules, cloud endpoints, bot users; see ./targets.ts). Nothing else is planned, created,
   * updated or deleted; a targeted resource whose change needs another one's (a hostport or
   * URL it holds) is blocked by it, as that one is not planned. Absent: every resource.
   */
  readonly targets?: ReadonlySet<string> | undefined;
  /**
   * Evaluate each changed endpoint policy's impact on requests (`policy_impact`). Default true;
   * off where nobody reads the plan (the daemon executes it).
   */
  readonly policyPreview?: boolean | undefined;
  /**
   * Hold back the create of a resource whose reference requires a resource that is not ready
   * (an endpoint on a domain still waiting for its DNS): blocked, tried again at the next
   * plan. Default true; `--no-wait-for-domains` turns it off.
   */
  readonly waitForReady?: boolean | undefined;
}

/** The flag that creates what waits for a resource that is not ready (`waitForReady: false`). */
export const NO_WAIT_FLAG = '--no-wait-for-domains';

/**
 * Up-to-date edges of earlier plans, by manifest: a manifest object and a live record that are
 * both the same objects as last time give the same verdict (the daemon keeps both between
 * cycles: `FileCache` and its snapshot), so a 10,000-edge plan after one file changed diffs one
 * edge (and `basis` lets the next plan skip the whole-set steps). Only verdicts without an operation are kept: those never read the plan's hostport
 * claims, so they depend on nothing but the key. Weak: a manifest gone is forgotten. The daemon
 * starts a new memo with each full listing (every record is new then: nothing would be reused,
 * and the old verdicts would only double the cycle's memory).
 */
export class PlanMemo {
  /**
   * The last plan made with this memo and what it was made from: the next plan, after a change
   * to a few edges, is made from it (`patchPlan`, ./patch.ts).
   */
  basis: PlanBasis | undefined;
  /**
   * The basis before `basis` when `basis` is a plan of the whole set made because no patch
   * fitted: a transient set (a file read half written, then whole) is patched from this one.
   */
  fallback: PlanBasis | undefined;

  readonly #settled = new WeakMap<
    object,
    {
      readonly record: object;
      readonly owner: string;
      readonly adopt: boolean;
      readonly changes: readonly ResourceChange[];
    }
  >();

  /** The kept changes of `manifest` planned against `record`, or undefined. */
  lookup(
    manifest: object,
    record: object,
    owner: string,
    adopt: boolean,
  ): readonly ResourceChange[] | undefined {
    const known = this.#settled.get(manifest);
    return known !== undefined &&
      known.record === record &&
      known.owner === owner &&
      known.adopt === adopt
      ? known.changes
      : undefined;
  }

  /** Keeps `changes` when none of them has an operation. */
  keep(
    manifest: object,
    record: object,
    owner: string,
    adopt: boolean,
    changes: readonly ResourceChange[],
  ): void {
    if (changes.every((c) => c.operations.length === 0)) {
      this.#settled.set(manifest, { record, owner, adopt, changes });
    }
  }
}

export class PlanContext {
  readonly owner: string;
  readonly allowEmpty: boolean;
  readonly maxDeletes: number;
  readonly memo: PlanMemo | undefined;
  readonly ownBotUsers: ReadonlySet<string>;
  readonly policyPreview: boolean;
  readonly waitForReady: boolean;
  /** `--target`'s addresses; undefined: every resource. */
  readonly targets: ReadonlySet<string> | undefined;
  readonly changes: ResourceChange[] = [];
  readonly blocked: Blocked[] = [];
  readonly warnings: string[] = [];
  /** The impact preview of each endpoint whose policy changes (./impact.ts). */
  readonly impacts: PolicyImpactEntry[] = [];
  /** Declared resources live but not ready (./generic.ts). */
  readonly readiness: ReadinessEntry[] = [];

  constructor(options: PlanOptions) {
    this.owner = options.owner ?? DEFAULT_OWNER;
    this.allowEmpty = options.allowEmpty ?? false;
    this.maxDeletes = options.maxDeletes ?? DEFAULT_MAX_DELETES;
    this.memo = options.memo;
    this.ownBotUsers = options.ownBotUsers ?? new Set();
    this.policyPreview = options.policyPreview ?? true;
    this.targets = options.targets;
    this.waitForReady = options.waitForReady ?? true;
  }

  /** The desired edge's hostports, canonical (kept per manifest list: `canonicalHostports`). */
  wanted(d: DesiredEdge): readonly string[] {
    return canonicalHostports(d.manifest.hostports);
  }
}
