/**
 * After an apply, only what was touched is read back (GET by ID), never the whole account again.
 */

import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NO_CALLS } from '../../../src/api/index.js';
import { verifyTouched } from '../../../src/apply/verify.js';
import { buildPlan } from '../../../src/plan/plan.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

/** One list per registered kind (and child collection). */
const LISTS = Object.keys(NO_CALLS).length;

let server: RunningServer & { apiKey: string };
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const edge = (name: string, description = 'v1') => ({
  kind: 'TLSEdge',
  name,
  description,
  hostports: [`${name}.example.com:443`],
});

it('one changed edge among 150: the lists, one PATCH and one GET by ID', async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const edges = path.join(dir, 'edges');
    const names = Array.from({ length: 150 }, (_, i) => `e${i}`);
    await writeManifests(
      edges,
      names.map((n) => edge(n)),
    );
    const env = apiEnv(server.url, server.apiKey);
    expect((await runCli(['apply', edges, '--yes'], { env })).code).toBe(0);

    await writeManifests(
      edges,
      names.map((n) => edge(n, n === 'e7' ? 'v2' : 'v1')),
    );
    const before = { ...server.requests };
    const r = await runCli(['apply', edges, '--yes'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('converged');
    const delta = (m: string) => (server.requests[m] ?? 0) - (before[m] ?? 0);
    // Observation: 2 pages of TLS edges, 1 of HTTPS edges, 1 of bot users, 1 of endpoints, 1
    // of every other kind; then the PATCH; then one GET of the edge it patched. Listing again
    // would be as many GETs as the observation.
    expect(delta('GET')).toBe(LISTS + 1 + 1);
    expect(delta('PATCH')).toBe(1);
  } finally {
    await cleanup();
  }
});

it('sees created, changed and deleted resources, and leaves the others as they were', async () => {
  const client = apiClient(server.url, server.apiKey);
  const live = await snapshotOf(server.url, server.apiKey);
  const a = await client.createTlsEdge({ hostports: ['x.example.com:443'] });
  const plan = buildPlan({ tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [] }, live, {
    allowEmpty: true,
  });
  const some = live.tlsEdges[0];
  expect(some).toBeDefined();
  if (some === undefined) return;
  await client.deleteTlsEdge(some.id);
  // Pretend the plan touched `some` (deleted) and created `a`.
  const touchedPlan = {
    ...plan,
    changes: [
      {
        address: 'tls_edge.gone',
        kind: 'tls_edge' as const,
        name: 'gone',
        root: 'tls_edge.gone',
        action: 'delete' as const,
        reason: 'test',
        id: some.id,
        fields: [],
        modules: [],
        operations: [
          {
            method: 'DELETE' as const,
            target: { kind: 'edge' as const, edge_kind: 'tls' as const, id: some.id },
            path: `/edges/tls/${some.id}`,
            phase: 'delete' as const,
            description: 'x',
            sensitive_paths: [],
          },
        ],
      },
      {
        address: 'tls_edge.new',
        kind: 'tls_edge' as const,
        name: 'new',
        root: 'tls_edge.new',
        action: 'create' as const,
        reason: 'test',
        fields: [],
        modules: [],
        operations: [
          {
            method: 'POST' as const,
            target: { kind: 'edges' as const, edge_kind: 'tls' as const },
            path: '/edges/tls',
            phase: 'main' as const,
            description: 'x',
            sensitive_paths: [],
            binds: 'tls_edge.new',
          },
        ],
      },
    ],
  };
  const view = await verifyTouched(client, touchedPlan, live, {
    created: { 'tls_edge.new': a.id },
  });
  const ids = view.tlsEdges.map((e) => e.id);
  expect(ids).toContain(a.id);
  expect(ids).not.toContain(some.id);
  expect(view.tlsEdges.length).toBe(live.tlsEdges.length);
  await client.close();
});

it('a cold apply of many edges lists once more instead: fewer calls than one GET each', async () => {
  const { dir, cleanup } = await tempDir();
  const fresh = await startTestServer();
  try {
    const edges = path.join(dir, 'cold');
    await writeManifests(
      edges,
      Array.from({ length: 120 }, (_, i) => edge(`c${i}`)),
    );
    const r = await runCli(['apply', edges, '--yes'], { env: apiEnv(fresh.url, fresh.apiKey) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('converged');
    // The empty account's lists (one per kind), then 120 POSTs, then the lists again, 120 TLS
    // edges in 2 pages, instead of 120 GETs by ID.
    expect(fresh.requests.GET).toBe(LISTS + LISTS + 1);
    expect(fresh.requests.POST).toBe(120);
  } finally {
    await fresh.close();
    await cleanup();
  }
});
