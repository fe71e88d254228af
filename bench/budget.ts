/**
 * Benchmark suite `budget` (issue #12 item 7): edgesync against the local server's rolling-window
 * rate limit, time-scaled 30x (120 requests per rolling 2 s instead of 60 s), so it runs in a few
 * minutes:
 * - a cold apply of 1,000 HTTPS edges with 3 routes, 4 workers: wall time against the physical
 *   minimum (requests / rate), and the share of requests answered 429;
 * - two `edgesync apply` processes sharing one account's budget (two owners, 250 edges x 3
 *   routes each), each with its own client-side budget of the full 120/2s: both finish, and the
 *   share of requests wasted on 429s;
 * - the API calls one changed module costs with 10,000 managed edges (no limit: a count);
 * - the daemon's side of an edit at 10,000 managed TLS edges (100 files of 100): a file event
 *   after a converged cycle through the reconcile step in-process (`createReconciler`, the
 *   incremental path): API calls per edit and the step's latency (the daemon adds its 250 ms
 *   debounce and the watcher), without a limit and under the client's limit right after a full
 *   resync (which leaves 19 of the window's 120 slots). 11 edits, each then undone;
 * - a process started on a spent budget, in real time: two `edgesync plan` processes of the
 *   10,000-edge corpus back to back under the server's `--rate-limit 120/60s` (the hosted
 *   service's), the second starting where the first left the window: the pair's wall time
 *   against the minimum the window allows, and the 429s each process met.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { type ApiClient, createApiClient, observe } from '../src/api/index.js';
import { applyAndVerify } from '../src/apply/cycle.js';
import { observeAfterApply } from '../src/apply/verify.js';
import { createReconciler, type ReconcileInput } from '../src/engine/index.js';
import { silentLogger } from '../src/log.js';
import { loadDesiredSet } from '../src/manifest/loader.js';
import type { DesiredSet, HttpsEdgeManifest } from '../src/manifest/schema.js';
import { buildPlan } from '../src/plan/index.js';
import { parseRateLimit } from '../src/rate-limit-notation.js';
import { type RunningServer, startServer } from '../src/server/index.js';
import { desired } from './apply.js';
import { generate } from './corpus.js';
import { seed } from './plan.js';
import type { BenchSuite } from './run.js';

const LIMIT = { limit: 120, windowMs: 2_000 };
const RATE_PER_S = LIMIT.limit / (LIMIT.windowMs / 1000);
const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, '../../bin/edgesync.js');
const run = promisify(execFile);

const key = () => `esk_${randomBytes(16).toString('hex')}`;

interface Counted {
  requests: number;
  throttled: number;
}

function countingClient(url: string, apiKey: string, counts: Counted, budget = true): ApiClient {
  return createApiClient({
    baseUrl: url,
    apiKey,
    ...(budget ? { rateLimit: LIMIT } : {}),
    onResponse: (info) => {
      counts.requests += 1;
      if (info.status === 429) counts.throttled += 1;
    },
  });
}

async function applyWith(client: ApiClient, set: DesiredSet, concurrency: number): Promise<void> {
  const live = await observe(client);
  const plan = buildPlan(set, live);
  const outcome = await applyAndVerify(plan, {
    client,
    live,
    concurrency,
    replan: async (result) => {
      // As `edgesync apply` does: the touched roots by ID, or a listing when that is cheaper.
      const again = await observeAfterApply(client, plan, live, result, { concurrency });
      return { live: again, plan: buildPlan(set, again) };
    },
  });
  if (!outcome.converged)
    throw new Error(`did not converge: ${JSON.stringify(outcome.result.messages)}`);
}

const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(2)}%`;

/** `edges` HTTPS edges with `routes` routes each, 50 per file, for an `edgesync` child process. */
async function writeManifestTree(dir: string, prefix: string, edges: number, routes: number) {
  await mkdir(dir, { recursive: true });
  for (let f = 0; f * 50 < edges; f++) {
    const docs: string[] = [];
    for (let i = f * 50; i < Math.min(edges, (f + 1) * 50); i++) {
      const name = `${prefix}-${String(i).padStart(4, '0')}`;
      docs.push(
        stringify({
          kind: 'HTTPSEdge',
          name,
          hostports: [`${name}.example.com:443`],
          routes: Array.from({ length: routes }, (_, r) => ({
            match_type: 'path_prefix',
            match: `/r${r}`,
            backend: { backend_id: `bkdhr_bench${r}` },
          })),
        }),
      );
    }
    await writeFile(path.join(dir, `edges-${f}.yaml`), docs.join('---\n'));
  }
}

