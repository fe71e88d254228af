/**
 * The applier's scenarios against the local server over HTTP: each guard of design section 3,
 * the hostport move between two managed edges, the fail-closed auth swap (polled while the
 * apply runs), and a resource vanishing between plan and apply.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
import { startTestServer } from '../../helpers/server.js';
import {
  apiClient,
  apiEnv,
  duplicates,
  runCli,
  snapshotOf,
  tempDir,
  writeManifests,
} from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const edge = (name: string, hostports: string[], extra: Record<string, unknown> = {}) => ({
  kind: 'HTTPSEdge',
  name,
  hostports,
  routes: [{ match_type: 'path_prefix', match: '/', backend: { backend_id: 'bkdhr_x' } }],
  ...extra,
});

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let client: ApiClient;
let env: Record<string, string>;
let dir: string;

beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir();
  client = apiClient(server.url, server.apiKey);
  env = apiEnv(server.url, server.apiKey);
  dir = path.join(tmp.dir, 'manifests');
});
afterEach(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

async function apply(docs: Record<string, unknown>[], ...flags: string[]) {
  await writeManifests(dir, docs);
  return runCli(['apply', dir, '--yes', ...flags], { env });
}

async function ownedNames(): Promise<string[]> {
  const live = await snapshotOf(server.url, server.apiKey);
  return [...live.httpsEdges, ...live.tlsEdges]
    .map((e) => parseStoredMetadata(e.metadata)?.name ?? '?')
    .sort();
}

describe('guards', () => {
  it('an empty manifest set deletes nothing without --allow-empty', async () => {
    expect((await apply([edge('a', ['a.example:443']), edge('b', [])])).code).toBe(0);
    const refused = await apply([]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--allow-empty/);
    expect(await ownedNames()).toEqual(['a', 'b']);
    const allowed = await apply([], '--allow-empty');
    expect(allowed.code).toBe(0);
    expect(await ownedNames()).toEqual([]);
  });

  it('refuses more edge deletions than --max-deletes, and applies nothing else', async () => {
    const many = Array.from({ length: 12 }, (_, i) => edge(`e${i}`, []));
    expect((await apply(many)).code).toBe(0);
    const keep = [edge('e0', [], { description: 'changed' })];
    const refused = await apply(keep);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/11 edge deletions exceed the limit of 10/);
    const live = await snapshotOf(server.url, server.apiKey);
    expect(live.httpsEdges).toHaveLength(12);
    expect(live.httpsEdges.every((e) => e.description !== 'changed')).toBe(true);
    const allowed = await apply(keep, '--max-deletes', '11');
    expect(allowed.code).toBe(0);
    expect(await ownedNames()).toEqual(['e0']);
  });

  it('never deletes a protected edge; the rest of the plan is applied', async () => {
    expect((await apply([edge('keep', [], { protect: true }), edge('other', [])])).code).toBe(0);
    const run = await apply([edge('other', [], { description: 'changed' })]);
    expect(run.stderr).toMatch(/Kept as they are \(protected with the manifest removed/);
    expect(run.stderr).toContain('converged');
    expect(run.code).toBe(0);
    expect(await ownedNames()).toEqual(['keep', 'other']);
  });

  it('never touches a foreign edge: a hostport it holds blocks only the edge that wants it', async () => {
    const foreign = await client.createHttpsEdge({
      metadata: JSON.stringify({ 'edgesync/owner': 'team-b', 'edgesync/name': 'x' }),
      hostports: ['taken.example:443'],
    });
    const before = await client.getHttpsEdge(foreign.id);
    const run = await apply([edge('wants', ['taken.example:443']), edge('fine', [])]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/taken.example:443/);
    expect(await client.getHttpsEdge(foreign.id)).toEqual(before);
    expect(await ownedNames()).toEqual(['fine', 'x']);
  });

  it('adopts an unowned edge named by id:, shown as adopt', async () => {
    const hand = await client.createTlsEdge({ hostports: ['hand.example:443'] });
    const run = await apply([
      { kind: 'TLSEdge', name: 'hand', id: hand.id, hostports: ['hand.example:443'] },
    ]);
    expect(run.stderr).toMatch(/adopt/);
    expect(run.code).toBe(0);
    const meta = parseStoredMetadata((await client.getTlsEdge(hand.id)).metadata);
    expect(meta).toMatchObject({ owner: 'default', name: 'hand' });
  });

  it('deletes nothing when another operation of the cycle failed (a vanished edge)', async () => {
    await writeManifests(dir, [edge('a', []), edge('gone', [])]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);
    // Desired: a changed, `gone` removed (a deletion).
    await writeManifests(dir, [edge('a', [], { description: 'changed' })]);
    const loaded = await loadManifests(dir, { env: {} });
    if (!loaded.ok) throw new Error('manifests invalid');
    const live = await snapshotOf(server.url, server.apiKey);
    const plan = buildPlan(loaded.set, live);
    // Someone deletes `a` between plan and apply: its PATCH meets a 404.
    const a = live.httpsEdges.find((e) => parseStoredMetadata(e.metadata)?.name === 'a');
    await client.deleteHttpsEdge(a?.id ?? '');
    const outcome = await applyAndVerify(plan, {
      client,
      live,
      replan: async () => {
        const l = await snapshotOf(server.url, server.apiKey);
        return { live: l, plan: buildPlan(loaded.set, l) };
      },
    });
    expect(outcome.result.vanished).toEqual(['https_edge.a']);
    expect(outcome.result.errors[0]?.message).toBe(
      'https_edge.a vanished; it will be recreated on the next run',
    );
    expect(outcome.result.deletesSkipped).toBe(true);
    expect(outcome.converged).toBe(false);
    expect(await ownedNames()).toEqual(['gone']);
    // The next run recreates it and deletes the other.
    const next = await runCli(['apply', dir, '--yes'], { env });
    expect(next.code).toBe(0);
    expect(await ownedNames()).toEqual(['a']);
  });
});

describe('ordering', () => {
  it('moves hostports between two managed edges in one apply', async () => {
    const h1 = 'one.example:443';
    const h2 = 'two.example:443';
    const h3 = 'three.example:443';
    expect((await apply([edge('a', [h1]), edge('b', [h2]), edge('old', [h3])])).code).toBe(0);
    // Swap a and b; move h3 from an edge being deleted to a new one.
    const run = await apply([edge('a', [h2]), edge('b', [h1]), edge('new', [h3])]);
    expect(run.stderr).toContain('converged');
    expect(run.code).toBe(0);
    const live = await snapshotOf(server.url, server.apiKey);
    const held = Object.fromEntries(
      live.httpsEdges.map((e) => [parseStoredMetadata(e.metadata)?.name, e.hostports]),
    );
    expect(held).toEqual({ a: [h2], b: [h1], new: [h3] });
  });

  it('takes a route offline before switching its auth kind: never a backend without auth', async () => {
    const route = (auth: Record<string, unknown>) => ({
      kind: 'HTTPSEdge',
      name: 'app',
      hostports: ['app.example:443'],
      routes: [
        { match_type: 'path_prefix', match: '/', backend: { backend_id: 'bkdhr_app' }, ...auth },
      ],
    });
    const oauth = { oauth: { provider: { google: { email_domains: ['example.com'] } } } };
    const oidc = {
      oidc: { issuer: 'https://id.example.com', client_id: 'c', client_secret: 's' },
    };
    const saml = { saml: { idp_metadata: '<EntityDescriptor/>' } };
    expect((await apply([route(oauth)])).code).toBe(0);
    const live = await snapshotOf(server.url, server.apiKey);
    const edgeId = live.httpsEdges[0]?.id ?? '';
    const routeId = live.httpsEdges[0]?.routes[0]?.id ?? '';

    server.knobs.latencyMs = { min: 20, max: 40 };
    for (const next of [oidc, saml, oauth]) {
      let polling = true;
      const unsafe: string[] = [];
      let polls = 0;
      const poller = (async () => {
        const watch = apiClient(server.url, server.apiKey);
        while (polling) {
          const r = await watch.getRoute(edgeId, routeId);
          polls += 1;
          if (r.backend !== null && r.oauth === null && r.oidc === null && r.saml === null) {
            unsafe.push(`poll ${polls}: backend without auth`);
          }
        }
        await watch.close();
      })();
      const run = await apply([route(next)]);
      polling = false;
      await poller;
      expect(run.code).toBe(0);
      expect(unsafe).toEqual([]);
      expect(polls).toBeGreaterThan(2);
      const after = await client.getRoute(edgeId, routeId);
      expect(after.backend?.backend.id).toBe('bkdhr_app');
      expect(Object.keys(next).every((k) => after[k as 'oauth'] !== null)).toBe(true);
    }
    server.knobs.latencyMs = undefined;
    expect(duplicates(await snapshotOf(server.url, server.apiKey))).toEqual([]);
  });
});
