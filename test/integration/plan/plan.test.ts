/**
 * The planner against the local Edge API server over real HTTP: plan on an empty account, the
 * convergence invariant (apply the plan's operations, plan again: nothing), foreign edges,
 * drift made directly through the API, hostport moves and auth swaps, and a property test of
 * convergence over generated manifests.
 */
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { observe } from '../../../src/api/observe.js';
import type { ApiClient } from '../../../src/api/types.js';
import { preparePlan } from '../../../src/engine/pipeline.js';
import { ManifestError } from '../../../src/errors.js';
import type { Plan } from '../../../src/plan/model.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { startTestServer } from '../../helpers/server.js';
import { desiredSet, httpsManifest, routeManifest, tlsManifest } from '../../unit/plan/builders.js';
import { type Api, call, executePlan, removeDir, tempDir, writeManifests } from './helpers.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../../config-examples/edges');

type Server = Awaited<ReturnType<typeof startTestServer>>;
let server: Server;
let api: Api;
let client: ApiClient;
const dirs: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  api = { url: server.url, apiKey: server.apiKey };
  client = createApiClient({ baseUrl: server.url, apiKey: server.apiKey, retry: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

afterEach(async () => {
  for (const d of dirs.splice(0)) await removeDir(d);
  // Every test starts from an empty account: delete everything through the API.
  const live = await observe(client);
  await Promise.all([
    ...live.tlsEdges.map((e) => call(api, 'DELETE', `/edges/tls/${e.id}`)),
    ...live.httpsEdges.map((e) => call(api, 'DELETE', `/edges/https/${e.id}`)),
    ...live.botUsers.map((b) => call(api, 'DELETE', `/bot_users/${b.id}`)),
  ]);
});

async function manifests(files: Record<string, string>): Promise<string> {
  const dir = await tempDir();
  dirs.push(dir);
  await writeManifests(dir, files);
  return dir;
}

async function plan(
  dir: string,
  options: { owner?: string; allowEmpty?: boolean } = {},
): Promise<Plan> {
  return (await preparePlan({ dir, client, env: {}, ...options })).plan;
}

const pending = (p: Plan) =>
  p.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.address}`);

describe('config-examples/edges', () => {
  it('plans creates on an empty account, converges, and then plans nothing', async () => {
    const first = await plan(EXAMPLES);
    expect(first.summary.create).toBeGreaterThan(10);
    expect(first.summary).toMatchObject({ update: 0, delete: 0, adopt: 0 });
    await executePlan(api, first);

    const second = await plan(EXAMPLES);
    expect(pending(second)).toEqual([]);
    expect(second.blocked).toEqual([]);
    expect(second.summary.noop).toBe(first.summary.create);
    // Nothing changed in between: the same fingerprint of the live state.
    expect((await plan(EXAMPLES)).fingerprint).toEqual(second.fingerprint);
  });
});

const SHOP = `
kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: bkdhr_1 }
    oauth:
      provider:
        google: { client_id: cid, client_secret: { env: SECRET }, email_domains: [example.com] }
  - match_type: exact_path
    match: /hooks
    webhook_verification: { provider: github, secret: hooksecret }
