/**
 * The daemon suite's `cpu` scenario: what one edit costs the daemon at two sizes of the managed
 * set, so that the cost of an edit can be compared with the size of the account.
 *
 * At each size (`EDGESYNC_BENCH_CPU_RESOURCES`, managed resources; default 1,000 and 50,000) the
 * plan corpus's shapes are written (half TLS edges, half HTTPS edges with 3 routes: 2.5 resources
 * an edge) and a local server (a child process, in memory) is seeded by a first daemon's start-up
 * cycle. Then each build in turn (this one, and the one at `EDGESYNC_BENCH_BASELINE`, a
 * `bin/edgesync.js` of another build, when given: side by side on the same server and files)
 * runs as `edgesync run` with the daemon's Node flags: its start-up cycle lists the converged
 * account (the calls it takes are printed: `ceil(n/100)` per kind), then 1 warm-up and
 * `EDGESYNC_BENCH_CPU_EDITS` (default 10) edits, each one edge's description in one file. For
 * each edit: the daemon's CPU (every thread's run time, from `/proc/PID/task/TID/schedstat`, in
 * nanoseconds: `/proc/PID/stat`'s user + system count 10 ms ticks, as coarse as an edit at
 * 1,000) from the save until the daemon is idle again after the edit's verifying GET, the time from the save to the
 * PATCH at the server (a recording proxy, one clock), and the API calls. Nothing reads the
 * daemon's `/status` inside the measured window. Also each daemon's peak RSS (VmHWM).
 * Targets: CPU per edit at the largest size within 2x of the smallest; save -> PATCH under
 * 500 ms at the largest.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DAEMON_NODE_FLAGS } from '../src/daemon/memory.js';
import { EDGES_PER_FILE, generate } from './corpus.js';
import {
  BIN,
  type DaemonChild,
  type RecordingProxy,
  startDaemonChild,
  startRecordingProxy,
  startServerChild,
  waitFor,
} from './harness.js';

const API_KEY = 'esk_benchdaemonBENCHdaemon01234567';
const SIZES = (process.env.EDGESYNC_BENCH_CPU_RESOURCES ?? '1000,50000')
  .split(',')
  .map((s) => Number(s.trim()));
const EDITS = Number(process.env.EDGESYNC_BENCH_CPU_EDITS ?? 10);
const BASELINE = process.env.EDGESYNC_BENCH_BASELINE;
const SAVE_TO_PATCH_TARGET_MS = 500;
/** Clock ticks a second of `/proc/PID/stat` (`getconf CLK_TCK`: 100 on Linux). */
const TICK_MS = 10;
/** The daemon is idle once its CPU has moved less than `IDLE_CPU_MS` for this long. */
const IDLE_MS = 600;
/**
 * CPU an idle daemon may spend in `IDLE_MS` above its own idle rate (measured once it has
 * started: timers, the collector's idle tasks; a build that sampled the event-loop lag every
 * 10 ms spent about 7 ms a second idle): an edit's trailing work counts, the background is
 * not waited out.
 */
const IDLE_CPU_MS = 2;
/** How long a started daemon's idle rate is measured. */
const IDLE_RATE_MS = 3_000;

/** Extra Node flags for the measured daemons (`EDGESYNC_BENCH_DAEMON_NODE_ARGS`, as in ./daemon.ts). */
const EXTRA_NODE_ARGS = (process.env.EDGESYNC_BENCH_DAEMON_NODE_ARGS ?? '')
  .split(' ')
  .filter(Boolean);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/**
 * A process's CPU in ms, every thread: the scheduler's run time of each of its threads
 * (`schedstat`'s first field, nanoseconds; Node's threads live as long as the process), or
 * user + system from `stat` in 10 ms ticks where the kernel keeps no schedstat.
 */
function cpuMsOf(pid: number): number {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8');
      ns += Number(text.split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5); the slice starts at field 3.
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  }
}

function peakRssMib(pid: number): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(text)?.[1]) / 1024;
}

/**
 * Waits until the process's CPU grows by less than `IDLE_CPU_MS` over its idle rate (`rate`, ms
 * of CPU a ms) for `IDLE_MS`; returns its CPU then.
 */
async function idleCpu(pid: number, rate: number): Promise<number> {
  let last = cpuMsOf(pid);
  let stillSince = Date.now();
  for (;;) {
    await sleep(100);
    const now = cpuMsOf(pid);
    if (now - last >= IDLE_CPU_MS + rate * (Date.now() - stillSince)) {
      last = now;
      stillSince = Date.now();
    } else if (Date.now() - stillSince >= IDLE_MS) {
      return now;
    }
  }
}

