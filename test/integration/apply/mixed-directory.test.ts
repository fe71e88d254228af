/**
 * One directory of every kind (TLS and HTTPS edges, cloud endpoints, bot users; one endpoint's
 * OAuth secret read from the environment) through `edgesync apply` against the local server:
 * it converges in ONE apply (no 4xx, the next plan empty, a second apply writes nothing), and a
 * second state editing each kind (an edge's host handed to an endpoint, a policy edited, a URL
 * moved in place, a route changed, a bot user deactivated and another removed) converges in one apply
 * again. The secret never reaches any output.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { residualOf } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiEnv, duplicates, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

const SECRET = 'oauth-client-secret-7f3a9c';
const ENV = { CE_CLIENT_SECRET: SECRET };

const web = (extra: Record<string, unknown>[] = []) => ({
  kind: 'CloudEndpoint',
  name: 'web',
  url: 'https://app.example.com',
  description: 'the app',
  metadata: { team: 'web' },
  traffic_policy: {
    on_http_request: [
      {
        actions: [
          {
            type: 'oauth',
            config: {
              provider: 'google',
              client_id: 'app.apps.example',
              client_secret: { env: 'CE_CLIENT_SECRET' },
            },
          },
        ],
      },
      ...extra,
      { actions: [{ type: 'forward-internal', config: { url: 'https://app.internal' } }] },
    ],
  },
});

const STATE_1 = [
  {
    kind: 'HTTPSEdge',
    name: 'shop',
    hostports: ['shop.example.com:443'],
    routes: [{ match_type: 'path_prefix', match: '/', backend: { backend_id: 'bkdhr_shop' } }],
  },
  {
    kind: 'TLSEdge',
    name: 'db',
    hostports: ['db.example.com:443'],
    backend: { backend_id: 'bkdtg_db' },
  },
  web(),
  {
    kind: 'CloudEndpoint',
    name: 'api',
    url: 'tls://api.example.com:443',
    // The policy as a YAML string, as some people write it.
    traffic_policy: 'on_tcp_connect:\n  - actions:\n      - type: deny\n',
  },
  { kind: 'BotUser', name: 'ci', active: true },
  { kind: 'BotUser', name: 'deploy', active: true },
];

const STATE_2 = [
  {
    kind: 'HTTPSEdge',
    name: 'shop',
    hostports: ['shop.example.com:443', 'www.shop.example.com:443'],
    routes: [
      { match_type: 'path_prefix', match: '/', backend: { backend_id: 'bkdhr_shop2' } },
      { match_type: 'exact_path', match: '/health', compression: { enabled: true } },
    ],
  },
  // The TLS edge is gone: an endpoint takes its host and port (the edge releases it first).
  {
    kind: 'CloudEndpoint',
    name: 'db',
    url: 'tls://db.example.com:443',
    traffic_policy: {
      on_tcp_connect: [
        { actions: [{ type: 'forward-internal', config: { url: 'tls://db.internal:5432' } }] },
      ],
    },
  },
  web([{ actions: [{ type: 'add-headers', config: { headers: { 'x-team': 'web' } } }] }]),
  {
    kind: 'CloudEndpoint',
    name: 'api',
    // A new host, the same scheme: the endpoint moves in place (one PATCH, the same ID).
    url: 'tls://api2.example.com:443',
    traffic_policy: 'on_tcp_connect:\n  - actions:\n      - type: deny\n',
  },
  { kind: 'BotUser', name: 'ci', active: false },
  { kind: 'BotUser', name: 'deploy', ensure: 'absent' },
];

describe('a mixed directory (edges, cloud endpoints, bot users) through the CLI', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir('edgesync-mixed-');
    env = { ...ENV, ...apiEnv(server.url, server.apiKey) };
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  const refused = () =>
    Object.entries(server.statuses).filter(([status]) => status.startsWith('4'));

  /** One apply converges, the next plan is empty, and applying again writes nothing. */
  async function convergesInOne(dir: string) {
    const applied = await runCli(['apply', '--yes', dir], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain('converged');
    expect(refused()).toEqual([]);
    for (const text of [applied.stdout, applied.stderr]) expect(text).not.toContain(SECRET);

    const live = await snapshotOf(server.url, server.apiKey);
    const loaded = await loadManifests(dir, { env: ENV });
    if (!loaded.ok) throw new Error('the manifests are invalid');
    const residual = residualOf(buildPlan(loaded.set, live), live);
    expect(residual.changes).toEqual([]);
    expect(residual.blocked).toEqual([]);
    expect(duplicates(live)).toEqual([]);

    const writes = writesAt(server);
    const again = await runCli(['apply', '--yes', dir], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(writesAt(server)).toBe(writes);
    return live;
  }

  const names = (records: readonly { metadata?: string | null | undefined }[]) =>
    records.map((r) => parseStoredMetadata(r.metadata)?.name).sort();

  it('converges in one apply, then again after an edit of every kind', async () => {
    const dir = path.join(tmp.dir, 'mixed');
    await writeManifests(dir, STATE_1);
    const first = await convergesInOne(dir);
    expect(names(first.tlsEdges)).toEqual(['db']);
    expect(names(first.httpsEdges)).toEqual(['shop']);
    expect(names(first.cloudEndpoints)).toEqual(['api', 'web']);
    expect(first.botUsers.map((b) => b.name).sort()).toEqual(['ci', 'deploy']);
    const oldApi = first.cloudEndpoints.find((e) => e.url === 'tls://api.example.com:443');

    await writeManifests(dir, STATE_2);
    const second = await convergesInOne(dir);
    expect(second.tlsEdges).toEqual([]);
    expect(second.httpsEdges[0]?.routes.map((r) => r.match).sort()).toEqual(['/', '/health']);
    expect(second.cloudEndpoints.map((e) => e.url).sort()).toEqual([
      'https://app.example.com',
      'tls://api2.example.com:443',
      'tls://db.example.com:443',
    ]);
    const api = second.cloudEndpoints.find((e) => e.url === 'tls://api2.example.com:443');
    expect(api?.id).toBe(oldApi?.id);
    const webLive = second.cloudEndpoints.find((e) => e.url === 'https://app.example.com');
    // The secret reached the service (resolved from the environment), and only there.
    expect(webLive?.traffic_policy).toContain(SECRET);
    expect(webLive?.traffic_policy).toContain('x-team');
    expect(second.botUsers.map((b) => [b.name, b.active])).toEqual([['ci', false]]);
  });
});
