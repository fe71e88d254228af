/**
 * What the parts of the planner share while one plan is built: the options, the lists the plan
 * is assembled from, and the canonical hostports of each desired edge.
 */
import { DEFAULT_OWNER } from '../manifest/metadata.js';
import type { Blocked, ResourceChange } from './model.js';
import { canonicalHostports } from './normalize.js';
import type { DesiredEdge } from './ownership.js';

export const DEFAULT_MAX_DELETES = 10;

export interface PlanOptions {
  /** Owner id written to and matched in `edgesync/owner`. Default `default`. */
  readonly owner?: string | undefined;
  /** Let an empty desired set (no edge manifests) delete owned edges. Default false. */
  readonly allowEmpty?: boolean | undefined;
  /** More edge deletions than this in one plan blocks all of them. Default 10. */
  readonly maxDeletes?: number | undefined;
}

export class PlanContext {
  readonly owner: string;
  readonly allowEmpty: boolean;
  readonly maxDeletes: number;
  readonly changes: ResourceChange[] = [];
  readonly blocked: Blocked[] = [];
  readonly warnings: string[] = [];

  constructor(options: PlanOptions) {
    this.owner = options.owner ?? DEFAULT_OWNER;
    this.allowEmpty = options.allowEmpty ?? false;
    this.maxDeletes = options.maxDeletes ?? DEFAULT_MAX_DELETES;
  }

  /** The desired edge's hostports, canonical (kept per manifest list: `canonicalHostports`). */
  wanted(d: DesiredEdge): readonly string[] {
    return canonicalHostports(d.manifest.hostports);
  }
}
