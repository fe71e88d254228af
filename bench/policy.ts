/**
 * `npm run bench -- policy`: the policy evaluator's cost. (1) 1,000 policy tests over 100 cloud
 * endpoints (10 cases each, policies of 6 guarded rules: paths, an IP restriction, a login,
 * headers), run through `runCase` as `edgesync test` runs them: CPU of the first run (every
 * expression compiled) and the median of 5 more, budget 2 s. (2) The impact preview's share of
 * a 1,000-endpoint plan: the endpoints seeded on the local server (child process), 100 of them
 * (10%) then changed (the guard in front of /admin dropped), and the plan made in-process as
 * `edgesync plan` makes it (manifests loaded, account listed, `buildPlan`) with the preview and
 * without, interleaved, 7 of each: the median CPU of each and the share it adds, with each
 * pair's share (the spread). Budget: the preview adds under 20%, in the median and in every
 * pair, judged on both plans, 10% of the policies changed and every policy changed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createApiClient } from '../src/api/client.js';
import { observe } from '../src/api/observe.js';
import { loadDesiredSet } from '../src/manifest/loader.js';
import { PolicyTestsSchema } from '../src/manifest/policy/tests.js';
import { buildPlan } from '../src/plan/plan.js';
import { runCase } from '../src/policy-eval/cases.js';
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
  /** The plan, and the CPU of its last step alone (`buildPlan`, where the preview runs). */
  let built = 0;
  const plan = async (policyPreview: boolean) => {
    const { set } = await loadDesiredSet(dir);
    const live = await observe(client);
    let out: ReturnType<typeof buildPlan> | undefined;
    built = cpuMs(() => {
      out = buildPlan(set, live, { policyPreview });
    });
    return out as ReturnType<typeof buildPlan>;
  };
  try {
    await mkdir(path.join(dir, 'ep'), { recursive: true });
    await write(() => true);
    await seed(server.url, await plan(false), key);
    for (const [label, changed] of [
      ['10% of the policies changed', (i: number) => i % 10 === 0],
      ['every policy changed', () => true],
    ] as const) {
      await write((i) => !changed(i));
      const on: number[] = [];
      const off: number[] = [];
      const builtOn: number[] = [];
      const builtOff: number[] = [];
      let listed = 0;
      for (let r = 0; r < PREVIEW_RUNS; r++) {
        off.push(await cpuMsAsync(async () => void (await plan(false))));
        builtOff.push(built);
        on.push(
          await cpuMsAsync(async () => {
            listed = (await plan(true)).policy_impact?.length ?? 0;
          }),
        );
        builtOn.push(built);
      }
      // The same difference read on the planning step alone: the loading and listing around it
      // are the same work in both plans, and most of their spread.
      const own = (median(builtOn) - median(builtOff)) / median(off);
      const share = median(on) / median(off) - 1;
      const pct = (x: number) => `${x < 0 ? '' : '+'}${(x * 100).toFixed(0)}%`;
      const pairs = on.map((x, r) => x / (off[r] as number) - 1).sort((a, b) => a - b);
      const over = pairs.filter((x) => x >= PREVIEW_BUDGET).length;
      process.stdout.write(
        `1,000-endpoint plan, ${label}: ${median(off).toFixed(0)} ms CPU without the preview, ${median(on).toFixed(0)} ms with it (medians of ${PREVIEW_RUNS}, ${listed} endpoints previewed): ${pct(share)} (pair by pair ${pairs.map(pct).join(', ')}); budget +${PREVIEW_BUDGET * 100}% in the median and in every pair: ${share < PREVIEW_BUDGET && over === 0 ? 'OK' : `OVER BUDGET (${over} of ${PREVIEW_RUNS} pairs over)`}; the planning step alone ${median(builtOff).toFixed(0)} ms without, ${median(builtOn).toFixed(0)} ms with: the preview's own CPU ${pct(own)} of the plan\n`,
      );
    }
  } finally {
    await client.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
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
