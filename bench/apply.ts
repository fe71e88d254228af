import { randomBytes } from 'node:crypto';
import { type ApiClient, createApiClient, observe } from '../src/api/index.js';
import { applyAndVerify } from '../src/apply/cycle.js';
import { DEFAULT_OWNER } from '../src/manifest/metadata.js';
import type { DesiredSet, HttpsEdgeManifest } from '../src/manifest/schema.js';
import { buildPlan } from '../src/plan/index.js';
import { startServerChild } from './harness.js';
import type { BenchSuite } from './run.js';

function apiKey(): string {
  return `esk_${randomBytes(16).toString('hex')}`;
}

const source = { file: 'bench.yaml', line: 1, column: 1 };

/** The desired set as `loadManifests` would return it (the loader has its own benchmark). */
export function desired(edges: number, routesPerEdge: number): DesiredSet {
  const httpsEdges: HttpsEdgeManifest[] = [];
  for (let i = 0; i < edges; i++) {
    const name = `edge-${String(i).padStart(5, '0')}`;
    httpsEdges.push({
      kind: 'HTTPSEdge',
      name,
      description: `bench edge ${i}`,
      metadata: { team: 'bench' },
      protect: false,
      hostports: [`${name}.example.com:443`],
      tls_termination: { enabled: true, min_version: '1.2' },
      routes: Array.from({ length: routesPerEdge }, (_, r) => ({
        match_type: 'path_prefix' as const,
        match: `/r${r}`,
        metadata: {},
        backend: { enabled: true, backend_id: `bkdhr_bench${r}` },
        compression: { enabled: true },
        source,
        sensitive: [],
      })),
      source,
      sensitive: [],
    });
  }
  return { tlsEdges: [], httpsEdges, botUsers: [], cloudEndpoints: [] };
}

interface Measured {
  readonly writes: number;
  readonly executorWrites: number;
  readonly operations: number;
  readonly totalMs: number;
  readonly executeMs: number;
  readonly converged: boolean;
}

async function applyOnce(
  url: string,
  key: string,
  set: DesiredSet,
  concurrency: number,
): Promise<Measured> {
  let writes = 0;
  const client: ApiClient = createApiClient({
    baseUrl: url,
    apiKey: key,
    onResponse: (info) => {
      if (info.method !== 'GET') writes += 1;
    },
  });
  try {
    const started = performance.now();
    const replan = async () => {
      const live = await observe(client);
      return { live, plan: buildPlan(set, live, { owner: DEFAULT_OWNER }) };
    };
    const { live, plan } = await replan();
    const operations = plan.changes.reduce((n, c) => n + c.operations.length, 0);
    let executeMs = 0;
    const t0 = performance.now();
    const outcome = await applyAndVerify(plan, {
      client,
      live,
      concurrency,
      replan: async () => {
        executeMs = performance.now() - t0;
        return replan();
      },
    });
    return {
      writes,
      executorWrites: outcome.result.writes,
      operations,
      totalMs: performance.now() - started,
      executeMs,
      converged: outcome.converged,
    };
  } finally {
    await client.close();
  }
}

function check(label: string, m: Measured, expectedWrites: number): void {
  if (m.writes !== expectedWrites || m.executorWrites !== expectedWrites || !m.converged) {
    throw new Error(
      `${label}: expected ${expectedWrites} writes and convergence, got ${m.writes} HTTP writes, ${m.executorWrites} executor writes, converged=${m.converged}`,
    );
  }
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export const suite: BenchSuite = {
  name: 'apply',
  description: 'cold apply of 1,000 HTTPS edges x 3 routes; one module changed among 10,000 edges',
  async run() {
    const ROUNDS = 3;
    const keys = Array.from({ length: 3 * ROUNDS + 1 }, apiKey);
    const server = await startServerChild({ apiKeys: keys });
    const { url } = server;
    try {
      const cold = desired(1_000, 3);
      process.stdout.write(
        '| concurrency | writes (HTTP) | operations | execute | full cycle | converged |\n|---|---|---|---|---|---|\n',
      );
      for (const [i, concurrency] of [1, 4, 16].entries()) {
        const rounds: Measured[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const m = await applyOnce(url, keys[i * ROUNDS + r] as string, cold, concurrency);
          check(`cold apply at concurrency ${concurrency}`, m, 4_000);
          rounds.push(m);
        }
        const m = rounds.sort((a, b) => a.executeMs - b.executeMs)[Math.floor(ROUNDS / 2)];
        if (m === undefined) continue;
        process.stdout.write(
          `| ${concurrency} | ${m.writes} | ${m.operations} | ${fmt(m.executeMs)} | ${fmt(m.totalMs)} | ${m.converged} |\n`,
        );
      }

      const big = desired(10_000, 0);
      const bigKey = keys[3 * ROUNDS] as string;
      const seeded = await applyOnce(url, bigKey, big, 16);
      check('seeding 10,000 edges', seeded, 10_000);
      const edges = big.httpsEdges.slice();
      const target = edges[4_242] as HttpsEdgeManifest;
      edges[4_242] = { ...target, tls_termination: { enabled: true, min_version: '1.3' } };
      const one = await applyOnce(url, bigKey, { ...big, httpsEdges: edges }, 16);
      check('one module changed among 10,000 edges', one, 1);
      process.stdout.write(
        `\n10,000 edges seeded in ${fmt(seeded.totalMs)} (${seeded.writes} writes); one module changed on one of them: ${one.writes} write, full cycle ${fmt(one.totalMs)} (two observations of 10,000 edges and two plans).\n`,
      );
    } finally {
      await server.stop();
    }
  },
};
