/**
 * `npm run bench -- cutover`: how long a host and port is served by nothing during a cut-over
 * from edges to cloud endpoints: from the answer to the edge's DELETE to the answer to the
 * endpoint's create on its host and port, per edge, over HTTP against the local server in a
 * child process. 50 HTTPS edges, each replaced by one endpoint, at concurrency 1 and 4.
 */
import { randomBytes } from 'node:crypto';
import { type ApiClient, createApiClient, observe } from '../src/api/index.js';
import { applyAndVerify } from '../src/apply/cycle.js';
import { DEFAULT_OWNER, storedMetadata } from '../src/manifest/metadata.js';
import type { CloudEndpointManifest, DesiredSet } from '../src/manifest/schema.js';
import { buildPlan } from '../src/plan/index.js';
import { startServerChild } from './harness.js';
import type { BenchSuite } from './run.js';

const EDGES = 50;
const source = { file: 'bench.yaml', line: 1, column: 1 };
const host = (i: number) => `edge-${String(i).padStart(3, '0')}.example.com`;

function endpoints(): DesiredSet {
  const cloudEndpoints: CloudEndpointManifest[] = Array.from({ length: EDGES }, (_, i) => ({
    kind: 'CloudEndpoint',
    name: `e${i}`,
    url: `https://${host(i)}`,
    bindings: ['public'],
    pooling_enabled: false,
    metadata: {},
    traffic_policy: {
      on_http_request: [
        { actions: [{ type: 'forward-internal', config: { url: 'https://web.internal' } }] },
      ],
    },
    protect: false,
    source,
    sensitive: [],
  }));
  return { tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints };
}

/** The unserved time of each host and port, in ms. */
async function cutOver(url: string, key: string, concurrency: number): Promise<number[]> {
  const deleted = new Map<string, number>();
  const created = new Map<string, number>();
  const inner = createApiClient({ baseUrl: url, apiKey: key });
  const hostOf = new Map<string, string>();
  const deleteHttpsEdge: ApiClient['deleteHttpsEdge'] = async (id) => {
    await inner.deleteHttpsEdge(id);
    deleted.set(hostOf.get(id) ?? id, performance.now());
  };
  const createEndpoint: ApiClient['createEndpoint'] = async (body) => {
    const record = await inner.createEndpoint(body);
    created.set(body.url.replace(/^https:\/\//, ''), performance.now());
    return record;
  };
  const client = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'deleteHttpsEdge') return deleteHttpsEdge;
      if (prop === 'createEndpoint') return createEndpoint;
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  try {
    for (let i = 0; i < EDGES; i++) {
      const e = await inner.createHttpsEdge({
        hostports: [`${host(i)}:443`],
        metadata: storedMetadata({}, { owner: DEFAULT_OWNER, name: `e${i}`, protect: false }),
      });
      hostOf.set(e.id, host(i));
    }
    const set = endpoints();
    const live = await observe(inner);
    const plan = buildPlan(set, live, { owner: DEFAULT_OWNER, maxDeletes: EDGES });
    const outcome = await applyAndVerify(plan, {
      client,
      live,
      concurrency,
      guards: { maxDeletes: EDGES },
      replan: async () => {
        const again = await observe(inner);
        return {
          live: again,
          plan: buildPlan(set, again, { owner: DEFAULT_OWNER, maxDeletes: EDGES }),
        };
      },
    });
    if (!outcome.converged || created.size !== EDGES) {
      throw new Error(`cut-over at concurrency ${concurrency} did not converge`);
    }
    return [...created].map(([h, at]) => at - (deleted.get(h) ?? Number.NaN));
  } finally {
    await inner.close();
  }
}

const ms = (v: number) => `${v.toFixed(2)} ms`;

export const suite: BenchSuite = {
  name: 'cutover',
  description: `unserved time of a host and port during a cut-over of ${EDGES} edges (delete answered -> create answered)`,
  async run() {
    const ROUNDS = 3;
    const keys = Array.from({ length: 2 * ROUNDS }, () => `esk_${randomBytes(16).toString('hex')}`);
    const server = await startServerChild({ apiKeys: keys });
    const { url } = server;
    try {
      process.stdout.write('| concurrency | edges | median | max |\n|---|---|---|---|\n');
      for (const [i, concurrency] of [1, 4].entries()) {
        const gaps: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          gaps.push(...(await cutOver(url, keys[i * ROUNDS + r] as string, concurrency)));
        }
        gaps.sort((a, b) => a - b);
        const median = gaps[Math.floor(gaps.length / 2)] ?? Number.NaN;
        const max = gaps.at(-1) ?? Number.NaN;
        process.stdout.write(
          `| ${concurrency} | ${EDGES} x ${ROUNDS} | ${ms(median)} | ${ms(max)} |\n`,
        );
      }
    } finally {
      await server.stop();
    }
  },
};
