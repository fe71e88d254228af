import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startServerChild } from './harness.js';
import type { BenchSuite } from './run.js';

const CONCURRENCY = 16;
const ROUNDS = 3;

interface Round {
  readonly requests: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** Runs `count` requests from CONCURRENCY workers; `make(i)` builds request i. */
async function load(
  pool: Pool,
  count: number,
  make: (i: number) => { method: 'GET' | 'POST'; path: string; body?: string },
  expect: number,
  onBody?: (body: string) => void,
): Promise<Round> {
  const latencies = new Float64Array(count);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const req = make(i);
      const t0 = performance.now();
      const res = await pool.request({
        method: req.method,
        path: req.path,
        headers: HEADERS,
        ...(req.body === undefined ? {} : { body: req.body }),
      });
      const text = await res.body.text();
      latencies[i] = performance.now() - t0;
      if (res.statusCode !== expect) {
        throw new Error(`${req.method} ${req.path}: ${res.statusCode} ${text.slice(0, 200)}`);
      }
      onBody?.(text);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort();
  const pick = (q: number) => latencies[Math.min(count - 1, Math.floor(q * count))] as number;
  return { requests: count, perSecond: count / elapsed, p50: pick(0.5), p99: pick(0.99) };
}

let HEADERS: Record<string, string> = {};

function median(rounds: Round[]): Round {
  const sorted = [...rounds].sort((a, b) => a.perSecond - b.perSecond);
  return sorted[Math.floor(sorted.length / 2)] as Round;
}

export const suite: BenchSuite = {
  name: 'server',
  description: `local Edge API server, ${CONCURRENCY} keep-alive clients on loopback, median of ${ROUNDS} rounds`,
  async run() {
    const dataDir = await mkdtemp(join(tmpdir(), 'edgesync-bench-'));
    const apiKey = `bench_${randomBytes(16).toString('hex')}`;
    HEADERS = {
      authorization: `Bearer ${apiKey}`,
      'svc-version': '2',
      'content-type': 'application/json',
    };
    const server = await startServerChild({ apiKeys: [apiKey], dataDir });
    const { url } = server;
    const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
    try {
      const ids: string[] = [];
      let created = 0;
      const create = (i: number) => ({
        method: 'POST' as const,
        path: '/edges/tls',
        body: JSON.stringify({
          description: `bench edge ${i}`,
          metadata: '{"edgesync/owner":"bench"}',
          hostports: [`bench-${created++}.example.com:443`],
          backend: { backend_id: 'bkdtg_2benchbackend' },
          tls_termination: { min_version: '1.2' },
        }),
      });
      const collect = (text: string) => ids.push((JSON.parse(text) as { id: string }).id);
      // Warm-up (JIT, connections), not measured.
      await load(pool, 500, create, 201, collect);
      await load(
        pool,
        1000,
        (i) => ({ method: 'GET', path: `/edges/tls/${ids[i % ids.length]}` }),
        200,
      );

      const results: Array<[string, Round]> = [];
      const measure = async (label: string, run: () => Promise<Round>) => {
        const rounds: Round[] = [];
        for (let r = 0; r < ROUNDS; r++) rounds.push(await run());
        results.push([label, median(rounds)]);
      };
      await measure('POST /edges/tls (persisted create)', () =>
        load(pool, 4000, create, 201, collect),
      );
      await measure('GET /edges/tls/{id}', () =>
        load(
          pool,
          20_000,
          (i) => ({ method: 'GET', path: `/edges/tls/${ids[(i * 7919) % ids.length]}` }),
          200,
        ),
      );
      await measure('GET /edges/tls?limit=100 (list page)', () =>
        load(
          pool,
          2000,
          (i) => ({
            method: 'GET',
            path: `/edges/tls?limit=100&before_id=${ids[(ids.length - 1 - ((i * 131) % (ids.length - 100))) | 0]}`,
          }),
          200,
        ),
      );

      const lines = [
        `| operation | requests | req/s | p50 ms | p99 ms |`,
        `|---|---:|---:|---:|---:|`,
        ...results.map(
          ([label, r]) =>
            `| ${label} | ${r.requests} | ${Math.round(r.perSecond)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`,
        ),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      process.stdout.write(`(${ids.length} edges in the store at the end)\n`);
    } finally {
      await pool.close();
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