/** A started daemon's CPU at rest, in ms a ms: once it is quiet, over `IDLE_RATE_MS`. */
async function idleRate(pid: number): Promise<number> {
  // Quiet enough to measure: under 1.5% of a core for `IDLE_MS`.
  const from = await idleCpu(pid, 0.015);
  const at = Date.now();
  await sleep(IDLE_RATE_MS);
  return (cpuMsOf(pid) - from) / (Date.now() - at);
}

interface Build {
  readonly label: string;
  readonly bin: string;
}

/** A daemon of `build`; a measured one (not the seeder) takes the extra Node flags (a profiler). */
function startDaemon(
  build: Build,
  dir: string,
  url: string,
  cwd: string,
  measured = true,
): Promise<DaemonChild> {
  return startDaemonChild({
    args: [dir, '--interval', '1h', '--concurrency', '16'],
    cwd,
    command: [
      process.execPath,
      ...DAEMON_NODE_FLAGS,
      ...(measured ? EXTRA_NODE_ARGS : []),
      build.bin,
    ],
    timeoutMs: 60_000,
    env: {
      EDGESYNC_LOG_LEVEL: 'warn',
      EDGESYNC_API_URL: url,
      EDGESYNC_API_KEY: API_KEY,
      EDGESYNC_RATE_LIMIT: 'none',
      EDGESYNC_OWNER: 'default',
    },
  });
}

/** The first cycle's result, polling `/status` seldom (it is large at 50,000 in older builds). */
async function firstCycle(d: DaemonChild): Promise<string> {
  for (;;) {
    const s = await d.status().catch(() => undefined);
    const result = s?.last_reconcile?.result;
    if (result !== undefined) {
      if (result !== 'changed' && result !== 'converged') {
        throw new Error(`first cycle: ${result} ${s?.last_error?.message ?? ''}`);
      }
      return result;
    }
    await sleep(1_000);
  }
}

interface EditFigures {
  readonly cpuMs: number[];
  readonly toPatchMs: number[];
  readonly calls: number[];
}

/** One edit: a TLS edge's description in file `file`, measured as the header says. */
async function edit(
  d: DaemonChild,
  proxy: RecordingProxy,
  dir: string,
  file: number,
  label: string,
  rate: number,
): Promise<{ cpuMs: number; toPatchMs: number; calls: number }> {
  const name = path.join(dir, `team-${file % 10}`, `edges-${file}.yaml`);
  const text = (await readFile(name, 'utf8')).replace(
    /^description: TCP service (\d+).*$/m,
    `description: TCP service $1 (${label})`,
  );
  const before = proxy.seen.length;
  await idleCpu(d.pid, rate);
  const cpu0 = cpuMsOf(d.pid);
  const savedAt = Date.now();
  await writeFile(name, text);
  const patch = await waitFor(
    'the PATCH',
    () => proxy.seen.find((r) => r.method === 'PATCH' && r.at >= savedAt),
    120_000,
  );
  await waitFor(
    'the verifying GET',
    () => proxy.seen.find((r) => r.method === 'GET' && r.at >= patch.at && r.doneAt !== undefined),
    120_000,
  );
  const cpu1 = await idleCpu(d.pid, rate);
  const calls = proxy.seen.length - before;
  const s = await d.status();
  // A second event of the same save (a truncate, then the write) may queue a cycle that finds
  // it converged: the PATCH seen above is the edit's write.
  const result = s.last_reconcile?.result;
  if (result !== 'changed' && result !== 'converged') {
    throw new Error(`edit ${label}: ${s.last_reconcile?.result} ${s.last_error?.message ?? ''}`);
  }
  return { cpuMs: cpu1 - cpu0, toPatchMs: patch.at - savedAt, calls };
}

