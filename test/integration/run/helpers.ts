/**
 * Helpers for the tests of `edgesync run`, in-process and as a child process (which
 * bench/harness.ts starts, reads and stops): temporary directories, manifest builders, metric
 * sums and the live state read straight from the server.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  type ApiClient,
  createApiClient,
  type LiveSnapshot,
  observe,
} from '../../../src/api/index.js';
import type { ReconcileInput, TriggerReason } from '../../../src/engine/index.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import type { RunningServer } from '../../../src/server/index.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { seededRandom, startTestServer } from '../../helpers/server.js';

/** The children spawn the compiled CLI: fail with the remedy rather than a confusing crash. */
export function assertBuilt(): void {
  assertFreshBuild();
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-run-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** What an in-process reconciler test runs against: a seeded local server, a client, a directory. */
export interface ReconcilerScene {
  readonly server: RunningServer & { apiKey: string };
  readonly client: ApiClient;
  readonly dir: string;
  close(): Promise<void>;
}

/** A fresh scene (each test of a file opens one in `beforeEach` and closes it after). */
export async function openScene(seed: number): Promise<ReconcilerScene> {
  const server = await startTestServer({ random: seededRandom(seed) });
  const client = createApiClient({ baseUrl: server.url, apiKey: server.apiKey, retry: false });
  const { dir, cleanup } = await tempDir();
  return {
    server,
    client,
    dir,
    async close() {
      await client.close();
      await server.close();
      await cleanup();
    },
  };
}

/** A cycle's input for `dir`, its link never moving. */
export function cycleInput(
  dir: string,
  reason: TriggerReason,
  extra: Partial<ReconcileInput> = {},
): ReconcileInput {
  return {
    dir,
    revision: undefined,
    reason,
    signal: new AbortController().signal,
    assertCurrent: async () => undefined,
    ...extra,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sums a Prometheus counter's samples whose labels include every pair of `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// The live state, read straight from the server (not through the proxy)

export function apiClient(url: string, apiKey: string): ApiClient {
  return createApiClient({ baseUrl: url, apiKey, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
}

export async function liveState(client: ApiClient): Promise<LiveSnapshot> {
  return observe(client);
}

/** `tls:NAME` / `https:NAME` of every edge owned by `owner`, sorted. */
export function ownedEdges(live: LiveSnapshot, owner = 'default'): string[] {
  const names: string[] = [];
  for (const [kind, edges] of [
    ['tls', live.tlsEdges],
    ['https', live.httpsEdges],
  ] as const) {
    for (const e of edges) {
      const meta = parseStoredMetadata(e.metadata);
      if (meta?.owner === owner) names.push(`${kind}:${meta.name}`);
    }
  }
  return names.sort();
}

// ---------------------------------------------------------------------------------------------
// Manifests

export async function writeYaml(file: string, docs: readonly Record<string, unknown>[]) {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, docs.map((d) => stringify(d)).join('---\n'));
}

export function tlsEdge(name: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'TLSEdge',
    name,
    description: `tcp ${name}`,
    metadata: { team: 'data' },
    hostports: [`${name}.example.com:443`],
    backend: { backend_id: `bkdtg_${name.replace(/[^a-z0-9]/g, '')}` },
    ...extra,
  };
}

export function httpsEdge(name: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'HTTPSEdge',
    name,
    description: `web ${name}`,
    metadata: { team: 'web' },
    hostports: [`${name}.example.com:443`],
    routes: [
      {
        match_type: 'path_prefix',
        match: '/',
        backend: { backend_id: 'bkdhr_web' },
        compression: {},
      },
    ],
    ...extra,
  };
}
