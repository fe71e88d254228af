/**
 * `npm run bench -- policy`: the policy evaluator's cost. (1) 1,000 policy tests over 100 cloud
 * endpoints (10 cases each, policies of 6 guarded rules: paths, an IP restriction, a login,
 * headers), run through `runCase` as `edgesync test` runs them: CPU of the first run (every
 * expression compiled) and the median of 5 more, budget 2 s. (2) The impact preview's share of
 * a 1,000-endpoint plan: the endpoints seeded on the local server (child process), 100 of them
 * (10%) then changed (the guard in front of /admin dropped), and the plan made in-process as
 * `edgesync plan` makes it (manifests loaded, account listed, `buildPlan`) with the preview and
 * without, interleaved, 7 of each: the median CPU of each and the share it adds, with each
 * pair's share (the spread). Budget: the preview adds under 20%, judged on both plans, 10% of
 * the policies changed and every policy changed, in the median of the whole plans and in the
 * planning step timed alone (the same share read with less noise). A pair is two plans in a
 * row, whose own spread is of the size of the budget: each pair's share is printed, not
 * judged. (3) The preview alone (`policyImpact` on the 1,000 endpoints' policy pairs, every policy changed,
 * freshly parsed each run): the median CPU of 21 runs. With `EDGESYNC_BENCH_BASELINE` (another
 * build's `bin/edgesync.js`; its `dist/` beside it is loaded in this process), (2) and (3) run
 * that build too, interleaved with this one, side by side in one run.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createApiClient } from '../src/api/client.js';
import { observe } from '../src/api/observe.js';
import { loadDesiredSet } from '../src/manifest/loader.js';
import { PolicyTestsSchema } from '../src/manifest/policy/tests.js';
import { buildPlan } from '../src/plan/plan.js';
import { runCase } from '../src/policy-eval/cases.js';
import { policyImpact } from '../src/policy-eval/impact.js';
import { startServerChild } from './harness.js';
import { seed } from './plan.js';
import type { BenchSuite } from './run.js';

const CASES_BUDGET_MS = 2_000;
const PREVIEW_BUDGET = 0.2;
const RUNS = 5;
/** Plans with and without the preview, interleaved: a median of 7 and their spread. */
const PREVIEW_RUNS = 7;

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

async function cpuMsAsync(fn: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / 1000;
}

/** What the preview's measures call of a build: this one's modules, or another build's `dist/`. */
interface Build {
  readonly label: string;
  readonly createApiClient: typeof createApiClient;
  readonly loadDesiredSet: typeof loadDesiredSet;
  readonly observe: typeof observe;
  readonly buildPlan: typeof buildPlan;
  readonly policyImpact: typeof policyImpact;
}

const THIS_BUILD: Build = {
  label: 'this build',
  createApiClient,
  loadDesiredSet,
  observe,
  buildPlan,
  policyImpact,
};

