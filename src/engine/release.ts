/**
 * `release` as a run: observe the account, find what the targets name (all or nothing before
 * the first write), then write through the same executor as every apply: its guards (only this
 * owner's resources are touched), its log and its failure semantics, one PATCH of `metadata` per
 * released resource, in order.
 */
import { type ApiClient, observe } from '../api/index.js';
import { executePlan } from '../apply/executor.js';
import { planRelease, type Release, type ReleaseTarget, releasePlan } from '../apply/release.js';

export interface ReleaseOptions {
  readonly client: ApiClient;
  readonly targets: readonly ReleaseTarget[];
  readonly owner: string;
  /** Find what would be released; write nothing. */
  readonly dryRun: boolean;
  readonly signal?: AbortSignal | undefined;
  /** Each release once written (`error` undefined) or not (what went wrong), in order. */
  readonly onRelease?: ((release: Release, error: string | undefined) => void) | undefined;
}

export type ReleaseEnding =
  /** A target names nothing this owner manages: nothing was written. */
  | { readonly ending: 'problems'; readonly problems: readonly string[] }
  | { readonly ending: 'dry_run'; readonly releases: readonly Release[] }
  /** Written; `failed` of them were not released (`onRelease` said why). */
  | { readonly ending: 'released'; readonly releases: readonly Release[]; readonly failed: number };

export async function runRelease(options: ReleaseOptions): Promise<ReleaseEnding> {
  const { client, signal } = options;
  // 1. Observe the account.
  const live = await observe(client, { signal });
  // 2. Plan: every target names a resource this owner manages, or nothing is written.
  const { releases, problems } = planRelease(options.targets, live, options.owner);
  if (problems.length > 0) return { ending: 'problems', problems };
  if (options.dryRun) return { ending: 'dry_run', releases };
  // 3. Apply, one at a time in the targets' order, through the executor and its guards.
  const plan = releasePlan(options.owner, releases);
  const byAddress = new Map(plan.changes.map((c, i) => [c.address, releases[i] as Release]));
  const result = await executePlan(plan, {
    client,
    concurrency: 1,
    signal,
    guards: { live },
    onProgress: (event) => {
      const release = byAddress.get(event.address);
      if (release === undefined) return;
      if (event.outcome === 'failed') options.onRelease?.(release, event.error ?? 'failed');
      else if (event.outcome === 'skipped') options.onRelease?.(release, 'not sent: stopped');
      else options.onRelease?.(release, undefined);
    },
  });
  return { ending: 'released', releases, failed: result.failed + result.skipped };
}
