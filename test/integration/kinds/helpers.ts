/**
 * Helpers for the kinds' integration tests: a client that records each write it makes (method,
 * route template, status), and one apply of a manifest directory as `apply --yes` runs it
 * (load, observe, plan, execute, observe and plan again), returning the plan after it too.
 */
import { type ApiClient, createApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { type LoadOptions, loadManifests } from '../../../src/manifest/loader.js';
import { writerStamps } from '../../../src/plan/index.js';
import { buildPlan } from '../../../src/plan/plan.js';

/** A client whose writes are listed in `calls` as `METHOD /route/{id} STATUS`. */
export function recordingClient(
  url: string,
  apiKey: string,
): { client: ApiClient; calls: string[] } {
  const calls: string[] = [];
  const client = createApiClient({
    baseUrl: url,
    apiKey,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    onResponse: (r) => {
      if (r.method !== 'GET') calls.push(`${r.method} ${r.route} ${r.status}`);
    },
  });
  return { client, calls };
}

/** One apply of `dir`; `next` is the plan of the same directory against the account after it. */
export async function applyDir(client: ApiClient, dir: string, options: LoadOptions = {}) {
  const loaded = await loadManifests(dir, options);
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
  const desired = loaded.set;
  const live = await observe(client);
  const plan = buildPlan(desired, live);
  const outcome = await applyAndVerify(plan, {
    client,
    live,
    stamp: writerStamps(desired, plan.owner),
    replan: async () => {
      const again = await observe(client);
      return { live: again, plan: buildPlan(desired, again) };
    },
  });
  const after = await observe(client);
  return { plan, outcome, next: buildPlan(desired, after), after };
}

/** The changes of a plan that do something, as `action address`. */
export function acting(plan: {
  readonly changes: readonly { readonly action: string; readonly address: string }[];
}): string[] {
  return plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.address}`);
}
