/**
 * The measured half of the `plan` benchmark, run in a fresh process per sample:
 * `node plan-child.js DIR URL KEY` runs the plan pipeline once and prints one JSON line with
 * its wall time, its API calls by route (counted at the client) and its peak RSS. With
 * `--no-policy-preview`, the plan is made without the policy impact preview (the policy bench's
 * plan to compare with).
 */
import { performance } from 'node:perf_hooks';
import { createApiClient } from '../src/api/client.js';
import { preparePlan } from '../src/engine/pipeline.js';
import { secretValues } from '../src/manifest/secrets.js';
import { maskPlan } from '../src/plan/mask.js';
import { buildPlan } from '../src/plan/plan.js';
import { renderText } from '../src/plan/render/text.js';

export interface ChildResult {
  readonly ms: number;
  readonly phases: { readonly prepare: number; readonly plan: number; readonly render: number };
  readonly calls: { tlsList: number; httpsList: number; botList: number; other: number };
  readonly maxRssMb: number;
  /** CPU time (user + system) of the process up to the rendered plan, start-up included. */
  readonly cpuMs: number;
  readonly pendingChanges: number;
  readonly resources: number;
}

async function main(): Promise<void> {
  const [dir, url, apiKey, flag] = process.argv.slice(2);
  if (dir === undefined || url === undefined || apiKey === undefined) {
    throw new Error('usage: plan-child DIR URL KEY [--no-policy-preview]');
  }
  const policyPreview = flag !== '--no-policy-preview';
  const calls = { tlsList: 0, httpsList: 0, botList: 0, other: 0 };
  const client = createApiClient({
    baseUrl: url,
    apiKey,
    onResponse: (info) => {
      if (info.method === 'GET' && info.route === '/edges/tls') calls.tlsList += 1;
      else if (info.method === 'GET' && info.route === '/edges/https') calls.httpsList += 1;
      else if (info.method === 'GET' && info.route === '/bot_users') calls.botList += 1;
      else calls.other += 1;
    },
  });
  const start = performance.now();
  // As `edgesync plan` runs for text output (no fingerprints: those are for --out).
  const prepared = await preparePlan({ dir, client, env: {}, fingerprint: false, policyPreview });
  const prepare = performance.now() - start;
  renderText(maskPlan(prepared.plan, secretValues(prepared.desired, prepared.snapshot)));
  const ms = performance.now() - start;
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  // Before the breakdown below: its second plan is the benchmark's, not the command's.
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  await client.close();
  // The planner alone, on the same inputs (for the breakdown; not part of `ms`).
  const p0 = performance.now();
  buildPlan(prepared.desired, prepared.snapshot, { policyPreview });
  const plan = performance.now() - p0;
  const result: ChildResult = {
    ms,
    phases: { prepare, plan, render: ms - prepare },
    calls,
    maxRssMb,
    cpuMs,
    pendingChanges:
      prepared.plan.changes.filter((c) => c.action !== 'noop').length +
      prepared.plan.blocked.length,
    resources: prepared.plan.changes.length,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
