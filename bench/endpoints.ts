/**
 * `npm run bench -- endpoints`: 10,000 managed resources split across the three kinds (TLS and
 * HTTPS edges, bot users, cloud endpoints), written as manifest files to a temp directory and
 * reconciled by the daemon's reconcile step (`createReconciler`: the real loader, planner,
 * applier) against the local server in a child process. Measures the API calls of a no-op cycle
 * (the four lists, nothing written) and of one edited policy saved to its file, from the save to
 * the verified write on the kept snapshot (the incremental path: the file read again, the
 * touched root GET by ID, PATCH, GET it back), counted at the client.
 *
 * `EDGESYNC_BENCH_ENDPOINTS_TOTAL` sets the number of resources (default 10,000), for a quick
 * run of the same steps at a smaller size.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createApiClient } from '../src/api/index.js';
import { createReconciler, type ReconcileReport, type TriggerReason } from '../src/engine/index.js';
import { silentLogger } from '../src/log.js';
import { startServerChild } from './harness.js';
import type { BenchSuite } from './run.js';

const TOTAL = Number(process.env.EDGESYNC_BENCH_ENDPOINTS_TOTAL ?? 10_000);
const TLS = Math.round(TOTAL / 6);
const HTTPS = Math.round(TOTAL / 6);
const BOTS = Math.floor((TOTAL - TLS - HTTPS) / 2);
const ENDPOINTS = TOTAL - TLS - HTTPS - BOTS;
/** The endpoint whose policy the edit changes. */
const EDITED = Math.min(42, ENDPOINTS - 1);

const padded = (i: number) => String(i).padStart(5, '0');

function endpointYaml(i: number, status: number): string {
  const name = `ep-${padded(i)}`;
  return `kind: CloudEndpoint
name: ${name}
url: https://${name}.example.com
metadata: { team: bench }
traffic_policy:
  on_http_request:
    - actions:
        - type: add-headers
          config: { headers: { x-bench: "yes" } }
    - actions:
        - type: custom-response
          config: { status_code: ${status} }
`;
}

const endpointFile = (dir: string, i: number) =>
  path.join(dir, 'endpoints', `ep-${padded(i)}.yaml`);

/** The manifests as files: one per endpoint, the edges and bot users in one file per kind. */
async function writeManifests(dir: string): Promise<void> {
  await mkdir(path.join(dir, 'endpoints'), { recursive: true });
  const docs = (n: number, doc: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => doc(i)).join('---\n');
  await writeFile(
    path.join(dir, 'tls-edges.yaml'),
    docs(
      TLS,
      (i) =>
        `kind: TLSEdge\nname: tls-${padded(i)}\nhostports: [tls-${padded(i)}.example.com:443]\n`,
    ),
  );
  await writeFile(
    path.join(dir, 'https-edges.yaml'),
    docs(
      HTTPS,
      (i) =>
        `kind: HTTPSEdge\nname: https-${padded(i)}\nhostports: [https-${padded(i)}.example.com:443]\n`,
    ),
  );
  await writeFile(
    path.join(dir, 'bots.yaml'),
    docs(BOTS, (i) => `kind: BotUser\nname: bot-${padded(i)}\n`),
  );
  for (let i = 0; i < ENDPOINTS; i++) await writeFile(endpointFile(dir, i), endpointYaml(i, 200));
}

async function run(): Promise<void> {
  const key = `esk_${randomBytes(16).toString('hex')}`;
  const server = await startServerChild({ apiKeys: [key] });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-endpoints-'));
  let n = 0;
  const client = createApiClient({ baseUrl: server.url, apiKey: key, onResponse: () => (n += 1) });
  const reconcile = createReconciler({
    client,
    owner: 'default',
    allowEmpty: false,
    maxDeletes: 10,
    concurrency: 8,
    env: {},
    secretDirs: [],
    logger: silentLogger(),
  });
  const cycle = async (reason: TriggerReason) => {
    const calls = n;
    const t = performance.now();
    const report: ReconcileReport = await reconcile({
      dir,
      revision: undefined,
      reason,
      signal: new AbortController().signal,
      assertCurrent: async () => undefined,
    });
    return { report, calls: n - calls, ms: performance.now() - t };
  };
  try {
    await writeManifests(dir);
    const seed = await cycle('startup');
    process.stdout.write(
      `seeded ${seed.report.writes} resources from ${ENDPOINTS + 3} files in ${(seed.ms / 1000).toFixed(1)} s (${seed.report.result})\n`,
    );

    // A no-op cycle: the manifests read (unchanged files from the cache), the four lists, a
    // plan, nothing written.
    const noop = await cycle('resync');
    const pages = (k: number) => Math.max(1, Math.ceil(k / 100));
    const perKind = pages(TLS + HTTPS) + pages(BOTS) + pages(ENDPOINTS);
    process.stdout.write(
      `no-op cycle: ${noop.calls} calls, ${noop.report.writes} writes (${noop.report.result}); ceil(n/100) per kind = ${perKind}, + 1 = ${perKind + 1}; ${noop.ms.toFixed(0)} ms\n`,
    );

    // One edited policy, saved to its file: the incremental cycle of a file event.
    await writeFile(endpointFile(dir, EDITED), endpointYaml(EDITED, 404));
    const edit = await cycle('file');
    process.stdout.write(
      `one edited policy: ${edit.calls} calls from save to verified write (budget 3), ${edit.report.writes} write (${edit.report.result}), ${edit.ms.toFixed(0)} ms\n`,
    );
    if (edit.calls > 3 || edit.report.result !== 'changed') {
      throw new Error(`one edited policy: ${edit.calls} calls, ${edit.report.result}: over budget`);
    }
  } finally {
    await client.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export const suite: BenchSuite = {
  name: 'endpoints',
  description: '10,000 resources across edges, bot users and cloud endpoints: API calls per cycle',
  run,
};
