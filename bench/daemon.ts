/**
 * Benchmark suite `daemon`: `edgesync run` as a child process against the
 * local server (`edgesync server`, another child process, in memory).
 *
 * (a) Save-to-write latency: with the default debounce (250 ms), the time from `writeFile` of a
 *     manifest to the server receiving the matching PATCH, measured by a recording proxy in this
 *     process (one clock). 10 TLS edges in 10 files; one file saved per round, 1 warm-up + 21
 *     measured rounds, each waiting for the cycle to settle. Target: median under 500 ms.
 * (b) Memory: the daemon holding 10,000 managed edges (5,000 TLS edges with all five modules,
 *     5,000 HTTPS edges with 3 routes and 10 modules each, the `plan` benchmark's shapes), first
 *     created by the daemon itself (its startup cycle, `--concurrency 16`), then 10 periodic
 *     resyncs (`--interval 1s`). The child's VmRSS is sampled every 50 ms from /proc; reported:
 *     the RSS after each resync, the maximum during the resyncs, VmHWM (peak, seeding included)
 *     and the growth from the first resync to the last. Target: under 300 MB, no growth.
 * (c) Save-to-write latency at 10,000 managed edges: the same corpus, seeded by a
 *     daemon without a limit, then one description edited per save (1 warm-up + 10 saves); then
 *     a daemon with the hosted budget (`--rate-limit 120/60s`) whose start-up cycle lists the
 *     account (101 calls of the window's 120), edited at once (1 warm-up + 5 saves: the 3 calls
 *     of each incremental cycle fit in the 19 slots left). Targets: median under 500 ms without
 *     a limit, under 2 s under the limit.
 * (d) CPU per edit at two sizes of the managed set, side by side with another build
 *     (`daemon-cpu.ts`).
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DAEMON_NODE_FLAGS } from '../src/daemon/memory.js';
import { generate } from './corpus.js';
import { cpuPerEdit } from './daemon-cpu.js';
import {
  type DaemonChild,
  lastCycleStart,
  type ServerChild,
  startDaemonChild,
  startRecordingProxy,
  startServerChild,
  waitFor,
} from './harness.js';
import type { BenchSuite } from './run.js';

const API_KEY = 'esk_benchdaemonBENCHdaemon01234567';

const LATENCY_ROUNDS = 21;
const LATENCY_TARGET_MS = 500;
/** Resyncs in the memory scenario; `EDGESYNC_BENCH_RESYNCS=30` shows where the plateau is. */
const RESYNCS = Number(process.env.EDGESYNC_BENCH_RESYNCS ?? 10);
const RSS_TARGET_MB = 300;

/** Extra Node flags for the daemon child, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const EXTRA_NODE_ARGS = (process.env.EDGESYNC_BENCH_DAEMON_NODE_ARGS ?? '')
  .split(' ')
  .filter(Boolean);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const startServer = (cwd: string) => startServerChild({ apiKeys: [API_KEY], cwd });

/** Memory runs per build (`EDGESYNC_BENCH_MEMORY_RUNS`): the budget holds for every run. */
const MEMORY_RUNS = Number(process.env.EDGESYNC_BENCH_MEMORY_RUNS ?? 1);

/**
 * `run` as the Docker image and npm start run it: with the daemon's Node flags
 * (src/daemon/memory.ts); `bin` is another build's `bin/edgesync.js` (`EDGESYNC_BENCH_BASELINE`).
 */
