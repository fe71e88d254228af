/**
 * `npm run bench -- policy`: the policy evaluator's cost. (1) 1,000 policy tests over 100 cloud
 * endpoints (10 cases each, policies of 6 guarded rules: paths, an IP restriction, a login,
 * headers), run through `runCase` as `edgesync test` runs them: CPU of the first run (every
 * expression compiled) and the median of 5 more, budget 2 s. (2) The impact preview's share of
 * a 1,000-endpoint plan: the endpoints seeded on the local server (child process), 100 of them
 * (10%), then all of them, changed (the guard in front of /admin dropped), and `edgesync plan`
 * run whole, each time in a fresh process (the bundled plan child, ./plan-child.ts: start-up,
 * manifests loaded, account listed, plan made and rendered), with the preview and without it,
 * interleaved, 9 of each. Budget: the preview adds under 20% to the median CPU of the process
 * (every thread: the JIT compiling the preview's code and the collector count), in both cases;
 * each pair's share is printed (the spread), and the wall time of the pipeline. A plan runs once
 * a process: measured in one long-lived process, the preview's code would be compiled and its
 * per-expression facts known from the runs before, and it would look several times cheaper.
 * (3) The preview alone, in fresh processes (./preview-child.ts): its first run on 1,000
 * endpoints' policy pairs (every policy changed), the next 1,000 once its code is compiled, and
 * those again, warm: what the JIT's compiling costs. With `EDGESYNC_BENCH_BASELINE` (another
 * build's `bin/edgesync.js`), that build's preview too, the processes alternating.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApiClient } from '../src/api/client.js';
import { observe } from '../src/api/observe.js';
import { loadDesiredSet } from '../src/manifest/loader.js';
import { PolicyTestsSchema } from '../src/manifest/policy/tests.js';
import { buildPlan } from '../src/plan/plan.js';
import { runCase } from '../src/policy-eval/cases.js';
import { startServerChild } from './harness.js';
import { planChild, seed } from './plan.js';
import type { ChildResult } from './plan-child.js';
import { policy } from './policy-corpus.js';
import type { PreviewChildResult } from './preview-child.js';
import type { BenchSuite } from './run.js';

const run = promisify(execFile);

const CASES_BUDGET_MS = 2_000;
const PREVIEW_BUDGET = 0.2;
const RUNS = 5;
/** Plans with and without the preview, interleaved: a median of 9 and their spread. */
const PREVIEW_RUNS = 9;

function cases(i: number) {
  const u = (p: string) => `https://ep-${i}.example.com${p}`;
  return PolicyTestsSchema.parse([
    {
      name: 'admin outside',
      request: { url: u(`/admin${i}`), client_ip: '203.0.113.9' },
      expect: { status: 403 },
    },
    {
      name: 'admin inside',
      request: { url: u(`/admin${i}/x`), client_ip: `10.${i % 250}.1.2` },
      expect: { forward: 'https://admin.internal' },
    },
    { name: 'staff', request: { url: u('/staff') }, expect: { auth: 'google' } },
    {
      name: 'staff in',
      request: { url: u('/staff/x') },
      given: { identity: { email: 'a@x.com' } },
      expect: { forward: 'https://staff.internal' },
    },
    {
      name: 'ops',
      request: { url: u('/'), headers: { 'x-team': ['dev', `ops${i}`] } },
      expect: { forward: 'https://ops.internal' },
    },
    {
      name: 'not ops',
      request: { url: u('/'), headers: { 'x-team': 'dev' } },
      expect: { forward: 'https://app.internal' },
    },
    { name: 'old', request: { url: u(`/old${i}`) }, expect: { status: 410 } },
    {
      name: 'old-ish',
      request: { url: u(`/old${i}x`) },
      expect: { forward: 'https://app.internal' },
    },
    { name: 'app', request: { url: u('/a/b?c=d') }, expect: { forward: 'https://app.internal' } },
    {
      name: 'post',
      request: { method: 'POST', url: u('/api') },
      expect: { forward: 'https://app.internal' },
    },
  ]);
}

function cpuMs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / 1000;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] as number;

function runCases(): void {
  const endpoints = Array.from({ length: 100 }, (_, i) => ({
    url: `https://ep-${i}.example.com`,
    traffic_policy: policy(i, true),
    tests: cases(i),
  }));
  let failed = 0;
  const all = () => {
    failed = 0;
    for (const e of endpoints) for (const c of e.tests) if (!runCase(e, c).passed) failed += 1;
  };
  const cold = cpuMs(all);
  const warm = median(Array.from({ length: RUNS }, () => cpuMs(all)));
  if (failed > 0) throw new Error(`${failed} bench cases failed: the bench corpus is wrong`);
  process.stdout.write(
    `1,000 cases over 100 endpoints: ${cold.toFixed(0)} ms CPU (first run, expressions compiled), ${warm.toFixed(0)} ms (median of ${RUNS}); budget ${CASES_BUDGET_MS} ms: ${cold < CASES_BUDGET_MS ? 'OK' : 'OVER BUDGET'}\n`,
  );
}

const endpointYaml = (i: number, guarded: boolean) =>
  `kind: CloudEndpoint\nname: ep-${i}\nurl: https://ep-${i}.example.com\ntraffic_policy: ${JSON.stringify(policy(i, guarded))}\n`;

