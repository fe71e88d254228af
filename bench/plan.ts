/**
 * Benchmark suite `plan`: 1,000 and then 10,000 edges already converged on the local server
 * (half TLS edges with all five modules, half HTTPS edges with 3 routes each), then `plan`.
 * Reports the API calls it made (at 10,000 edges: exactly 100 edge list calls plus 1 bot user
 * list call), the CPU time, wall time and peak memory of the whole command, and `validate`'s.
 *
 * The server runs in a child process (`edgesync server`), seeded over HTTP by executing the
 * plan of the empty account; each measured plan runs in a fresh child process
 * (`./plan-child.ts`), so its time and peak RSS are the plan's alone.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createApiClient } from '../src/api/client.js';
import { observe } from '../src/api/observe.js';
import { loadDesiredSet } from '../src/manifest/loader.js';
import type { Plan } from '../src/plan/model.js';
import { buildPlan } from '../src/plan/plan.js';
import { generate, HTTPS_EDGES, TLS_EDGES } from './corpus.js';
import { startServerChild } from './harness.js';
import type { ChildResult } from './plan-child.js';
import type { BenchSuite } from './run.js';
import type { Rusage } from './rusage.js';

const RUNS = 5;
const SEED_CONCURRENCY = 32;
/** The pipeline's wall-time target: for the 10,000-edge corpus only (not printed at other sizes). */
const TARGET_MS = 3_000;
const API_KEY = 'esk_benchplanBENCHplan0123456789abcd';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, '../../bin/edgesync.js');
// Bundled like the CLI (scripts/bundle.mjs): the plan measured is the code `edgesync plan` runs.
const CHILD = path.resolve(here, '../bench-bundle/plan-child.js');
/** Reports the CPU time and peak RSS of the real command at its exit (`node --import`). */
const RUSAGE = pathToFileURL(path.join(here, 'rusage.js')).href;
/**
 * Budgets of a whole no-op `edgesync plan` (CPU, peak RSS) and `edgesync validate` (wall) by
 * corpus size, with the one YAML parser and zod.
 */
const TARGETS: Readonly<
  Record<number, { readonly cpuMs: number; readonly rssMb?: number; readonly validateMs?: number }>
> = {
  1000: { cpuMs: 2_000 },
  10000: { cpuMs: 8_000, rssMb: 250, validateMs: 6_000 },
};

