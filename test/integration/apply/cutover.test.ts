/**
 * The cut-over from edges to cloud endpoints, against the local server over HTTP: one edge at a
 * time (its delete answered, then its endpoints' creates), also with parallel workers; a create
 * refused after its edge went stops the cut-over and names the unserved host and port (text,
 * `apply --output json`, the daemon's cycle error), and applying the edges again restores it;
 * read-only edges write nothing; the shipped examples, migrated, converge.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClient, observe } from '../../../src/api/index.js';
import { executePlan } from '../../../src/apply/executor.js';
import { createReconciler } from '../../../src/engine/index.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { NAMED_IP_POLICIES } from '../../helpers/live-ip-policies.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { desiredSet, endpointManifest } from '../../unit/plan/builders.js';
import { apiClient, apiEnv, runCli, tempDir, writeManifests } from './helpers.js';
import { startRacingProxy } from './proxy.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const OURS = (name: string) => storedMetadata({}, { owner: 'default', name, protect: false });
const BACKEND = 'bkdhr_2OOHLE6ESrthOmxYlInonfwYtzS';
const POLICY = { on_http_request: [{ actions: [{ type: 'deny' }] }] };

let server: Server;
let client: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  tmp = await tempDir('edgesync-cutover-');
});
afterEach(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

async function start(opts: Parameters<typeof startTestServer>[0] = {}): Promise<void> {
  server = await startTestServer({ ipPolicies: NAMED_IP_POLICIES, ...opts });
  client = apiClient(server.url, server.apiKey);
}

/** Our HTTPS edges `e<i>` on `e<i>.example.com:443`, and the endpoints that replace them. */
async function edges(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await client.createHttpsEdge({ hostports: [`e${i}.example.com:443`], metadata: OURS(`e${i}`) });
  }
}
const replacements = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    endpointManifest({ name: `e${i}`, url: `https://e${i}.example.com`, traffic_policy: POLICY }),
  );

/**
 * The client, recording when each edge delete and endpoint create was sent and answered, by
 * host (`names`: edge ID -> its host).
 */
function recording(
  inner: ApiClient,
  names: ReadonlyMap<string, string> = new Map(),
): { client: ApiClient; events: string[] } {
  const events: string[] = [];
  const host = (url: string) => url.replace(/^https:\/\//, '');
  const deleteHttpsEdge: ApiClient['deleteHttpsEdge'] = async (id) => {
    events.push(`send DELETE ${names.get(id) ?? id}`);
    await inner.deleteHttpsEdge(id);
    events.push(`done DELETE ${names.get(id) ?? id}`);
  };
  const createEndpoint: ApiClient['createEndpoint'] = async (body) => {
    events.push(`send POST ${host(body.url)}`);
    const created = await inner.createEndpoint(body);
    events.push(`done POST ${host(body.url)}`);
    return created;
  };
  const client = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'deleteHttpsEdge') return deleteHttpsEdge;
      if (prop === 'createEndpoint') return createEndpoint;
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { client, events };
}

async function cutOver(n: number, concurrency: number) {
  const live = await observe(client);
  const names = new Map(
    live.httpsEdges.map((e) => [e.id, (e.hostports[0] ?? '').replace(/:443$/, '')]),
  );
  const rec = recording(client, names);
  const plan = buildPlan(desiredSet({ endpoints: replacements(n) }), live);
  const result = await executePlan(plan, { client: rec.client, concurrency, guards: { live } });
  return { plan, result, events: rec.events };
}