async function measureBuild(
  build: Build,
  size: number,
  dir: string,
  tmp: string,
  proxy: RecordingProxy,
  tlsFiles: number,
  round: number,
): Promise<{ figures: EditFigures; line: string }> {
  const before = proxy.seen.length;
  const d = await startDaemon(build, dir, proxy.url, tmp);
  try {
    const first = await firstCycle(d);
    const rate = await idleRate(d.pid);
    const startupCalls = proxy.seen.length - before;
    const figures: EditFigures = { cpuMs: [], toPatchMs: [], calls: [] };
    for (let i = 0; i <= EDITS; i++) {
      const f = (i * 7 + round) % tlsFiles;
      const one = await edit(d, proxy, dir, f, `${build.label} ${round}.${i}`, rate);
      if (i === 0) continue; // warm-up
      figures.cpuMs.push(one.cpuMs);
      figures.toPatchMs.push(one.toPatchMs);
      figures.calls.push(one.calls);
    }
    const hwm = peakRssMib(d.pid);
    const line = `| ${size.toLocaleString('en-US')} | ${build.label} | ${first}, ${startupCalls} calls | ${median(figures.cpuMs).toFixed(0)} (${Math.min(...figures.cpuMs).toFixed(0)}-${Math.max(...figures.cpuMs).toFixed(0)}) | ${median(figures.toPatchMs)} (max ${Math.max(...figures.toPatchMs)}) | ${median(figures.calls)} | ${hwm.toFixed(0)} | ${(rate * 1000).toFixed(1)} |`;
    process.stdout.write(`${line}\n`);
    return { figures, line };
  } finally {
    // A profiling daemon (`--cpu-prof`) writes its profile on a clean exit.
    await d.stop(EXTRA_NODE_ARGS.length > 0 ? 'SIGTERM' : 'SIGKILL');
  }
}

export async function cpuPerEdit(tmp: string): Promise<void> {
  if (!Number.isSafeInteger(EDITS) || EDITS < 1) {
    throw new Error('EDGESYNC_BENCH_CPU_EDITS must be a whole number of at least 1');
  }
  const builds: Build[] = [
    ...(BASELINE === undefined ? [] : [{ label: 'baseline', bin: path.resolve(BASELINE) }]),
    { label: 'this build', bin: BIN },
  ];
  process.stdout.write(
    `\nDaemon CPU per edit (${EDITS} edits after a warm-up, medians; CPU from /proc/PID/task/TID/schedstat, all threads):\n\n| managed resources | build | start-up cycle | CPU per edit, ms | save -> PATCH, ms | calls per edit | VmHWM, MiB | CPU at rest, ms/s |\n|---|---|---|---:|---:|---:|---:|---:|\n`,
  );
  const cpuBySize = new Map<string, Map<number, number>>();
  const patchBySize = new Map<string, Map<number, number>>();
  for (const size of SIZES) {
    const edges = Math.round(size / 2.5);
    const tls = Math.ceil(edges / 2);
    const https = edges - tls;
    const dir = path.join(tmp, `cpu-${size}`);
    await mkdir(dir, { recursive: true });
    await generate(dir, { tls, https });
    const server = await startServerChild({ apiKeys: [API_KEY], cwd: tmp });
    const proxy = await startRecordingProxy(server.url);
    try {
      // Seeding: a daemon of this build creates the account; the measured daemons find it converged.
      const seeder = await startDaemon({ label: 'seed', bin: BIN }, dir, proxy.url, tmp, false);
      const seeded = await firstCycle(seeder);
      await seeder.stop('SIGKILL');
      if (seeded !== 'changed') throw new Error(`seeding: ${seeded}`);
      const tlsFiles = Math.max(1, Math.floor(tls / EDGES_PER_FILE));
      for (const [i, build] of builds.entries()) {
        const { figures } = await measureBuild(build, size, dir, tmp, proxy, tlsFiles, i);
        const cpu = cpuBySize.get(build.label) ?? new Map<number, number>();
        cpu.set(size, median(figures.cpuMs));
        cpuBySize.set(build.label, cpu);
        const patch = patchBySize.get(build.label) ?? new Map<number, number>();
        patch.set(size, median(figures.toPatchMs));
        patchBySize.set(build.label, patch);
      }
    } finally {
      await proxy.close();
      await server.stop('SIGKILL');
    }
  }
  const smallest = Math.min(...SIZES);
  const largest = Math.max(...SIZES);
  for (const build of builds) {
    const cpu = cpuBySize.get(build.label);
    const small = cpu?.get(smallest) ?? Number.NaN;
    const large = cpu?.get(largest) ?? Number.NaN;
    const patch = patchBySize.get(build.label)?.get(largest) ?? Number.NaN;
    const ratio = large / small;
    process.stdout.write(
      `${build.label}: CPU per edit at ${largest.toLocaleString('en-US')} is ${ratio.toFixed(2)}x that at ${smallest.toLocaleString('en-US')} (target within 2x) ${ratio <= 2 ? 'OK' : 'OVER TARGET'}; save -> PATCH at ${largest.toLocaleString('en-US')} ${patch} ms (target < ${SAVE_TO_PATCH_TARGET_MS} ms) ${patch < SAVE_TO_PATCH_TARGET_MS ? 'OK' : 'OVER TARGET'}\n`,
    );
  }
}
