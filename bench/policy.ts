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
 * per-expression facts known from the runs before, and it would look about half as dear.
 * (3) The preview alone (`policyImpact` on the 1,000 endpoints' policy pairs, every policy
 * changed, freshly parsed each run, in this process): the median CPU of 21 runs, for comparing
 * builds: with `EDGESYNC_BENCH_BASELINE` (another build's `bin/edgesync.js`; its `dist/` beside
 * it is loaded in this process) that build's preview runs too, interleaved with this one's.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createApiClient } from '../src/api/client.js';
import { observe } from '../src/api/observe.js';
import { loadDesiredSet } from '../src/manifest/loader.js';
import { PolicyTestsSchema } from '../src/manifest/policy/tests.js';
import { buildPlan } from '../src/plan/plan.js';
import { runCase } from '../src/policy-eval/cases.js';
import { policyImpact } from '../src/policy-eval/impact.js';
import { startServerChild } from './harness.js';
import { seed } from './plan.js';
import type { ChildResult } from './plan-child.js';
import type { BenchSuite } from './run.js';

const run = promisify(execFile);
// Bundled like the CLI (scripts/bundle.mjs): the plan measured is the code `edgesync plan` runs.
const PLAN_CHILD = path.resolve(import.meta.dirname, '../bench-bundle/plan-child.js');

const CASES_BUDGET_MS = 2_000;
const PREVIEW_BUDGET = 0.2;
const RUNS = 5;
/** Plans with and without the preview, interleaved: a median of 9 and their spread. */
const PREVIEW_RUNS = 9;

function policy(i: number, guarded: boolean): Record<string, unknown> {
  const forward = (url: string) => ({ type: 'forward-internal', config: { url } });
  return {
    on_http_request: [
      ...(guarded
        ? [
            {
              name: 'office',
              expressions: [`req.url.path.startsWith('/admin${i}')`],
              actions: [{ type: 'restrict-ips', config: { allow: [`10.${i % 250}.0.0/16`] } }],
            },
          ]
        : []),
      {
        name: 'admin',
        expressions: [`req.url.path.startsWith('/admin${i}')`],
        actions: [forward('https://admin.internal')],
      },
      {
        name: 'staff',
        expressions: [`req.url.path.startsWith('/staff') && req.method != 'OPTIONS'`],
        actions: [
          { type: 'oauth', config: { provider: 'google' } },
          forward('https://staff.internal'),
        ],
      },
      {
        name: 'ops',
        expressions: [`getReqHeader('x-team').exists(t, t == 'ops${i}')`],
        actions: [
          { type: 'add-headers', config: { headers: { 'x-ops': 'yes' } } },
          forward('https://ops.internal'),
        ],
      },
      {
        name: 'old',
        expressions: [`req.url.path == '/old${i}'`],
        actions: [{ type: 'custom-response', config: { status_code: 410 } }],
      },
      { name: 'app', actions: [forward('https://app.internal')] },
    ],
  };
}

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

/** A build whose preview is timed alone: this one's, or another build's `dist/`. */
interface Build {
  readonly label: string;
  readonly policyImpact: typeof policyImpact;
}

/**
 * This build, and the build at `EDGESYNC_BENCH_BASELINE` (its `bin/edgesync.js`; its `dist/`
 * beside it is loaded in this process) when given, first.
 */
async function builds(): Promise<Build[]> {
  const own: Build = { label: 'this build', policyImpact };
  const bin = process.env.EDGESYNC_BENCH_BASELINE;
  if (bin === undefined) return [own];
  const module = path.resolve(
    path.dirname(path.resolve(bin)),
    '..',
    'dist',
    'src',
    'policy-eval',
    'impact.js',
  );
  const loaded = (await import(pathToFileURL(module).href)) as {
    policyImpact: typeof policyImpact;
  };
  return [{ label: 'baseline', policyImpact: loaded.policyImpact }, own];
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

/**
 * Runs the plan child (bench/plan-child.ts, bundled as the CLI is) once: a whole `edgesync plan`
 * in a fresh process, with the preview or without it.
 */
async function planProcess(
  dir: string,
  url: string,
  key: string,
  policyPreview: boolean,
): Promise<ChildResult> {
  const { stdout } = await run(
    process.execPath,
    [PLAN_CHILD, dir, url, key, ...(policyPreview ? [] : ['--no-policy-preview'])],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as ChildResult;
}

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
          const result = await planProcess(dir, server.url, key, withPreview);
          (withPreview ? on : off).push(result);
        }
      }
      const cpuOn = median(on.map((x) => x.cpuMs));
      const cpuOff = median(off.map((x) => x.cpuMs));
      const share = cpuOn / cpuOff - 1;
      const wall = median(on.map((x) => x.ms)) / median(off.map((x) => x.ms)) - 1;
      const pct = (x: number) => `${x < 0 ? '' : '+'}${(x * 100).toFixed(0)}%`;
      const pairs = on.map((x, r) => x.cpuMs / (off[r] as ChildResult).cpuMs - 1);
      const changes = (on[0] as ChildResult).pendingChanges;
      process.stdout.write(
        `1,000-endpoint "edgesync plan", ${label} (${changes} endpoints to update, each previewed), fresh processes, medians of ${PREVIEW_RUNS}: CPU (every thread, start-up included) ${cpuOff.toFixed(0)} ms without the preview, ${cpuOn.toFixed(0)} ms with it: ${pct(share)}; budget +${PREVIEW_BUDGET * 100}%: ${share < PREVIEW_BUDGET ? 'OK' : 'OVER BUDGET'} (pair by pair ${[
          ...pairs,
        ]
          .sort((a, b) => a - b)
          .map(pct)
          .join(
            ', ',
          )}); wall (load, list, plan, render) ${median(off.map((x) => x.ms)).toFixed(0)} / ${median(on.map((x) => x.ms)).toFixed(0)} ms: ${pct(wall)}\n`,
      );
    }
    previewAlone(await builds());
  } finally {
    await client.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs of the preview alone a build, alternating builds. */
const ALONE_RUNS = 21;

/**
 * The preview alone on the 1,000 endpoints' policy pairs, every policy changed, each run on
 * policies freshly parsed (as a plan reads them): the median CPU of `ALONE_RUNS` a build.
 */
function previewAlone(builds: readonly Build[]): void {
  const texts = Array.from({ length: 1_000 }, (_, i) => [
    JSON.stringify(policy(i, true)),
    JSON.stringify(policy(i, false)),
    `https://ep-${i}.example.com`,
  ]);
  const times = new Map(builds.map((b) => [b, [] as number[]]));
  for (let r = 0; r < ALONE_RUNS; r++) {
    for (const build of r % 2 === 0 ? builds : [...builds].reverse()) {
      const pairs = texts.map(([a, b, url]) => [
        JSON.parse(a as string),
        JSON.parse(b as string),
        url,
      ]);
      times.get(build)?.push(
        cpuMs(() => {
          for (const [a, b, url] of pairs) build.policyImpact(url as string, a, b);
        }),
      );
    }
  }
  for (const build of builds) {
    const who = builds.length > 1 ? ` (${build.label})` : '';
    const t = times.get(build) as number[];
    process.stdout.write(
      `the preview alone, 1,000 endpoints, every policy changed${who}: ${median(t).toFixed(0)} ms CPU (median of ${ALONE_RUNS}; fastest ${Math.min(...t).toFixed(0)} ms)\n`,
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