describe('cut-over: one edge at a time', () => {
  it('with one worker: edge delete, then its endpoint, edge by edge (not all deletes first)', async () => {
    await start();
    await edges(3);
    const { plan, result, events } = await cutOver(3, 1);
    expect(result.errors).toEqual([]);
    expect(plan.cutovers?.map((c) => c.edge)).toEqual([
      'https_edge.e0',
      'https_edge.e1',
      'https_edge.e2',
    ]);
    expect(events).toEqual(
      [0, 1, 2].flatMap((i) => [
        `send DELETE e${i}.example.com`,
        `done DELETE e${i}.example.com`,
        `send POST e${i}.example.com`,
        `done POST e${i}.example.com`,
      ]),
    );
    const live = await observe(client);
    expect(live.httpsEdges).toEqual([]);
    expect(live.cloudEndpoints.map((e) => e.url).sort()).toEqual(
      [0, 1, 2].map((i) => `https://e${i}.example.com`),
    );
  });

  it('with four workers: pairs in parallel, each create sent right after its own delete answered', async () => {
    await start();
    await edges(8);
    const { result, events } = await cutOver(8, 4);
    expect(result.errors).toEqual([]);
    for (let i = 0; i < 8; i++) {
      const answered = events.indexOf(`done DELETE e${i}.example.com`);
      const sent = events.indexOf(`send POST e${i}.example.com`);
      expect(answered).toBeGreaterThanOrEqual(0);
      // The very next thing this pair does: the create is sent as the delete's answer arrives.
      expect(sent).toBe(answered + 1);
    }
    // Not all deletes first: some create went out before the last delete was sent.
    const lastDelete = events.lastIndexOf(
      events.filter((e) => e.startsWith('send DELETE')).at(-1) ?? '',
    );
    expect(events.findIndex((e) => e.startsWith('send POST'))).toBeLessThan(lastDelete);
  });

  it('an edge with two hosts and ports: both endpoints created after its delete', async () => {
    await start();
    await client.createHttpsEdge({
      hostports: ['a.example.com:443', 'b.example.com:443'],
      metadata: OURS('ab'),
    });
    const live = await observe(client);
    const plan = buildPlan(
      desiredSet({
        endpoints: ['a', 'b'].map((h) =>
          endpointManifest({ name: h, url: `https://${h}.example.com`, traffic_policy: POLICY }),
        ),
      }),
      live,
    );
    expect(plan.cutovers?.[0]?.endpoints.map((e) => e.hostport)).toEqual([
      'a.example.com:443',
      'b.example.com:443',
    ]);
    const rec = recording(client);
    const result = await executePlan(plan, {
      client: rec.client,
      concurrency: 1,
      guards: { live },
    });
    expect(result.errors).toEqual([]);
    const answered = rec.events.findIndex((e) => e.startsWith('done DELETE'));
    expect(rec.events.slice(answered + 1, answered + 3).sort()).toEqual([
      'send POST a.example.com',
      'send POST b.example.com',
    ]);
  });
});

/** The edge manifests of `n` edges, and the CloudEndpoint manifests migrated from them. */
async function directories(n: number): Promise<{ old: string; migrated: string }> {
  const old = path.join(tmp.dir, 'edges');
  const migrated = path.join(tmp.dir, 'migrated');
  await writeManifests(
    old,
    Array.from({ length: n }, (_, i) => ({
      kind: 'HTTPSEdge',
      name: `e${i}`,
      hostports: [`e${i}.example.com:443`],
      routes: [{ match_type: 'path_prefix', match: '/', backend: { backend_id: BACKEND } }],
    })),
  );
  const env = apiEnv(server.url, server.apiKey);
  expect((await runCli(['apply', '--yes', old], { env })).code).toBe(0);
  const m = await runCli([
    'migrate',
    old,
    '--out',
    migrated,
    '--backend',
    `${BACKEND}=https://web.internal`,
  ]);
  expect(m.code, m.stderr).toBe(0);
  return { old, migrated };
}