function startDaemon(
  dir: string,
  url: string,
  extra: readonly string[],
  cwd: string,
  bin?: string,
) {
  const nodeArgs = [...DAEMON_NODE_FLAGS, ...EXTRA_NODE_ARGS];
  return startDaemonChild({
    args: [dir, ...extra],
    cwd,
    ...(bin === undefined
      ? { nodeArgs }
      : { command: [process.execPath, ...nodeArgs, path.resolve(bin)] as const }),
    timeoutMs: 30_000,
    env: {
      EDGESYNC_LOG_LEVEL: 'warn',
      EDGESYNC_API_URL: url,
      EDGESYNC_API_KEY: API_KEY,
      EDGESYNC_RATE_LIMIT: 'none',
      EDGESYNC_OWNER: 'default',
    },
  });
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

// ---- (a) save -> write latency -----------------------------------------------------------------

const smallEdge = (n: number, description: string) => `kind: TLSEdge
name: svc-${n}
description: ${description}
hostports: [svc-${n}.example.com:443]
backend: { backend_id: bkdtg_svc${n} }
`;

async function latency(tmp: string): Promise<void> {
  const dir = path.join(tmp, 'latency');
  await mkdir(dir, { recursive: true });
  for (let n = 0; n < 10; n++) await writeFile(path.join(dir, `svc-${n}.yaml`), smallEdge(n, 'v0'));
  const server = await startServer(tmp);
  let daemon: DaemonChild | undefined;
  const proxy = await startRecordingProxy(server.url);
  try {
    // The default debounce: no --debounce.
    const d = await startDaemon(dir, proxy.url, ['--interval', '1h'], tmp);
    daemon = d;
    await waitFor(
      'the first cycle',
      async () => ((await d.status()).last_reconcile?.result === 'changed' ? true : undefined),
      30_000,
    );
    const samples: number[] = [];
    for (let round = 0; round <= LATENCY_ROUNDS; round++) {
      const n = round % 10;
      const savedAt = Date.now();
      await writeFile(path.join(dir, `svc-${n}.yaml`), smallEdge(n, `v${round + 1}`));
      const patch = await waitFor(
        'the PATCH',
        () => proxy.seen.find((r) => r.method === 'PATCH' && r.at >= savedAt),
        10_000,
      );
      await waitFor(
        'the cycle to settle',
        async () => {
          const s = await d.status();
          return lastCycleStart(s) >= savedAt - 1 && s.last_reconcile?.result === 'changed'
            ? true
            : undefined;
        },
        10_000,
      );
      if (round > 0) samples.push(patch.at - savedAt); // round 0 warms up
      await sleep(100);
    }
    const median = quantile(samples, 0.5);
    process.stdout.write(
      [
        `save -> PATCH at the server, default debounce 250 ms, ${samples.length} saves:`,
        `  median ${median} ms (target < ${LATENCY_TARGET_MS} ms) ${median < LATENCY_TARGET_MS ? 'OK' : 'OVER TARGET'}; p90 ${quantile(samples, 0.9)} ms; min ${Math.min(...samples)} ms; max ${Math.max(...samples)} ms`,
        '',
      ].join('\n'),
    );
  } finally {
    await daemon?.stop('SIGKILL');
    await server.stop('SIGKILL');
    await proxy.close();
  }
}

// ---- (b) memory with 10,000 managed edges ------------------------------------------------------

/** VmRSS and VmHWM of a process, MiB. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/**
 * The memory scenario `EDGESYNC_BENCH_MEMORY_RUNS` times, alternating with the build at
 * `EDGESYNC_BENCH_BASELINE` when given (the same hour and load for both; which goes first swaps
 * each run), each run on a fresh server; ends with each build's VmHWM per run.
 */
async function memory(tmp: string): Promise<void> {
  if (!Number.isSafeInteger(RESYNCS) || RESYNCS < 2) {
    throw new Error('EDGESYNC_BENCH_RESYNCS must be a whole number of at least 2');
  }
  if (!Number.isSafeInteger(MEMORY_RUNS) || MEMORY_RUNS < 1) {
    throw new Error('EDGESYNC_BENCH_MEMORY_RUNS must be a whole number of at least 1');
  }
  const dir = path.join(tmp, 'memory');
  await generate(dir);
  const baseline = process.env.EDGESYNC_BENCH_BASELINE;
  const builds = [
    { label: 'this build', bin: undefined },
    ...(baseline === undefined ? [] : [{ label: 'baseline', bin: baseline }]),
  ];
  const hwms = new Map<string, number[]>(builds.map((b) => [b.label, []]));
  for (let run = 1; run <= MEMORY_RUNS; run++) {
    // Each build goes first in every other run: the machine's speed drifts within a pair too.
    for (const build of run % 2 === 1 ? builds : [...builds].reverse()) {
      process.stdout.write(`-- memory, ${build.label}, run ${run} of ${MEMORY_RUNS}\n`);
      hwms.get(build.label)?.push(await memoryRun(tmp, dir, build.bin));
    }
  }
  for (const [label, values] of hwms) {
    process.stdout.write(
      `VmHWM per run, ${label}: ${values.map((v) => v.toFixed(0)).join(', ')} MiB; highest ${Math.max(...values).toFixed(0)} MiB ${Math.max(...values) * 1.048576 < RSS_TARGET_MB ? 'OK' : 'OVER BUDGET'}\n`,
    );
  }
}

/** One memory run: seeds `dir`'s corpus into a fresh server, resyncs; returns VmHWM, MiB. */
async function memoryRun(tmp: string, dir: string, bin: string | undefined): Promise<number> {
  let server: ServerChild | undefined;
  let daemon: DaemonChild | undefined;
  try {
    server = await startServer(tmp);
    const started = performance.now();
    daemon = await startDaemon(
      dir,
      server.url,
      ['--interval', '1s', '--concurrency', '16'],
      tmp,
      bin,
    );
    const running = daemon;
    const { pid } = daemon;
    let sampling = true;
    let phaseMax = 0;
    const sampler = (async () => {
      while (sampling) {
        try {
          const { rss } = memoryOf(pid);
          phaseMax = Math.max(phaseMax, rss);
        } catch {
          return;
        }
        await sleep(50);
      }
    })();

    const first = await waitFor(
      'the seeding cycle',
      async () => {
        const s = await running.status();
        return s.last_reconcile !== null ? s : undefined;
      },
      300_000,
    );
    if (first.last_reconcile?.result !== 'changed') {
      throw new Error(
        `seeding cycle: ${JSON.stringify(first.last_reconcile)} ${first.last_error?.message}`,
      );
    }
    const seedMs = performance.now() - started;
    const seedPeak = phaseMax;
    process.stdout.write(
      `seeding by the daemon's startup cycle: ${first.last_reconcile.writes} writes, ${(seedMs / 1000).toFixed(1)} s (process start to converged), peak RSS ${seedPeak.toFixed(0)} MiB\n`,
    );

    phaseMax = 0;
    // `max` is the highest RSS sampled since the previous resync ended: this resync's peak.
    const perCycle: { rss: number; max: number; ms: number; result: string }[] = [];
    let lastAt = first.last_reconcile.at;
    while (perCycle.length < RESYNCS) {
      const s = await waitFor(
        'the next resync',
        async () => {
          const x = await running.status();
          return x.last_reconcile !== null && x.last_reconcile.at !== lastAt ? x : undefined;
        },
        60_000,
      );
      const last = s.last_reconcile;
      if (last === null) continue;
      lastAt = last.at;
      const rss = memoryOf(pid).rss;
      perCycle.push({
        rss,
        max: Math.max(phaseMax, rss),
        ms: last.duration_ms,
        result: last.result,
      });
      phaseMax = 0;
    }
    sampling = false;
    await sampler;
    const { hwm } = memoryOf(pid);
    const rows = perCycle.map(
      (c, i) => `| ${i + 1} | ${c.result} | ${c.ms} | ${c.max.toFixed(0)} | ${c.rss.toFixed(0)} |`,
    );
    const growth = (perCycle.at(-1)?.rss ?? 0) - (perCycle[0]?.rss ?? 0);
    const resyncMax = Math.max(...perCycle.map((c) => c.max));
    // The first resync follows the seeding cycle (25,000 writes), whose heap V8 has not given back.
    const laterMax = Math.max(...perCycle.slice(1).map((c) => c.max));
    process.stdout.write(
      [
        `| resync | result | duration ms | max RSS during, MiB | RSS after, MiB |`,
        '|---|---|---|---|---|',
        ...rows,
        '',
        `max RSS during the ${RESYNCS} resyncs: ${resyncMax.toFixed(0)} MiB (target < ${RSS_TARGET_MB} MB) ${resyncMax * 1.048576 < RSS_TARGET_MB ? 'OK' : 'OVER TARGET'}`,
        `  of which resyncs 2-${RESYNCS} (after the one following the seeding cycle): ${laterMax.toFixed(0)} MiB ${laterMax * 1.048576 < RSS_TARGET_MB ? 'OK' : 'OVER TARGET'}`,
        `VmHWM (peak over the whole life, seeding included): ${hwm.toFixed(0)} MiB (budget < ${RSS_TARGET_MB} MB) ${hwm * 1.048576 < RSS_TARGET_MB ? 'OK' : 'OVER BUDGET'}`,
        `RSS growth, first resync to last: ${growth >= 0 ? '+' : ''}${growth.toFixed(0)} MiB; median resync ${quantile(
          perCycle.map((c) => c.ms),
          0.5,
        )} ms`,
        `every resync converged with zero writes: ${perCycle.every((c) => c.result === 'converged')}`,
        '',
      ].join('\n'),
    );
    return hwm;
  } finally {
    await daemon?.stop('SIGKILL');
    await server?.stop('SIGKILL');
  }
}

// ---- (c) save -> write latency at 10,000 managed edges -------------------------------------------

async function latencyAtScale(tmp: string): Promise<void> {
  const dir = path.join(tmp, 'scale');
  await generate(dir);
  const server = await startServer(tmp);
  const proxy = await startRecordingProxy(server.url);
  let daemon: DaemonChild | undefined;
  // File f holds TLS edges 20f..20f+19 (see corpus.ts); each save edits the first one's description.
  const edit = async (round: number): Promise<number> => {
    const f = (round * 7) % 250;
    const file = path.join(dir, `team-${f % 10}`, `edges-${f}.yaml`);
    const text = readFileSync(file, 'utf8').replace(
      /^description: TCP service (\d+).*$/m,
      `description: TCP service $1 (save ${round})`,
    );
    const savedAt = Date.now();
    await writeFile(file, text);
    const patch = await waitFor(
      'the PATCH',
      () => proxy.seen.find((r) => r.method === 'PATCH' && r.at >= savedAt),
      120_000,
    );
    const running = daemon;
    if (running === undefined) throw new Error('no daemon running');
    await waitFor(
      'the cycle to settle',
      async () => {
        const st = await running.status();
        return lastCycleStart(st) >= savedAt - 1 && st.last_reconcile?.result === 'changed'
          ? true
          : undefined;
      },
      120_000,
    );
    return patch.at - savedAt;
  };
  const measure = async (label: string, args: readonly string[], saves: number, from: number) => {
    const d = await startDaemon(dir, proxy.url, ['--interval', '1h', ...args], tmp);
    daemon = d;
    const first = await waitFor(
      'the first cycle',
      async () => {
        const st = await d.status();
        return st.last_reconcile !== null ? st : undefined;
      },
      300_000,
    );
    const calls = proxy.seen.length;
    const samples: number[] = [];
    /** API calls of each save's cycle: 3 (GET, PATCH, GET) incremental, about 104 full. */
    const perSave: number[] = [];
    for (let round = 0; round <= saves; round++) {
      const before = proxy.seen.length;
      const ms = await edit(from + round);
      perSave.push(proxy.seen.length - before);
      if (round > 0) samples.push(ms); // round 0 warms up
    }
    const perEdit = (proxy.seen.length - calls) / (saves + 1);
    // A cycle that had a create with an unknown outcome (a timeout, a reset connection) keeps
    // no snapshot (its lost attempt may land late), so the next save's cycle lists everything.
    const unknown = d
      .logLines()
      .filter((l) => l.msg === 'create outcome unknown; looked it up').length;
    process.stdout.write(
      `${label} (first cycle ${first.last_reconcile?.result}, ${first.last_reconcile?.writes} writes, ${unknown} creates with an unknown outcome): save -> PATCH median ${quantile(samples, 0.5)} ms, max ${Math.max(...samples)} ms over ${samples.length} saves; ${perEdit.toFixed(1)} API calls per save (each save, warm-up first: ${perSave.join(' ')})\n`,
    );
    // A profiling child (EDGESYNC_BENCH_DAEMON_NODE_ARGS) writes its profile on a clean exit.
    await d.stop(EXTRA_NODE_ARGS.length > 0 ? 'SIGTERM' : 'SIGKILL');
  };
  try {
    await measure('10,000 edges, no limit', ['--concurrency', '16'], 10, 0);
    await measure(
      '10,000 edges, --rate-limit 120/60s, right after its start-up listing',
      ['--rate-limit', '120/60s'],
      5,
      100,
    );
  } finally {
    await daemon?.stop('SIGKILL');
    await server.stop('SIGKILL');
    await proxy.close();
  }
}

export const suite: BenchSuite = {
  name: 'daemon',
  description:
    'edgesync run: file save to API write latency; RSS holding 10,000 edges through resyncs',
  async run() {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-daemon-'));
    try {
      const only = process.env.EDGESYNC_BENCH_DAEMON;
      if (only === undefined || only === 'latency') await latency(tmp);
      if (only === undefined || only === 'memory') await memory(tmp);
      if (only === undefined || only === 'scale') await latencyAtScale(tmp);
      if (only === undefined || only === 'cpu') await cpuPerEdit(tmp);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  },
};
