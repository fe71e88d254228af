/**
 * Benchmark suite `budget` (issue #12 item 7): edgesync against the local server's rolling-window
 * rate limit, time-scaled 30x (120 requests per rolling 2 s instead of 60 s), so it runs in a few
 * minutes:
 * - a cold apply of 1,000 HTTPS edges with 3 routes, 4 workers: wall time against the physical
 *   minimum (requests / rate), and the share of requests answered 429;
 * - two `edgesync apply` processes sharing one account's budget (two owners, 250 edges x 3
 *   routes each), each with its own client-side budget of the full 120/2s: both finish, and the
 *   share of requests wasted on 429s;
 * - the API calls one changed module costs with 10,000 managed edges (no limit: a count).
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
import { verifyTouched } from '../src/apply/verify.js';
import type { DesiredSet, HttpsEdgeManifest } from '../src/manifest/schema.js';
import { buildPlan } from '../src/plan/index.js';
import { type RunningServer, startServer } from '../src/server/index.js';
import { desired } from './apply.js';
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
      const again = await verifyTouched(client, plan, live, result);
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
    const keys = [key(), key(), key()];
    // In-process: the load comes from at most 60 requests a second, or from child processes.
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      apiKeys: keys,
      rateLimit: LIMIT,
    });
    const url = server.url;
    try {
      // 1. Cold apply under the limit.
      const counts: Counted = { requests: 0, throttled: 0 };
      const client = countingClient(url, keys[0] as string, counts);
      const t0 = performance.now();
      await applyWith(client, desired(1_000, 3), 4);
      const wallS = (performance.now() - t0) / 1000;
      await client.close();
      const minimumS = counts.requests / RATE_PER_S;
      process.stdout.write(
        `| scenario | requests | 429s | wall | physical minimum | ratio |\n|---|---|---|---|---|---|\n` +
          `| cold apply, 1,000 HTTPS edges x 3 routes, 4 workers | ${counts.requests} | ${counts.throttled} (${pct(counts.throttled, counts.requests)}) | ${wallS.toFixed(1)} s | ${minimumS.toFixed(1)} s | ${(wallS / minimumS).toFixed(3)} |\n`,
      );

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
          EDGESYNC_API_KEY: keys[1] as string,
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
          `| two processes, one account: 250 edges x 3 routes each | ${counted.requests} | ${counted.throttled} (${pct(counted.throttled, counted.requests)}) | ${Math.max(ta, tb).toFixed(1)} s (${ta.toFixed(1)} s, ${tb.toFixed(1)} s) | ${(counted.requests / RATE_PER_S).toFixed(1)} s | ${(Math.max(ta, tb) / (counted.requests / RATE_PER_S)).toFixed(3)} |\n`,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

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
    } finally {
      await server.close();
    }
  },
};
