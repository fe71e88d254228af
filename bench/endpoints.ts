/**
 * `npm run bench -- endpoints`: 10,000 managed resources split across the three kinds (TLS and
 * HTTPS edges, bot users, cloud endpoints) on the local server in a child process. Measures the
 * API calls of a no-op cycle (the four lists, nothing written) and of one edited policy from the
 * save to the write on the kept snapshot (the daemon's incremental path: GET the touched root by
 * ID, PATCH, GET it back), counted at the client, with the plan's time.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type ApiClient, createApiClient, observe } from '../src/api/index.js';
import { applyAndVerify } from '../src/apply/cycle.js';
import { executePlan } from '../src/apply/executor.js';
import { observeAfterApply, verifyTouched } from '../src/apply/verify.js';
import type { CloudEndpointManifest, DesiredSet } from '../src/manifest/schema.js';
import { buildPlan, operationCount } from '../src/plan/index.js';
import { startServerChild } from './harness.js';
import type { BenchSuite } from './run.js';

const source = { file: 'bench.yaml', line: 1, column: 1 };
const TLS = 1667;
const HTTPS = 1667;
const BOTS = 3333;
const ENDPOINTS = 3333;

function policy(status: number): CloudEndpointManifest['traffic_policy'] {
  return {
    on_http_request: [
      { actions: [{ type: 'add-headers', config: { headers: { 'x-bench': 'yes' } } }] },
      { actions: [{ type: 'custom-response', config: { status_code: status } }] },
    ],
  };
}

function endpoint(i: number, status = 200): CloudEndpointManifest {
  const name = `ep-${String(i).padStart(5, '0')}`;
  return {
    kind: 'CloudEndpoint',
    name,
    url: `https://${name}.example.com`,
    bindings: ['public'],
    pooling_enabled: false,
    metadata: { team: 'bench' },
    traffic_policy: policy(status),
    protect: false,
    source,
    sensitive: [],
  };
}

/** The desired set as the loader would return it (the loader has its own benchmark). */
function desired(): DesiredSet {
  const edge = (prefix: string, i: number) => {
    const name = `${prefix}-${String(i).padStart(5, '0')}`;
    return {
      name,
      metadata: {},
      protect: false,
      hostports: [`${name}.example.com:443`],
      source,
      sensitive: [],
    };
  };
  return {
    tlsEdges: Array.from({ length: TLS }, (_, i) => ({
      kind: 'TLSEdge' as const,
      ...edge('tls', i),
    })),
    httpsEdges: Array.from({ length: HTTPS }, (_, i) => ({
      kind: 'HTTPSEdge' as const,
      ...edge('https', i),
      routes: [],
    })),
    botUsers: Array.from({ length: BOTS }, (_, i) => ({
      kind: 'BotUser' as const,
      name: `bot-${String(i).padStart(5, '0')}`,
      active: true,
      ensure: 'present' as const,
      source,
      sensitive: [],
    })),
    cloudEndpoints: Array.from({ length: ENDPOINTS }, (_, i) => endpoint(i)),
  };
}

function counted(url: string, key: string): { client: ApiClient; calls: () => number } {
  let n = 0;
  const client = createApiClient({ baseUrl: url, apiKey: key, onResponse: () => (n += 1) });
  return { client, calls: () => n };
}

async function run(): Promise<void> {
  const key = `esk_${randomBytes(16).toString('hex')}`;
  const server = await startServerChild({ apiKeys: [key] });
  const { url } = server;
  const { client, calls } = counted(url, key);
  try {
    const set = desired();
    let t = performance.now();
    const seed = buildPlan(set, await observe(client));
    const seeded = await executePlan(seed, { client, concurrency: 8 });
    process.stdout.write(
      `seeded ${seeded.writes} resources in ${((performance.now() - t) / 1000).toFixed(1)} s (failed ${seeded.failed})\n`,
    );

    // A no-op cycle: the four lists, a plan, nothing written.
    let start = calls();
    t = performance.now();
    const known = await observe(client);
    const noop = buildPlan(set, known);
    const ms = performance.now() - t;
    const c = known.calls;
    const pages = (n: number) => Math.max(1, Math.ceil(n / 100));
    const perKind = pages(TLS + HTTPS) + pages(BOTS) + pages(ENDPOINTS);
    process.stdout.write(
      `no-op cycle: ${calls() - start} calls (TLS ${c.tls}, HTTPS ${c.https}, bot users ${c.botUsers}, endpoints ${c.endpoints}); ceil(n/100) per kind = ${perKind}, + 1 = ${perKind + 1}; ${operationCount(noop)} operations; observe + plan ${ms.toFixed(0)} ms\n`,
    );

    // One edited policy on the kept snapshot: GET the touched root, PATCH, GET it back.
    const edited = {
      ...set,
      cloudEndpoints: set.cloudEndpoints.map((e, i) => (i === 42 ? endpoint(i, 404) : e)),
    };
    start = calls();
    t = performance.now();
    const guess = buildPlan(edited, known);
    const fresh = await verifyTouched(client, guess, known, { created: {} });
    const plan = buildPlan(edited, fresh);
    const outcome = await applyAndVerify(plan, {
      client,
      live: fresh,
      replan: async (result) => {
        const again = await observeAfterApply(client, plan, fresh, result);
        return { live: again, plan: buildPlan(edited, again) };
      },
    });
    process.stdout.write(
      `one edited policy: ${calls() - start} calls from save to verified write (budget 3), converged ${outcome.converged}, ${(performance.now() - t).toFixed(0)} ms\n`,
    );
  } finally {
    await client.close();
    await server.stop();
  }
}

export const suite: BenchSuite = {
  name: 'endpoints',
  description: '10,000 resources across edges, bot users and cloud endpoints: API calls per cycle',
  run,
};