/** Requests and 429s the server has answered so far. */
function serverCounts(server: RunningServer): Counted {
  const requests = Object.values(server.statuses).reduce((a, b) => a + b, 0);
  return { requests, throttled: server.statuses[429] ?? 0 };
}

export const suite: BenchSuite = {
  name: 'budget',
  description: `edgesync under the server's rolling-window limit, time-scaled: ${LIMIT.limit} per ${LIMIT.windowMs / 1000} s`,
  async run() {
    const keys = [key(), key(), key(), key()];
    // In-process: the load comes from at most 60 requests a second, or from child processes.
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      apiKeys: keys,
      rateLimit: LIMIT,
    });
    const url = server.url;
    // EDGESYNC_BENCH_BUDGET=cold|shared|edits|spent runs one scenario (the table header comes
    // with each).
    const only = process.env.EDGESYNC_BENCH_BUDGET;
    const header = `| scenario | requests | 429s | wall | physical minimum | ratio |\n|---|---|---|---|---|---|\n`;
    try {
      if (only === undefined || only === 'cold') await coldApply(url, keys[0] as string, header);
      if (only === undefined || only === 'shared') {
        await sharedBudget(server, url, keys[1] as string, only === undefined ? '' : header);
      }
      if (only === undefined || only === 'edits') await edits(server, url, keys);
    } finally {
      await server.close();
    }
    if (only === undefined || only === 'spent') await spentBudget();
  },
};

async function coldApply(url: string, apiKey: string, header: string): Promise<void> {
  // 1. Cold apply under the limit.
  const counts: Counted = { requests: 0, throttled: 0 };
  const client = countingClient(url, apiKey, counts);
  const t0 = performance.now();
  await applyWith(client, desired(1_000, 3), 4);
  const wallS = (performance.now() - t0) / 1000;
  await client.close();
  const minimumS = counts.requests / RATE_PER_S;
  process.stdout.write(
    `${header}| cold apply, 1,000 HTTPS edges x 3 routes, 4 workers | ${counts.requests} | ${counts.throttled} (${pct(counts.throttled, counts.requests)}) | ${wallS.toFixed(1)} s | ${minimumS.toFixed(1)} s | ${(wallS / minimumS).toFixed(3)} |\n`,
  );
}