describe('cut-over: a create refused after its edge went', () => {
  // Another actor takes e1's URL the moment e1's edge is gone, before our create arrives: the
  // service refuses a second endpoint on it (neither pools, 18009), which the plan could not
  // foresee (when it was made, the edge held the host and port).
  let racing: Awaited<ReturnType<typeof startRacingProxy>> | undefined;
  afterEach(async () => {
    await racing?.close();
    racing = undefined;
  });
  async function raceForE1(): Promise<string> {
    let raced = false;
    racing = await startRacingProxy(server.url, async (method, urlPath, body) => {
      if (raced || method !== 'POST' || urlPath !== '/endpoints') return;
      if (!body.includes('"https://e1.example.com"')) return;
      raced = true;
      await client.createEndpoint({
        url: 'https://e1.example.com',
        traffic_policy: JSON.stringify(POLICY),
        metadata: storedMetadata({}, { owner: 'someone-else', name: 'e1', protect: false }),
      });
    });
    return racing.url;
  }

  it('stops there, names the unserved host and port, and the old directory restores the edge', async () => {
    await start();
    const { old, migrated } = await directories(3);
    const env = apiEnv(await raceForE1(), server.apiKey);
    const run = await runCli(['apply', '--yes', '--concurrency', '1', migrated], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /cut-over stopped: 1 host\(s\) and port\(s\) are served by nothing: e1\.example\.com:443 \(edge https_edge\.e1 edghts_\w+ deleted, cloud_endpoint\.e1[\w.-]* not created\)/,
    );
    expect(run.stderr).toContain('edgesync apply --dir <edge manifests directory>');
    expect(run.stderr).toMatch(
      /cut-over stopped at https_edge\.e1: 1 edge\(s\) not cut over, still serving \(https_edge\.e2\)/,
    );
    let live = await observe(client);
    // e0 was cut over, e1 is unserved by us (the other actor holds its URL), e2 never touched.
    expect(live.httpsEdges.flatMap((e) => e.hostports)).toEqual(['e2.example.com:443']);
    const ours = live.cloudEndpoints.filter((e) => e.metadata === OURS('e0'));
    expect(ours.map((e) => e.url)).toEqual(['https://e0.example.com']);
    expect(live.cloudEndpoints.map((e) => e.url).sort()).toEqual([
      'https://e0.example.com',
      'https://e1.example.com',
    ]);

    // The restore the message gives: the edge manifests, applied again.
    const back = await runCli(['apply', '--yes', old], { env });
    expect(back.code, back.stderr).toBe(0);
    live = await observe(client);
    expect(live.httpsEdges.flatMap((e) => e.hostports).sort()).toEqual([
      'e0.example.com:443',
      'e1.example.com:443',
      'e2.example.com:443',
    ]);
  });

  it('apply --output json lists the unserved hosts and ports', async () => {
    await start();
    const { migrated } = await directories(2);
    const env = apiEnv(await raceForE1(), server.apiKey);
    const run = await runCli(['apply', '--yes', '--output', 'json', migrated], { env });
    expect(run.code).toBe(1);
    const json = JSON.parse(run.stdout) as {
      status: string;
      unserved: { hostport: string; edge: string; endpoint: string }[];
      notes: string[];
    };
    expect(json.status).toBe('failed');
    expect(json.unserved.map((u) => [u.hostport, u.edge])).toEqual([
      ['e1.example.com:443', 'https_edge.e1'],
    ]);
    expect(json.notes.join('\n')).toContain('edgesync apply --dir');
  });

  it("the daemon's cycle error says which host and port is unserved and how to restore it", async () => {
    await start();
    const { migrated } = await directories(2);
    const raced = apiClient(await raceForE1(), server.apiKey);
    const reconcile = createReconciler(reconcilerOptions({ client: raced }));
    const report = await reconcile({
      dir: migrated,
      revision: undefined,
      reason: 'startup',
      signal: new AbortController().signal,
      assertCurrent: async () => undefined,
    });
    await raced.close();
    expect(report.result).toBe('error');
    expect(report.error).toMatch(/e1\.example\.com:443 \(edge https_edge\.e1 /);
    expect(report.error).toContain('edgesync apply --dir');
  });
});

describe('cut-over: read-only edges', () => {
  it.each([1, 4])('with %i worker(s): says so and writes nothing', async (concurrency) => {
    await start();
    const { migrated } = await directories(4);
    // An endpoint on a host and port no edge holds: created in phase main, which must not run.
    await writeFile(
      path.join(migrated, 'extra.yaml'),
      'kind: ReservedDomain\nname: extra\ndomain: extra.example.com\n---\nkind: CloudEndpoint\nname: extra\nurl: https://extra.example.com\ntraffic_policy:\n  on_http_request:\n    - actions: [{ type: deny }]\n',
    );
    // On the service an edge's host is reserved already, its certificate issued: the
    // reservations the migrated manifests declare exist, owned and ready (nothing to write).
    server.knobs.dns = { cnamesCreated: 'all' };
    for (const [name, domain] of [
      ...[0, 1, 2, 3].map((i) => [`e${i}.example.com`, `e${i}.example.com`]),
      ['extra', 'extra.example.com'],
    ] as const) {
      const metadata = storedMetadata({}, { owner: 'default', name, protect: false });
      await client.createReservedDomain({ domain, metadata });
    }
    server.knobs.edgeAccess = 'read-only';
    const before = await observe(client);
    const writes = writesAt(server);
    const posts = server.requests.POST ?? 0;
    const run = await runCli(['apply', '--yes', '--concurrency', String(concurrency), migrated], {
      env: apiEnv(server.url, server.apiKey),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the account's edges are read-only");
    // Only refused deletes were sent (at most one per worker), and no create.
    expect(server.requests.POST ?? 0).toBe(posts);
    expect(writesAt(server) - writes).toBeLessThanOrEqual(concurrency);
    expect(writesAt(server) - writes).toBe(server.statuses[403] ?? 0);
    const after = await observe(client);
    expect(after.httpsEdges).toEqual(before.httpsEdges);
    expect(after.cloudEndpoints).toEqual(before.cloudEndpoints);
  });
});

describe('cut-over: the shipped examples, migrated', () => {
  it("the migration guide's example: apply converges and the next plan is empty", async () => {
    await start();
    const repo = path.resolve(import.meta.dirname, '../../..');
    const examples = path.join(tmp.dir, 'edges');
    await cp(path.join(repo, 'config-examples/edges'), examples, { recursive: true });
    const storefront = path.join(examples, 'storefront.yaml');
    const text = await readFile(storefront, 'utf8');
    // A protected edge is never deleted: the guide's first step sets `protect: false`.
    expect(text).toContain('protect: true');
    await writeFile(storefront, text.replace('protect: true', 'protect: false'));
    const migrated = path.join(tmp.dir, 'migrated');
    const env = apiEnv(server.url, server.apiKey);
    const first = await runCli(['apply', '--yes', examples], { env, cwd: repo });
    expect(first.code, first.stderr).toBe(0);
    // As the guide does it: the storefront migrated, the staff tools and TCP services kept on
    // their edges (copied as they are), the secrets the references name beside them.
    const m = await runCli(
      [
        'migrate',
        examples,
        '--out',
        migrated,
        '--backends',
        path.join(repo, 'config-examples/migrate/backends.yaml'),
        '--exclude',
        'internal/**',
        '--exclude',
        'tcp-services.yaml',
        '--allow-lossy',
      ],
      { cwd: repo },
    );
    expect(m.code, m.stderr).toBe(0);
    for (const kept of ['internal', 'tcp-services.yaml', 'secrets']) {
      await cp(path.join(examples, kept), path.join(migrated, kept), { recursive: true });
    }
    // The sns webhook's topic owner, which the edge never held (the guide's warning says so).
    const withOwner = { ...env, SNS_TOPIC_OWNER: '123456789012' };
    const plan = await runCli(['plan', migrated], { env: withOwner, cwd: repo });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      'Cut-over to cloud endpoints (one edge at a time, in this order)',
    );
    expect(plan.stdout).toMatch(
      /1\. - delete https_edge\.storefront \(edghts_\w+\)\n\s+\+ then create cloud_endpoint\.storefront-shop\.acme-outfitters\.example https:\/\/shop\.acme-outfitters\.example \(takes over shop\.acme-outfitters\.example:443\)/,
    );
    const apply = await runCli(['apply', '--yes', migrated], { env: withOwner, cwd: repo });
    expect(apply.code, apply.stderr).toBe(0);
    const again = await runCli(['plan', '--detailed-exitcode', migrated], {
      env: withOwner,
      cwd: repo,
    });
    expect(again.stdout).toContain('No changes');
    expect(again.code).toBe(0);
    const live = await observe(client);
    expect(live.httpsEdges.flatMap((e) => e.hostports)).not.toContain(
      'shop.acme-outfitters.example:443',
    );
    expect(live.cloudEndpoints.map((e) => e.url).sort()).toEqual([
      'https://shop.acme-outfitters.example',
      'https://www.acme-outfitters.example',
    ]);
  });
});