async function preview(): Promise<void> {
  const N = 1_000;
  const key = `esk_${randomBytes(16).toString('hex')}`;
  const server = await startServerChild({ apiKeys: [key] });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-policy-'));
  const client = createApiClient({ baseUrl: server.url, apiKey: key });
  const write = async (guarded: (i: number) => boolean) => {
    for (let i = 0; i < N; i++)
      await writeFile(path.join(dir, 'ep', `ep-${i}.yaml`), endpointYaml(i, guarded(i)));
  };
  try {
    await mkdir(path.join(dir, 'ep'), { recursive: true });
    await write(() => true);
    const { set } = await loadDesiredSet(dir);
    await seed(server.url, buildPlan(set, await observe(client), { policyPreview: false }), key);
    for (const [label, changed] of [
      ['10% of the policies changed', (i: number) => i % 10 === 0],
      ['every policy changed', () => true],
    ] as const) {
      await write((i) => !changed(i));
      const on: ChildResult[] = [];
      const off: ChildResult[] = [];
      for (let r = 0; r < PREVIEW_RUNS; r++) {
        // Which plan goes first alternates, run after run.
        for (const withPreview of r % 2 === 0 ? [false, true] : [true, false]) {
          const flags = withPreview ? [] : ['--no-policy-preview'];
          (withPreview ? on : off).push(await planChild(dir, server.url, key, flags));
        }
      }
      const cpuOn = median(on.map((x) => x.cpuMs));
      const cpuOff = median(off.map((x) => x.cpuMs));
      const wallOn = median(on.map((x) => x.ms));
      const wallOff = median(off.map((x) => x.ms));
      const share = cpuOn / cpuOff - 1;
      const pct = (x: number) => `${x < 0 ? '' : '+'}${(x * 100).toFixed(0)}%`;
      const pairs = on
        .map((x, r) => x.cpuMs / (off[r] as ChildResult).cpuMs - 1)
        .sort((a, b) => a - b)
        .map(pct)
        .join(', ');
      const changes = (on[0] as ChildResult).pendingChanges;
      process.stdout.write(
        `1,000-endpoint "edgesync plan", ${label} (${changes} endpoints to update, each previewed), fresh processes, medians of ${PREVIEW_RUNS}: CPU (every thread, start-up included) ${cpuOff.toFixed(0)} ms without the preview, ${cpuOn.toFixed(0)} ms with it: ${pct(share)}; budget +${PREVIEW_BUDGET * 100}%: ${share < PREVIEW_BUDGET ? 'OK' : 'OVER BUDGET'} (pair by pair ${pairs}); wall (load, list, plan, render) ${wallOff.toFixed(0)} / ${wallOn.toFixed(0)} ms: ${pct(wallOn / wallOff - 1)}\n`,
      );
    }
    await previewAlone();
  } finally {
    await client.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Fresh processes a build for the preview alone (./preview-child.ts), alternating builds. */
const ALONE_RUNS = 7;
const PREVIEW_CHILD = path.join(import.meta.dirname, 'preview-child.js');

/**
 * The preview alone, in fresh processes (./preview-child.ts): its first run on 1,000 endpoints
 * (every policy changed), the next 1,000 once its code is compiled, and those again, warm. With
 * `EDGESYNC_BENCH_BASELINE` (another build's `bin/edgesync.js`), that build's preview (its
 * `dist/src`) too, the processes alternating.
 */
async function previewAlone(): Promise<void> {
  const bin = process.env.EDGESYNC_BENCH_BASELINE;
  // Each build's label, and the child's argument naming its `dist/src` (none: this build's).
  const builds: [string, string[]][] = [['this build', []]];
  if (bin !== undefined)
    builds.unshift([
      'baseline',
      [path.resolve(path.dirname(path.resolve(bin)), '..', 'dist', 'src')],
    ]);
  const results = new Map(builds.map(([label]) => [label, [] as PreviewChildResult[]]));
  for (let r = 0; r < ALONE_RUNS; r++) {
    for (const [label, args] of r % 2 === 0 ? builds : [...builds].reverse()) {
      const { stdout } = await run(process.execPath, [PREVIEW_CHILD, ...args]);
      results.get(label)?.push(JSON.parse(stdout) as PreviewChildResult);
    }
  }
  for (const [label] of builds) {
    const own = results.get(label) as PreviewChildResult[];
    const who = builds.length > 1 ? ` (${label})` : '';
    const at = (k: keyof PreviewChildResult) => median(own.map((x) => x[k])).toFixed(0);
    process.stdout.write(
      `the preview alone, 1,000 endpoints, every policy changed${who}, medians of ${ALONE_RUNS} fresh processes: ${at('first')} ms CPU the first time (as in a plan), ${at('compiled')} ms for 1,000 more once its code is compiled, ${at('warm')} ms warm\n`,
    );
  }
}

export const suite: BenchSuite = {
  name: 'policy',
  description:
    'policy tests (1,000 cases, 100 endpoints) and the impact preview of a 1,000-endpoint plan',
  run: async () => {
    runCases();
    await preview();
  },
};