/** The build at `EDGESYNC_BENCH_BASELINE` (its `bin/edgesync.js`), loaded from its `dist/`. */
async function baselineBuild(): Promise<Build | undefined> {
  const bin = process.env.EDGESYNC_BENCH_BASELINE;
  if (bin === undefined) return undefined;
  const src = path.resolve(path.dirname(path.resolve(bin)), '..', 'dist', 'src');
  const load = async (module: string) =>
    (await import(pathToFileURL(path.join(src, module)).href)) as Record<string, unknown>;
  return {
    label: 'baseline',
    createApiClient: (await load('api/client.js')).createApiClient as typeof createApiClient,
    loadDesiredSet: (await load('manifest/loader.js')).loadDesiredSet as typeof loadDesiredSet,
    observe: (await load('api/observe.js')).observe as typeof observe,
    buildPlan: (await load('plan/plan.js')).buildPlan as typeof buildPlan,
    policyImpact: (await load('policy-eval/impact.js')).policyImpact as typeof policyImpact,
  };
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
  const baseline = await baselineBuild();
  const builds = [...(baseline === undefined ? [] : [baseline]), THIS_BUILD];
  const clients = new Map(
    builds.map((b) => [b, b.createApiClient({ baseUrl: server.url, apiKey: key })]),
  );
  const write = async (guarded: (i: number) => boolean) => {
    for (let i = 0; i < N; i++)
      await writeFile(path.join(dir, 'ep', `ep-${i}.yaml`), endpointYaml(i, guarded(i)));
  };
  /** The plan, and the CPU of its last step alone (`buildPlan`, where the preview runs). */
  let built = 0;
  const plan = async (build: Build, policyPreview: boolean) => {
    const { set } = await build.loadDesiredSet(dir);
    const live = await build.observe(clients.get(build) as ReturnType<typeof createApiClient>);
    let out: ReturnType<typeof buildPlan> | undefined;
    built = cpuMs(() => {
      out = build.buildPlan(set, live, { policyPreview });
    });
    return out as ReturnType<typeof buildPlan>;
  };
  try {
    await mkdir(path.join(dir, 'ep'), { recursive: true });
    await write(() => true);
    await seed(server.url, await plan(THIS_BUILD, false), key);
    for (const [label, changed] of [
      ['10% of the policies changed', (i: number) => i % 10 === 0],
      ['every policy changed', () => true],
    ] as const) {
      await write((i) => !changed(i));
      const on = new Map(builds.map((b) => [b, [] as number[]]));
      const off = new Map(builds.map((b) => [b, [] as number[]]));
      const builtOn = new Map(builds.map((b) => [b, [] as number[]]));
      const builtOff = new Map(builds.map((b) => [b, [] as number[]]));
      let listed = 0;
      for (let r = 0; r < PREVIEW_RUNS; r++) {
        // Builds alternate which goes first, run after run.
        for (const build of r % 2 === 0 ? builds : [...builds].reverse()) {
          off.get(build)?.push(await cpuMsAsync(async () => void (await plan(build, false))));
          builtOff.get(build)?.push(built);
          on.get(build)?.push(
            await cpuMsAsync(async () => {
              listed = (await plan(build, true)).policy_impact?.length ?? 0;
            }),
          );
          builtOn.get(build)?.push(built);
        }
      }
      for (const build of builds) {
        const o = on.get(build) as number[];
        const f = off.get(build) as number[];
        // The same difference read on the planning step alone: the loading and listing around it
        // are the same work in both plans, and most of their spread.
        const own =
          (median(builtOn.get(build) as number[]) - median(builtOff.get(build) as number[])) /
          median(f);
        const share = median(o) / median(f) - 1;
        const pct = (x: number) => `${x < 0 ? '' : '+'}${(x * 100).toFixed(0)}%`;
        const pairs = o.map((x, r) => x / (f[r] as number) - 1).sort((a, b) => a - b);
        const over = pairs.filter((x) => x >= PREVIEW_BUDGET).length;
        const who = builds.length > 1 ? ` (${build.label})` : '';
        const met = share < PREVIEW_BUDGET && own < PREVIEW_BUDGET;
        process.stdout.write(
          `1,000-endpoint plan, ${label}${who}: ${median(f).toFixed(0)} ms CPU without the preview, ${median(o).toFixed(0)} ms with it (medians of ${PREVIEW_RUNS}, ${listed} endpoints previewed): ${pct(share)}; the planning step alone ${median(builtOff.get(build) as number[]).toFixed(0)} ms without, ${median(builtOn.get(build) as number[]).toFixed(0)} ms with: the preview's own CPU ${pct(own)} of the plan; budget +${PREVIEW_BUDGET * 100}% in both: ${met ? 'OK' : 'OVER BUDGET'} (pair by pair ${pairs.map(pct).join(', ')}: ${over} of ${PREVIEW_RUNS} over, the spread of the plan without the preview)\n`,
        );
      }
    }
    previewAlone(builds);
  } finally {
    for (const client of clients.values()) await client.close();
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
