/**
 * The impact preview of a cloud endpoint's policy change, as the plan carries it: for each
 * endpoint whose policy changes, the requests (declared cases and probes) whose outcome changes,
 * those that now get through without a protection first (src/policy-eval/impact.ts computes
 * them). The listing is bounded per endpoint; the count of the rest is kept. Pure.
 */
import { z } from 'zod';
import type { PolicyCase } from '../manifest/policy/tests.js';
import { policyImpact } from '../policy-eval/impact.js';

/** Requests listed per endpoint at most (weakened ones first). */
export const MAX_LISTED_REQUESTS = 40;

export const policyImpactSchema = z.object({
  /** The endpoint's address (`cloud_endpoint.app`). */
  address: z.string(),
  /** Requests evaluated through the old and the new policy. */
  requests: z.number(),
  changes: z.array(
    z.object({
      request: z.string(),
      before: z.string(),
      after: z.string(),
      /** The request now gets through without these protections (`without oauth`). */
      weakened: z.string().optional(),
    }),
  ),
  /** Changed requests not listed (over `MAX_LISTED_REQUESTS`). */
  omitted: z.number().default(0),
});
export type PolicyImpactEntry = z.infer<typeof policyImpactSchema>;

/** The entry for one endpoint, or undefined when no request's outcome changes. */
export function impactEntry(
  address: string,
  url: string,
  before: unknown,
  after: unknown,
  cases: readonly PolicyCase[],
): PolicyImpactEntry | undefined {
  const isDoc = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isDoc(before) || !isDoc(after)) return undefined;
  const impact = policyImpact(url, before, after, cases);
  if (impact.changes.length === 0) return undefined;
  const ordered = [
    ...impact.changes.filter((c) => c.weakened !== undefined),
    ...impact.changes.filter((c) => c.weakened === undefined),
  ];
  return {
    address,
    requests: impact.requests,
    changes: ordered.slice(0, MAX_LISTED_REQUESTS),
    omitted: Math.max(0, ordered.length - MAX_LISTED_REQUESTS),
  };
}