---
kind: TLSEdge
name: db
hostports: [10.0.0.5:5432]
backend: { backend_id: bkdtg_1 }
ip_restriction: { ip_policy_ids: [ipp_1, ipp_2] }
`;

describe('one YAML reader', () => {
  it('an unrelated document with an anchor added to a file changes no value: nothing to do', async () => {
    // Valid however `+0o17` and `0b1010` are read: nothing else in the file forces a reading.
    const edge =
      'kind: TLSEdge\nname: tp\nhostports: [tp.example.com:443]\ntraffic_policy: { value: { on_tcp_connect: [{ v: +0o17, w: 0b1010 }] } }\n';
    const other = 'kind: TLSEdge\nname: other\ndescription: &d x\nmetadata: { note: *d }\n';
    const dir = await manifests({ 'a.yaml': edge });
    await executePlan(api, await plan(dir));
    await writeManifests(dir, { 'a.yaml': `${edge}---\n${other}` });
    const after = await plan(dir);
    expect(pending(after)).toEqual(['create tls_edge.other']);
    await executePlan(api, after);
    expect(pending(await plan(dir))).toEqual([]);
  });
});

describe('drift and ownership', () => {
  it('shows drift made directly through the API, and converges again', async () => {
    const dir = await manifests({ 'shop.yaml': SHOP });
    const env = { SECRET: 'googlesecret' };
    await executePlan(api, (await preparePlan({ dir, client, env })).plan);
    const live = await observe(client);
    const shop = live.httpsEdges[0];
    const db = live.tlsEdges[0];
    if (shop === undefined || db === undefined) throw new Error('edges missing');
    const root = shop.routes.find((r) => r.match === '/');
    const hooks = shop.routes.find((r) => r.match === '/hooks');
    if (root === undefined || hooks === undefined) throw new Error('routes missing');

    // Drift: a module changed, a module removed, a module added, a route deleted, a hostport added.
    await call(api, 'PUT', `/edges/tls/${db.id}/ip_restriction`, { ip_policy_ids: ['ipp_1'] });
    await call(api, 'DELETE', `/edges/tls/${db.id}/backend`);
    await call(api, 'PUT', `/edges/https/${shop.id}/routes/${root.id}/compression`, {});
    await call(api, 'DELETE', `/edges/https/${shop.id}/routes/${hooks.id}`);
    await call(api, 'PATCH', `/edges/https/${shop.id}`, {
      hostports: ['shop.example.com:443', 'x.example.com:443'],
    });

    const drift = (await preparePlan({ dir, client, env })).plan;
    expect(pending(drift)).toEqual([
      'update https_edge.shop',
      'update https_edge.shop.route["/"]',
      'create https_edge.shop.route["/hooks"]',
      'update tls_edge.db',
    ]);
    const dbChange = drift.changes.find((c) => c.address === 'tls_edge.db');
    expect(dbChange?.operations.map((o) => [o.method, o.path, o.body])).toEqual([
      [
        'PATCH',
        `/edges/tls/${db.id}`,
        {
          backend: { enabled: true, backend_id: 'bkdtg_1' },
          ip_restriction: { enabled: true, ip_policy_ids: ['ipp_1', 'ipp_2'] },
        },
      ],
    ]);
    const rootChange = drift.changes.find((c) => c.address === 'https_edge.shop.route["/"]');
    expect(rootChange?.operations.map((o) => `${o.method} ${o.path}`)).toEqual([
      `DELETE /edges/https/${shop.id}/routes/${root.id}/compression`,
    ]);
    await executePlan(api, drift);
    expect(pending((await preparePlan({ dir, client, env })).plan)).toEqual([]);

    // A changed secret is a change (the value never shows: it is masked in every rendering).
    const rotated = (await preparePlan({ dir, client, env: { SECRET: 'rotated' } })).plan;
    expect(pending(rotated)).toEqual(['update https_edge.shop.route["/"]']);
    expect(rotated.changes.find((c) => c.action === 'update')?.fields).toEqual([
      {
        path: 'oauth.provider.google.client_secret',
        before: 'googlesecret',
        after: 'rotated',
        sensitive: true,
      },
    ]);
  });

  it('never touches foreign edges and reports their hostports as conflicts', async () => {
    const foreign = (await call(api, 'POST', '/edges/tls', {
      metadata: JSON.stringify({ 'edgesync/owner': 'team-b', 'edgesync/name': 'db' }),
      hostports: ['10.0.0.5:5432'],
    })) as { id: string };
    const unowned = (await call(api, 'POST', '/edges/https', {
      metadata: 'made by hand',
      hostports: ['hand.example.com:443'],
    })) as { id: string };
    const dir = await manifests({ 'shop.yaml': SHOP });
    const p = (await preparePlan({ dir, client, env: { SECRET: 's' } })).plan;
    expect(pending(p)).toEqual([
      'create https_edge.shop',
      'create https_edge.shop.route["/"]',
      'create https_edge.shop.route["/hooks"]',
    ]);
    expect(p.blocked).toEqual([
      {
        address: 'tls_edge.db',
        kind: 'conflict',
        reason: `hostport 10.0.0.5:5432 is held by TLS edge ${foreign.id} which belongs to owner "team-b"; not attempted`,
      },
    ]);
    expect(JSON.stringify(p)).not.toContain(unowned.id);
    await executePlan(api, p);
    const after = await observe(client);
    expect(after.tlsEdges.map((e) => e.id)).toEqual([foreign.id]);
    expect(after.httpsEdges.find((e) => e.id === unowned.id)?.metadata).toBe('made by hand');

    // Another owner on the same account sees ours as foreign, and manages its own edge.
    const other = (await preparePlan({ dir, client, env: { SECRET: 's' }, owner: 'team-b' })).plan;
    const shopId = after.httpsEdges.find((e) => e.id !== unowned.id)?.id;
    expect(other.changes.map((c) => `${c.action} ${c.address} ${c.id}`)).toEqual([
      `update tls_edge.db ${foreign.id}`,
    ]);
    expect(other.blocked).toEqual([
      {
        address: 'https_edge.shop',
        kind: 'conflict',
        reason: `hostport shop.example.com:443 is held by HTTPS edge ${shopId} which belongs to owner "default"; not attempted`,
      },
    ]);
  });

  it('makes no plan when a manifest is invalid', async () => {
    const dir = await manifests({ 'shop.yaml': SHOP });
    await expect(preparePlan({ dir, client, env: {} })).rejects.toBeInstanceOf(ManifestError);
  });

  it('adopts an unowned edge named by id:', async () => {
    const legacy = (await call(api, 'POST', '/edges/tls', {
      metadata: 'legacy',
      hostports: ['legacy.example.com:443'],
      backend: { backend_id: 'bkdtg_9' },
    })) as { id: string };
    const dir = await manifests({
      'legacy.yaml': `kind: TLSEdge\nname: legacy\nid: ${legacy.id}\nhostports: [legacy.example.com:443]\nbackend: { backend_id: bkdtg_9 }\n`,
    });
    const p = await plan(dir);
    expect(pending(p)).toEqual(['adopt tls_edge.legacy']);
    expect(p.changes[0]?.operations).toHaveLength(1);
    await executePlan(api, p);
    expect(pending(await plan(dir))).toEqual([]);
  });
});

describe('ordering against the real server', () => {
  it('moves a hostport between edges and swaps route auth fail-closed, converging', async () => {
    const before = desiredSet({
      tls: [
        tlsManifest({ name: 'a', hostports: ['one.example.com:443'] }),
        tlsManifest({ name: 'b', hostports: ['two.example.com:443'] }),
        tlsManifest({ name: 'gone', hostports: ['three.example.com:443'] }),
      ],
      https: [
        httpsManifest({
          name: 'w',
          routes: [
            routeManifest({
              match: '/',
              backend: { backend_id: 'bkdhr_1' },
              oauth: { provider: { google: {} } },
            }),
          ],
        }),
      ],
    });
    await executePlan(api, buildPlan(before, await observe(client)));
    const after = desiredSet({
      tls: [
        tlsManifest({ name: 'a', hostports: ['two.example.com:443'] }),
        tlsManifest({ name: 'b', hostports: ['one.example.com:443', 'three.example.com:443'] }),
      ],
      https: [
        httpsManifest({
          name: 'w',
          routes: [
            routeManifest({
              match: '/',
              backend: { backend_id: 'bkdhr_1' },
              saml: { idp_metadata: '<EntityDescriptor/>' },
            }),
          ],
        }),
      ],
    });
    const p = buildPlan(after, await observe(client));
    expect(
      p.changes.flatMap((c) => c.operations.filter((o) => o.phase === 'release')),
    ).toHaveLength(3);
    await executePlan(api, p);
    expect(pending(buildPlan(after, await observe(client)))).toEqual([]);
  });

  it('converges for generated manifests (property, against the server)', async () => {
    const route = fc.record({
      match: fc.constantFrom('/', '/a', '/b'),
      backend: fc.option(fc.record({ backend_id: fc.constantFrom('bkdhr_1', 'bkdtg_2') }), {
        nil: undefined,
      }),
      auth: fc.constantFrom('none', 'oauth', 'oidc', 'saml'),
      headers: fc.option(
        fc.dictionary(fc.constantFrom('X-A', 'x-b', 'Server'), fc.constantFrom('1', 'two')),
        { nil: undefined },
      ),
      cb: fc.option(
        fc.record({
          tripped_duration: fc.constant(10),
          rolling_window: fc.constant(10),
          num_buckets: fc.constant(10),
          volume_threshold: fc.integer({ min: 1, max: 50 }),
        }),
        { nil: undefined },
      ),
    });
    const edge = fc.record({
      name: fc.constantFrom('e1', 'e2', 'e3'),
      hostports: fc.uniqueArray(
        fc.constantFrom('p.example.com:443', 'Q.example.com:443', 'r.example.com:443'),
        { maxLength: 2, selector: (h) => h.toLowerCase() },
      ),
      routes: fc.uniqueArray(route, { selector: (r) => r.match, maxLength: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(edge, { selector: (e) => e.name, minLength: 1, maxLength: 2 }),
        async (edges) => {
          // Hostports must be unique across the set, as the manifest validator requires.
          const seen = new Set<string>();
          const desired = desiredSet({
            https: edges.map((e) =>
              httpsManifest({
                name: e.name,
                hostports: e.hostports.filter(
                  (h) => !seen.has(h.toLowerCase()) && seen.add(h.toLowerCase()),
                ),
                routes: e.routes.map((r, i) => {
                  const fields: Record<string, unknown> = { match: r.match };
                  // At most one route of an edge may carry an auth module.
                  const authBefore = e.routes.slice(0, i).some((p) => p.auth !== 'none');
                  if (r.backend !== undefined) fields.backend = r.backend;
                  if (r.headers !== undefined) fields.response_headers = { add: r.headers };
                  if (r.cb !== undefined) fields.circuit_breaker = r.cb;
                  if (r.auth === 'oauth' && !authBefore)
                    fields.oauth = { provider: { github: { organizations: ['acme'] } } };
                  if (r.auth === 'oidc' && !authBefore)
                    fields.oidc = {
                      issuer: 'https://id.example.com',
                      client_id: 'c',
                      client_secret: 's',
                    };
                  if (r.auth === 'saml' && !authBefore)
                    fields.saml = { idp_metadata: '<EntityDescriptor/>' };
                  return routeManifest(fields as { match: string });
                }),
              }),
            ),
          });
          // From whatever the previous run left: plan, apply, and the next plan is empty.
          await executePlan(api, buildPlan(desired, await observe(client)));
          expect(pending(buildPlan(desired, await observe(client)))).toEqual([]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
