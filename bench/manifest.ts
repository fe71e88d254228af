/**
 * Benchmark suite `manifest`: load and validate 10,000 edges spread over 1,000 files (a mix of
 * TLS edges with all five modules and HTTPS edges with two routes each), several times, and
 * print the median (after one unmeasured warm-up run, so the JIT is not what is measured).
 * Target: under 1.5 s on the project machine.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadManifests } from '../src/manifest/loader.js';
import type { BenchSuite } from './run.js';

const FILES = 1_000;
const EDGES_PER_FILE = 10;
const RUNS = 7;
const TARGET_MS = 1_500;

/** A realistic base62 ID body of 27 characters, derived from a number (deterministic). */
function idBody(n: number): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let out = '';
  let x = n * 7919 + 12345;
  for (let i = 0; i < 27; i++) {
    out += alphabet[x % 62];
    x = Math.floor(x / 62) + i * 31 + n;
  }
  return out;
}

function tlsEdge(n: number): string {
  return `kind: TLSEdge
name: tls-${n}
description: TCP service number ${n}
metadata: { team: platform, tier: "${n % 3}" }
hostports: [tls-${n}.example.com:443]
backend: { backend_id: bkdtg_${idBody(n)} }
ip_restriction: { ip_policy_ids: [ipp_${idBody(n + 1)}] }
mutual_tls: { certificate_authority_ids: [ca_${idBody(n + 2)}] }
tls_termination: { terminate_at: edge, min_version: "1.2" }
traffic_policy:
  value:
    on_tcp_connect:
      - actions: [{ type: restrict-ips, config: { enforce: true } }]
`;
}

function httpsEdge(n: number): string {
  return `kind: HTTPSEdge
name: web-${n}
description: Web application ${n}
metadata: { team: web }
hostports: [web-${n}.example.com:443]
tls_termination: { min_version: "1.3" }
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: bkdhr_${idBody(n)} }
    compression: {}
    circuit_breaker: { tripped_duration: 10, rolling_window: 30, num_buckets: 10, volume_threshold: 20, error_threshold_percentage: 0.5 }
    oauth:
      provider:
        google:
          email_domains: [example.com]
  - match_type: exact_path
    match: /hooks/stripe
    backend: { backend_id: bkdhr_${idBody(n + 1)} }
    webhook_verification: { provider: stripe, secret: whsec_${idBody(n + 2)} }
    request_headers: { add: { x-edge: web-${n} }, remove: [cookie] }
`;
}

export async function generate(dir: string): Promise<number> {
  let n = 0;
  let bytes = 0;
  for (let f = 0; f < FILES; f++) {
    const sub = path.join(dir, `team-${f % 20}`);
    await mkdir(sub, { recursive: true });
    const docs: string[] = [];
    for (let e = 0; e < EDGES_PER_FILE; e++, n++)
      docs.push(n % 2 === 0 ? tlsEdge(n) : httpsEdge(n));
    const text = docs.join('---\n');
    bytes += Buffer.byteLength(text);
    await writeFile(path.join(sub, `edges-${f}.yaml`), text);
  }
  return bytes;
}

export const suite: BenchSuite = {
  name: 'manifest',
  description: `load + validate ${FILES * EDGES_PER_FILE} edges over ${FILES} files (median of ${RUNS})`,
  async run() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-manifest-'));
    try {
      const bytes = await generate(dir);
      process.stdout.write(
        `${(bytes / 1e6).toFixed(1)} MB of YAML (${Math.round(bytes / (FILES * EDGES_PER_FILE))} bytes per edge on average)\n`,
      );
      const times: number[] = [];
      for (let i = -1; i < RUNS; i++) {
        const start = performance.now();
        const result = await loadManifests(dir, { env: {} });
        if (i >= 0) times.push(performance.now() - start);
        if (!result.ok) {
          throw new Error(`generated manifests are invalid: ${result.diagnostics[0]?.message}`);
        }
        const edges = result.set.tlsEdges.length + result.set.httpsEdges.length;
        if (edges !== FILES * EDGES_PER_FILE)
          throw new Error(`expected ${FILES * EDGES_PER_FILE} edges, got ${edges}`);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)] ?? Number.NaN;
      process.stdout.write(
        `runs (ms): ${times.map((t) => t.toFixed(0)).join(', ')}\nmedian: ${median.toFixed(0)} ms (target < ${TARGET_MS} ms) ${median < TARGET_MS ? 'OK' : 'OVER TARGET'}\n`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