async function sharedBudget(
  server: RunningServer,
  url: string,
  apiKey: string,
  header: string,
): Promise<void> {
  // 2. Two processes, one account, one budget.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-budget-'));
  try {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    await writeManifestTree(a, 'a', 250, 3);
    await writeManifestTree(b, 'b', 250, 3);
    const env = {
      ...process.env,
      EDGESYNC_API_URL: url,
      EDGESYNC_API_KEY: apiKey,
      EDGESYNC_RATE_LIMIT: `${LIMIT.limit}/${LIMIT.windowMs / 1000}s`,
      EDGESYNC_LOG_LEVEL: 'warn',
    };
    const before = serverCounts(server);
    const t1 = performance.now();
    const apply = (d: string, owner: string) =>
      run(process.execPath, [BIN, 'apply', d, '--yes', '--owner', owner], {
        env,
        maxBuffer: 64 * 1024 * 1024,
      }).then(() => (performance.now() - t1) / 1000);
    const [ta, tb] = await Promise.all([apply(a, 'proc-a'), apply(b, 'proc-b')]);
    const after = serverCounts(server);
    const counted = {
      requests: after.requests - before.requests,
      throttled: after.throttled - before.throttled,
    };
    process.stdout.write(
      `${header}| two processes, one account: 250 edges x 3 routes each | ${counted.requests} | ${counted.throttled} (${pct(counted.throttled, counted.requests)}) | ${Math.max(ta, tb).toFixed(1)} s (${ta.toFixed(1)} s, ${tb.toFixed(1)} s) | ${(counted.requests / RATE_PER_S).toFixed(1)} s | ${(Math.max(ta, tb) / (counted.requests / RATE_PER_S)).toFixed(3)} |\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function edits(server: RunningServer, url: string, keys: readonly string[]): Promise<void> {
  // 3. One changed module among 10,000 managed edges: the calls it costs (no limit here).
  server.knobs.rateLimit = undefined;
  const big = desired(10_000, 0);
  const seedCounts: Counted = { requests: 0, throttled: 0 };
  const seedClient = countingClient(url, keys[2] as string, seedCounts, false);
  await applyWith(seedClient, big, 16);
  const edges = big.httpsEdges.slice();
  const target = edges[4_242] as HttpsEdgeManifest;
  edges[4_242] = { ...target, tls_termination: { enabled: true, min_version: '1.3' } };
  const editCounts: Counted = { requests: 0, throttled: 0 };
  const editClient = countingClient(url, keys[2] as string, editCounts, false);
  await applyWith(editClient, { ...big, httpsEdges: edges }, 16);
  await seedClient.close();
  await editClient.close();
  process.stdout.write(
    `\nOne changed module among 10,000 managed edges: ${editCounts.requests} API calls (the full observation's list pages, 1 write, 1 GET by ID to verify).\n`,
  );

  // 4. The daemon's edits at 10,000 managed edges: the incremental path.
  await daemonEdits(url, keys[3] as string);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Step 4: calls and latency of one edit through the daemon's reconcile step (incremental). */
async function daemonEdits(url: string, apiKey: string): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-budget-daemon-'));
  const FILES = 100;
  const PER_FILE = 100;
  const edge = (i: number, description: string) => ({
    kind: 'TLSEdge',
    name: `t${String(i).padStart(5, '0')}`,
    description,
    hostports: [`t${i}.example.com:443`],
  });
  const writeFileOf = (f: number, edited: number | undefined, round: number) =>
    writeFile(
      path.join(dir, `f${String(f).padStart(3, '0')}.yaml`),
      Array.from({ length: PER_FILE }, (_, k) => {
        const i = f * PER_FILE + k;
        return stringify(edge(i, i === edited ? `edit ${round}` : 'v1'));
      }).join('---\n'),
    );
  const input = (reason: ReconcileInput['reason']): ReconcileInput => ({
    dir,
    revision: undefined,
    reason,
    signal: new AbortController().signal,
    assertCurrent: async () => undefined,
  });
  try {
    for (let f = 0; f < FILES; f++) await writeFileOf(f, undefined, 0);
    const rows: string[] = [];
    for (const limited of [false, true]) {
      const counts: Counted = { requests: 0, throttled: 0 };
      const client = countingClient(url, apiKey, counts, limited);
      const step = createReconciler({
        client,
        owner: 'default',
        allowEmpty: false,
        maxDeletes: 10,
        concurrency: 16,
        env: {},
        secretDirs: [],
        logger: silentLogger(),
      });
      // Unlimited: the start-up cycle creates the 10,000 edges. Limited: a full resync lists
      // them (101 calls of the window's 120).
      const first = await step(input(limited ? 'resync' : 'startup'));
      if (first.result !== 'changed' && first.result !== 'converged') {
        throw new Error(`first cycle: ${first.result} ${first.error ?? ''}`);
      }
      const calls: number[] = [];
      const latencies: number[] = [];
      for (let round = 1; round <= 11; round++) {
        const f = (round * 37) % FILES;
        await writeFileOf(f, f * PER_FILE + round, round);
        const before = counts.requests;
        const t0 = performance.now();
        const report = await step(input('file'));
        latencies.push(performance.now() - t0);
        if (report.result !== 'changed' || report.mode !== 'incremental') {
          throw new Error(`edit ${round}: ${report.result} (${report.mode}) ${report.error ?? ''}`);
        }
        calls.push(counts.requests - before);
        // Undone (another incremental cycle): the next edit starts from the seeded state.
        await writeFileOf(f, undefined, 0);
        await step(input('file'));
      }
      await client.close();
      rows.push(
        `| ${limited ? `client ${LIMIT.limit}/${LIMIT.windowMs / 1000}s, right after a full resync` : 'none'} | ${median(calls)} (max ${Math.max(...calls)}) | ${median(latencies).toFixed(0)} ms (max ${Math.max(...latencies).toFixed(0)}) | ${counts.throttled} |`,
      );
    }
    process.stdout.write(
      `\nOne edited edge among 10,000 managed TLS edges, through the daemon's reconcile step (a file event after a converged cycle; 11 edits, each undone):\n\n| limit | API calls per edit (median) | reconcile step latency (median) | 429s |\n|---|---:|---:|---:|\n${rows.join('\n')}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The server's `--rate-limit 120/60s`: the hosted service's budget, in real time. */
const REAL_LIMIT_TEXT = '120/60s';

/**
 * 5. Two `edgesync plan` processes of the 10,000-edge corpus, back to back, under the real
 * budget. The account is seeded without a limit first; then the server's limit is set (the
 * limiter `--rate-limit 120/60s` configures). The first plan fits in one window; the second
 * starts on what is left of it, meets the full window once (one 429), and must then run at the
 * window's full rate. The minimum the window allows: all requests but the last window's worth
 * wait a whole window, `floor((n - 1) / limit) * window` for n counted requests.
 */
async function spentBudget(): Promise<void> {
  const real = parseRateLimit(REAL_LIMIT_TEXT);
  if (real === undefined) throw new Error('bad rate limit');
  const apiKey = key();
  const server = await startServer({ host: '127.0.0.1', port: 0, apiKeys: [apiKey] });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-budget-spent-'));
  try {
    await generate(dir);
    const { set } = await loadDesiredSet(dir, { env: {} });
    const client = createApiClient({ baseUrl: server.url, apiKey });
    const initial = buildPlan(set, await observe(client));
    await client.close();
    await seed(server.url, initial, apiKey);
    const env = {
      ...process.env,
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: apiKey,
      EDGESYNC_RATE_LIMIT: REAL_LIMIT_TEXT,
      EDGESYNC_LOG_LEVEL: 'warn',
    };
    // When the server admitted each request (polled every 2 ms on the server's own loop).
    let admitted: number[] = [];
    const counted = () => {
      const c = serverCounts(server);
      return c.requests - c.throttled;
    };
    let seen = counted();
    // When each 429 was answered (same poll).
    const refusedAt: number[] = [];
    let refusedSeen = serverCounts(server).throttled;
    const poll = setInterval(() => {
      for (const c = counted(); seen < c; seen++) admitted.push(performance.now());
      for (const r = serverCounts(server).throttled; refusedSeen < r; refusedSeen++) {
        refusedAt.push(performance.now());
      }
    }, 2);
    // One plan without any limit first: the pace of a plan on its own (its requests' times).
    const u0 = performance.now();
    await run(process.execPath, [BIN, 'plan', dir], {
      env: { ...env, EDGESYNC_RATE_LIMIT: 'none' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const alone = { start: u0, end: performance.now(), admitted };
    admitted = [];
    server.knobs.rateLimit = real;
    // The unlimited plan's calls must leave the window before the measured pair starts.
    await new Promise((resolve) => setTimeout(resolve, real.windowMs + 1000));
    const rows: { requests: number; throttled: number; wallS: number; startedAt: number }[] = [];
    const t0 = performance.now();
    let end = t0;
    try {
      for (let i = 0; i < 2; i++) {
        const before = serverCounts(server);
        const start = performance.now();
        await run(process.execPath, [BIN, 'plan', dir], { env, maxBuffer: 64 * 1024 * 1024 });
        end = performance.now();
        const after = serverCounts(server);
        rows.push({
          requests: after.requests - before.requests,
          throttled: after.throttled - before.throttled,
          wallS: (end - start) / 1000,
          startedAt: start,
        });
      }
    } finally {
      clearInterval(poll);
    }
    const n = admitted.length;
    const wallS = (end - t0) / 1000;
    // The window lets the last request go one window after the (n - limit)th; the second
    // process's work after its last answer (planning, rendering) is its own, not the window's.
    const windowOpens =
      n > real.limit ? (admitted[n - real.limit - 1] as number) + real.windowMs : t0;
    const tailMs = end - (admitted[n - 1] ?? t0);
    // Nor can the second process list faster than a plan alone does: its first request the
    // window refuses goes no sooner than a window after the first process's first, and the rest
    // of its plan takes what the same part of a plan alone took.
    const firstCount = rows[0]?.requests ?? 0;
    const k = Math.max(0, real.limit - firstCount);
    const ownPaceMs = alone.end - (alone.admitted[k] ?? alone.end);
    const paced = (admitted[0] ?? t0) + real.windowMs + ownPaceMs;
    const minimumS = (Math.max(windowOpens + tailMs, paced) - t0) / 1000;
    const floorS = (Math.floor((n - 1) / real.limit) * real.windowMs) / 1000;
    const ratio = wallS / minimumS;
    const [first, second] = rows as [(typeof rows)[0], (typeof rows)[0]];
    // Where the second process's time went: its start, its 429s, its admissions after them.
    const rel = (t: number | undefined) => (t === undefined ? '-' : ((t - t0) / 1000).toFixed(1));
    const secondsAdmitted = admitted.filter((t) => t >= second.startedAt);
    const lastRefused = refusedAt.at(-1);
    const afterPause = secondsAdmitted.filter((t) => lastRefused === undefined || t > lastRefused);
    const timeline = `The second process: started at ${rel(second.startedAt)} s; 429s at ${refusedAt.map((t) => `${rel(t)} s`).join(', ') || 'none'}; ${secondsAdmitted.length - afterPause.length} requests admitted before, ${afterPause.length} after (from ${rel(afterPause[0])} s to ${rel(afterPause.at(-1))} s); the first process's requests were admitted from ${rel(admitted[0])} s to ${rel(admitted[first.requests - first.throttled - 1])} s.`;
    process.stdout.write(
      `\nA process started on a spent budget: two \`edgesync plan\` processes of 10,000 edges back to back, server and client at ${REAL_LIMIT_TEXT} (real time):\n\n| process | requests | 429s | wall |\n|---|---:|---:|---:|\n| first | ${first.requests} | ${first.throttled} | ${first.wallS.toFixed(1)} s |\n| second | ${second.requests} | ${second.throttled} | ${second.wallS.toFixed(1)} s |\n\nBoth: ${n} requests counted, ${first.throttled + second.throttled} 429s, ${wallS.toFixed(1)} s. Minimum the window allows: ${minimumS.toFixed(1)} s (the window opens for the last request ${((windowOpens - t0) / 1000).toFixed(1)} s after the start, one window after the ${n - real.limit}th request; then the second process's own ${(tailMs / 1000).toFixed(1)} s after its last answer; or, if later, a window after the first request plus the ${(ownPaceMs / 1000).toFixed(1)} s a plan alone (${((alone.end - alone.start) / 1000).toFixed(1)} s) takes from its ${k + 1}th request to its exit; the bare floor, every request but the last window's a window late: ${floorS.toFixed(1)} s). Ratio ${ratio.toFixed(3)} (target <= 1.10: ${ratio <= 1.1 ? 'OK' : 'OVER TARGET'}); 429s per process: ${first.throttled}, ${second.throttled}.\n\n${timeline}\n`,
    );
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