/** Executes a plan's operations: roots in parallel (bounded), each root's operations in order. */
export async function seed(url: string, plan: Plan, apiKey = API_KEY): Promise<number> {
  const roots = new Map<string, Plan['changes'][number]['operations']>();
  for (const c of plan.changes) {
    const list = roots.get(c.root) ?? [];
    list.push(...c.operations);
    roots.set(c.root, list);
  }
  const queue = [...roots.values()];
  let requests = 0;
  const worker = async () => {
    const ids = new Map<string, string>();
    for (let ops = queue.pop(); ops !== undefined; ops = queue.pop()) {
      for (const op of ops) {
        const target = op.path.replace(/\{([^}]+)\}/g, (_m, a: string) => ids.get(a) ?? '');
        const res = await fetch(`${url}${target}`, {
          method: op.method,
          headers: {
            authorization: `Bearer ${apiKey}`,
            'svc-version': '2',
            'content-type': 'application/json',
          },
          body: JSON.stringify(op.body),
        });
        const body = (await res.json()) as { id?: string };
        if (!res.ok)
          throw new Error(`${op.method} ${target}: ${res.status} ${JSON.stringify(body)}`);
        if (op.binds !== undefined && body.id !== undefined) ids.set(op.binds, body.id);
        requests += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  return requests;
}

/** RSS is read in MiB (2^20 bytes); the target is in MB (10^6 bytes). */
const MIB_PER_MB = 2 ** 20 / 1e6;

function verdict(what: string, value: number, unit: string, target: number | undefined): string {
  const shown = `${what} ${value.toFixed(0)} ${unit}`;
  if (target === undefined) return shown;
  return `${shown} (target < ${target} ${unit}) ${value < target ? 'OK' : 'OVER TARGET'}`;
}

/** Medians of the main thread's CPU and of the rest (V8's compiler and collector, libuv). */
function threads(usage: readonly Rusage[]): string {
  const main = usage.map((u) => u.mainThreadCpuMs);
  if (main.some((m) => m === undefined)) return 'per thread not available (no /proc)';
  return `main thread ${median(main as number[]).toFixed(0)} ms, helper threads ${median(usage.map((u) => u.cpuMs - (u.mainThreadCpuMs as number))).toFixed(0)} ms`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const run = promisify(execFile);

/**
 * One plan in a fresh process (./plan-child.ts, bundled as the CLI is): its result line.
 * `--no-policy-preview` in `flags` makes the plan without the policy impact preview.
 */
export async function planChild(
  dir: string,
  url: string,
  apiKey: string,
  flags: readonly string[] = [],
): Promise<ChildResult> {
  const { stdout } = await run(process.execPath, [CHILD, dir, url, apiKey, ...flags], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as ChildResult;
}

/**
 * The corpus sizes planned, in turn (half TLS edges, half HTTPS edges with 3 routes each): 1,000
 * and 10,000 edges, the two budgets. `EDGESYNC_BENCH_PLAN_EDGES=50000` (or a comma-separated
 * list) plans other sizes instead.
 */
const SIZES = (process.env.EDGESYNC_BENCH_PLAN_EDGES ?? `1000,${TLS_EDGES + HTTPS_EDGES}`)
  .split(',')
  .map((n) => Number(n.trim()));

export const suite: BenchSuite = {
  name: 'plan',
  description: `plan with ${SIZES.join(' and ')} converged edges (half of them HTTPS with 3 routes each)`,
  async run() {
    if (SIZES.some((n) => !Number.isSafeInteger(n) || n <= 0)) {
      throw new Error('EDGESYNC_BENCH_PLAN_EDGES must be positive whole numbers');
    }
    for (const edges of SIZES) await planSize(edges);
  },
};

/** The benchmark at one corpus size: seed a fresh server, then time the plans. */
async function planSize(edges: number): Promise<void> {
  const size = { tls: Math.floor(edges / 2), https: edges - Math.floor(edges / 2) };
  process.stdout.write(`\n### ${edges} edges (${size.https} HTTPS with 3 routes each)\n`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-plan-'));
  const server = await startServerChild({ apiKeys: [API_KEY] });
  const { url } = server;
  try {
    await generate(dir, size);
    const t0 = performance.now();
    const { set } = await loadDesiredSet(dir, { env: {} });
    const client = createApiClient({ baseUrl: url, apiKey: API_KEY });
    const initial = buildPlan(set, await observe(client));
    await client.close();
    const requests = await seed(url, initial);
    process.stdout.write(
      `seeded ${requests} resources over HTTP in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );

    const results: ChildResult[] = [];
    const cliMs: number[] = [];
    const cliUsage: Rusage[] = [];
    const validateUsage: Rusage[] = [];
    const validateMs: number[] = [];
    const usageFile = path.join(dir, '..', `${path.basename(dir)}.rusage.json`);
    /** The real command as a user runs it, process start to exit: its wall time and usage. */
    const command = async (args: readonly string[]): Promise<{ ms: number; usage: Rusage }> => {
      const start = performance.now();
      await run(process.execPath, ['--import', RUSAGE, BIN, ...args], {
        env: {
          ...process.env,
          EDGESYNC_API_URL: url,
          EDGESYNC_API_KEY: API_KEY,
          EDGESYNC_RATE_LIMIT: 'none',
          EDGESYNC_BENCH_RUSAGE: usageFile,
        },
        maxBuffer: 64 << 20,
      });
      const ms = performance.now() - start;
      return { ms, usage: JSON.parse(await readFile(usageFile, 'utf8')) as Rusage };
    };
    for (let i = 0; i < RUNS; i++) {
      results.push(await planChild(dir, url, API_KEY));
      const plan = await command(['plan', dir, '--detailed-exitcode']);
      cliMs.push(plan.ms);
      cliUsage.push(plan.usage);
      // The manifests alone (no listing, no plan): the floor under the plan's CPU.
      const validated = await command(['validate', dir]);
      validateUsage.push(validated.usage);
      validateMs.push(validated.ms);
    }
    await rm(usageFile, { force: true });
    const last = results[results.length - 1] as ChildResult;
    if (results.some((r) => r.pendingChanges !== 0))
      throw new Error('the account is not converged: plan shows changes');
    const wall = median(results.map((r) => r.ms));
    process.stdout.write(
      [
        `API calls: ${last.calls.tlsList} TLS edge list + ${last.calls.httpsList} HTTPS edge list + ${last.calls.botList} bot user list (${last.calls.other} other)`,
        `plan (load + observe + plan + render), median of ${RUNS}: ${verdict('', wall, 'ms', edges === TLS_EDGES + HTTPS_EDGES ? TARGET_MS : undefined).trim()}`,
        `  phases (last run): manifests+observe ${last.phases.prepare.toFixed(0)} ms, of which plan ${last.phases.plan.toFixed(0)} ms; render ${last.phases.render.toFixed(0)} ms`,
        `pipeline alone (load + observe + plan + render, in a fresh process), median of ${RUNS}: CPU ${median(results.map((r) => r.cpuMs)).toFixed(0)} ms, peak RSS ${median(results.map((r) => r.maxRssMb)).toFixed(0)} MiB; resources: ${last.resources}`,
        `whole "edgesync plan" process (start to exit), median of ${RUNS}: wall ${median(cliMs).toFixed(0)} ms, ${verdict('CPU (user + system)', median(cliUsage.map((u) => u.cpuMs)), 'ms', TARGETS[edges]?.cpuMs)}, ${verdict('peak RSS', median(cliUsage.map((u) => u.maxRssMb)) * MIB_PER_MB, 'MB', TARGETS[edges]?.rssMb)}`,
        `  CPU by thread: ${threads(cliUsage)}`,
        `whole "edgesync validate" process (the manifests alone: no listing, no plan), median of ${RUNS}: ${verdict('wall', median(validateMs), 'ms', TARGETS[edges]?.validateMs)}, CPU ${median(validateUsage.map((u) => u.cpuMs)).toFixed(0)} ms; ${threads(validateUsage)}`,
        '',
      ].join('\n'),
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
