/**
 * The client against the real local Edge API server over HTTP: every method's round trip,
 * pagination call counts, observe(), and the server's fault knobs (rate limit, 503s, resets).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { observe } from '../../../src/api/observe.js';
import type { ApiClient, ApiClientOptions } from '../../../src/api/types.js';
import {
  AbortedError,
  ApiError,
  isNotFound,
  isOutcomeUnknown,
  NetworkError,
} from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { generateApiKey } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';

type TestServer = Awaited<ReturnType<typeof startTestServer>>;

let server: TestServer;
const clients: ApiClient[] = [];

beforeAll(async () => {
  // Key 0 is the shared default account; the others are handed out fresh by `freshKey()`.
  server = await startTestServer({ apiKeys: Array.from({ length: 16 }, () => generateApiKey()) });
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  server.knobs.rateLimit = undefined;
  server.knobs.latencyMs = undefined;
  server.knobs.faultRate = undefined;
  server.knobs.resetRate = undefined;
  for (const c of clients.splice(0)) await c.close();
});

/** Each call gets its own account (a fresh API key) unless one is given. */
let nextKey = 1;
function freshKey(): string {
  const key = server.apiKeys[nextKey++];
  if (key === undefined) throw new Error('out of fresh API keys: start the server with more');
  return key;
}

function connect(options: Partial<ApiClientOptions> = {}) {
  const sleeps: number[] = [];
  const client = createApiClient({
    baseUrl: server.url,
    apiKey: server.apiKey,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4 },
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
  clients.push(client);
  return { client, sleeps };
}

const BACKEND = 'bkdhr_2abcdefghijklmnopqrstuvwxyz1';
const IPP = 'ipp_2abcdefghijklmnopqrstuvwxyz1';
const CA = 'ca_2abcdefghijklmnopqrstuvwxyz1';
let uniq = 0;
const hostport = () => `h${++uniq}-${Date.now().toString(36)}.example.test:443`;

describe('round trips', () => {
  it('TLS edge: create, get, update, modules, list, delete', async () => {
    const { client } = connect();
    const hp = hostport();
    const created = await client.createTlsEdge({
      description: 'tls',
      metadata: '{"edgesync/name":"a"}',
      hostports: [hp],
      backend: { backend_id: BACKEND },
      ip_restriction: { ip_policy_ids: [IPP] },
      mutual_tls: { certificate_authority_ids: [CA] },
      tls_termination: { terminate_at: 'agent', min_version: '1.3' },
      traffic_policy: { value: '{"on_tcp_connect":[]}' },
    });
    expect(created.id).toMatch(/^edgtls_/);
    expect(created).toMatchObject({
      description: 'tls',
      hostports: [hp],
      backend: { enabled: true, backend: { id: BACKEND } },
      ip_restriction: { enabled: true, ip_policies: [{ id: IPP }] },
      mutual_tls: { certificate_authorities: [{ id: CA }] },
      tls_termination: { terminate_at: 'agent', min_version: '1.3' },
    });
    expect(await client.getTlsEdge(created.id)).toEqual(created);

    const updated = await client.updateTlsEdge(created.id, { description: 'changed' });
    expect(updated.description).toBe('changed');
    expect(updated.backend).toEqual(created.backend);

    const owner = { kind: 'tls_edge', id: created.id } as const;
    const policy = await client.putModule(owner, 'traffic_policy', { enabled: false, value: 'x' });
    expect(policy).toEqual({ enabled: false, value: 'x' });
    expect(await client.getModule(owner, 'traffic_policy')).toEqual(policy);
    await client.deleteModule(owner, 'backend');
    await client.deleteModule(owner, 'backend'); // 204 also when not set
    expect((await client.getTlsEdge(created.id)).backend).toBeNull();

    const { items } = await client.listTlsEdges();
    expect(items.map((e) => e.id)).toContain(created.id);

    await client.deleteTlsEdge(created.id);
    await expect(client.getTlsEdge(created.id)).rejects.toSatisfy(isNotFound);
    const again = await client.deleteTlsEdge(created.id).catch((e: unknown) => e);
    expect(isNotFound(again)).toBe(true);
  });

  it('HTTPS edge with routes and every route module', async () => {
    const { client } = connect();
    const edge = await client.createHttpsEdge({
      hostports: [hostport()],
      tls_termination: { min_version: '1.3' },
      mutual_tls: { certificate_authority_ids: [CA] },
    });
    expect(edge.routes).toEqual([]);
    expect(edge.tls_termination).toMatchObject({ enabled: true, min_version: '1.3' });

    const route = await client.createRoute(edge.id, {
      match_type: 'path_prefix',
      match: '/api',
      description: 'api',
      backend: { backend_id: BACKEND },
      ip_restriction: { ip_policy_ids: [IPP] },
      circuit_breaker: {
        tripped_duration: 10,
        rolling_window: 10,
        volume_threshold: 20,
        error_threshold_percentage: 0.25,
        num_buckets: 20,
      },
      compression: {},
      request_headers: { add: { 'X-Env': 'prod' }, remove: ['X-Debug'] },
      response_headers: { add: { 'X-Served-By': 'edge' } },
      webhook_verification: { provider: 'github', secret: 'whsec' },
      oauth: {
        provider: {
          google: { client_id: 'cid', client_secret: 'csec', email_domains: ['example.com'] },
        },
      },
      websocket_tcp_converter: { enabled: false },
      user_agent_filter: { deny: ['curl.*'] },
      traffic_policy: { value: 'tp' },
    });
    expect(route).toMatchObject({
      edge_id: edge.id,
      match: '/api',
      circuit_breaker: {
        tripped_duration: 10,
        rolling_window: 10,
        volume_threshold: 20,
        error_threshold_percentage: 0.25,
        num_buckets: 20,
      },
      response_headers: { add: { 'x-served-by': 'edge' } },
      oauth: { provider: { google: { client_id: 'cid' }, github: null } },
      saml: null,
    });
    expect(await client.getRoute(edge.id, route.id)).toEqual(route);

    const routeOwner = { kind: 'route', edgeId: edge.id, id: route.id } as const;
    // Two auth modules on one route: a 400 the client surfaces with its code, unretried.
    const conflict = await client
      .putModule(routeOwner, 'oidc', {
        issuer: 'https://idp.example.test',
        client_id: 'c',
        client_secret: 's',
      })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ApiError);
    expect(conflict).toMatchObject({
      status: 400,
      errorCode: 'ERR_SVC_7079',
      outcomeUnknown: false,
    });

    await client.deleteModule(routeOwner, 'oauth');
    const saml = await client.putModule(routeOwner, 'saml', {
      idp_metadata: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>',
    });
    expect(saml.entity_id).toMatch(/^http/);
    expect(saml.request_signing_certificate_pem).toContain('CERTIFICATE');

    const renamed = await client.updateRoute(edge.id, route.id, { match: '/v2' });
    expect(renamed.match).toBe('/v2');

    const fetched = await client.getHttpsEdge(edge.id);
    expect(fetched.routes).toHaveLength(1);
    expect(fetched.routes[0]).toMatchObject({
      id: route.id,
      match: '/v2',
      saml: { enabled: true },
    });

    const edgeOwner = { kind: 'https_edge', id: edge.id } as const;
    expect(
      await client.putModule(edgeOwner, 'tls_termination', { min_version: '1.2' }),
    ).toMatchObject({
      min_version: '1.2',
    });
    expect((await client.updateHttpsEdge(edge.id, { description: 'd' })).description).toBe('d');

    await client.deleteRoute(edge.id, route.id);
    await expect(client.getRoute(edge.id, route.id)).rejects.toSatisfy(isNotFound);
    await client.deleteHttpsEdge(edge.id);
    await expect(client.getHttpsEdge(edge.id)).rejects.toSatisfy(isNotFound);
  });

  it('bot users: create, get, update, list, delete', async () => {
    const { client } = connect({ apiKey: freshKey() });
    const bot = await client.createBotUser({ name: 'ci' });
    expect(bot).toMatchObject({ name: 'ci', active: true });
    expect(await client.getBotUser(bot.id)).toEqual(bot);
    expect(await client.updateBotUser(bot.id, { active: false })).toMatchObject({ active: false });
    expect((await client.listBotUsers()).items.map((b) => b.id)).toContain(bot.id);
    await client.deleteBotUser(bot.id);
    await expect(client.getBotUser(bot.id)).rejects.toSatisfy(isNotFound);
  });

  it('surfaces a wrong key as a 401 ApiError, unretried', async () => {
    const { client, sleeps } = connect({ apiKey: 'sk_wrong_key_123' });
    const err = await client.listTlsEdges().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    expect(sleeps).toEqual([]);
  });
});

describe('pagination', () => {
  const kinds = [
    [
      'TLS edges',
      (c: ApiClient) => c.createTlsEdge({ hostports: [hostport()] }),
      (c: ApiClient) => c.listTlsEdges(),
    ],
    [
      'HTTPS edges',
      (c: ApiClient) => c.createHttpsEdge({ hostports: [hostport()] }),
      (c: ApiClient) => c.listHttpsEdges(),
    ],
    [
      'bot users',
      (c: ApiClient) => c.createBotUser({ name: `b${++uniq}` }),
      (c: ApiClient) => c.listBotUsers(),
    ],
  ] as const;

  it.each(kinds)(
    '%s: 0, 1, 100, 101, 250 items take 1, 1, 1, 2, 3 calls',
    async (_n, create, list) => {
      const { client } = connect({ apiKey: freshKey() });
      const ids: string[] = [];
      for (const [n, calls] of [
        [0, 1],
        [1, 1],
        [100, 1],
        [101, 2],
        [250, 3],
      ] as const) {
        while (ids.length < n) ids.push((await create(client)).id);
        const result = await list(client);
        expect(result.calls).toBe(calls);
        // Newest first, each exactly once.
        expect(result.items.map((i) => i.id)).toEqual([...ids].reverse());
      }
    },
  );

  it('follows smaller pages too', async () => {
    const { client } = connect({ apiKey: freshKey() });
    for (let i = 0; i < 15; i++) await client.createBotUser({ name: `p${i}` });
    const { items, calls } = await client.listBotUsers({ pageSize: 4 });
    expect(items).toHaveLength(15);
    expect(calls).toBe(4);
  });
});

describe('observe', () => {
  it('takes one paginated list per kind, routes embedded, no per-resource GET', async () => {
    const key = freshKey();
    const seed = connect({ apiKey: key }).client;
    for (let i = 0; i < 130; i++) await seed.createTlsEdge({ hostports: [hostport()] });
    for (let i = 0; i < 201; i++) {
      const edge = await seed.createHttpsEdge({ hostports: [hostport()] });
      if (i % 50 === 0) await seed.createRoute(edge.id, { match_type: 'exact_path', match: '/' });
    }
    for (let i = 0; i < 3; i++) await seed.createBotUser({ name: `o${i}` });

    const requests: string[] = [];
    const { client } = connect({
      apiKey: key,
      onResponse: (r) => requests.push(`${r.method} ${r.route} ${r.status}`),
    });
    const snap = await observe(client);
    expect(snap.tlsEdges).toHaveLength(130);
    expect(snap.httpsEdges).toHaveLength(201);
    expect(snap.botUsers).toHaveLength(3);
    expect(snap.httpsEdges.flatMap((e) => e.routes)).toHaveLength(5);
    expect(snap.calls).toMatchObject({
      tls_edge: 2,
      https_edge: 3,
      bot_user: 1,
      cloud_endpoint: 1,
    });
    // One list of every other registered kind too (an empty one each).
    const others = Object.keys(snap.calls).length - 4;
    expect(requests).toHaveLength(7 + others);
    const firstKinds = ['/bot_users', '/edges/https', '/edges/tls', '/endpoints'];
    expect([...requests].filter((r) => firstKinds.includes(r.split(' ')[1] ?? '')).sort()).toEqual([
      'GET /bot_users 200',
      'GET /edges/https 200',
      'GET /edges/https 200',
      'GET /edges/https 200',
      'GET /edges/tls 200',
      'GET /edges/tls 200',
      'GET /endpoints 200',
    ]);
  });

  it('returns an empty snapshot of an empty account in one call per kind', async () => {
    const { client } = connect({ apiKey: freshKey() });
    const snap = await observe(client);
    expect(snap).toMatchObject({ tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [] });
    expect(Object.values(snap.resources ?? {}).every((r) => r.length === 0)).toBe(true);
    expect(Object.keys(snap.calls).sort()).toEqual(Object.keys(snap.resources ?? {}).sort());
    expect(Object.values(snap.calls).every((n) => n === 1)).toBe(true);
  });

  it('throws, never a partial snapshot, when a listing fails', async () => {
    const { client } = connect({ retry: false });
    server.knobs.faultRate = 1;
    const err = await observe(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503 });
  });

  it('stops promptly when aborted', async () => {
    // The answer would take far longer than the test's own timeout: only a prompt abort passes.
    server.knobs.latencyMs = { min: 60_000, max: 60_000 };
    const { client } = connect({ sleep: undefined });
    const controller = new AbortController();
    const pending = observe(client, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
  });
});

describe('server knobs', () => {
  it('429 from the server rate limit: waits the Retry-After, then succeeds', async () => {
    const key = freshKey();
    server.knobs.rateLimit = { limit: 2, windowMs: 1000 };
    const statuses: number[] = [];
    const { client, sleeps } = connect({
      apiKey: key,
      sleep: async (ms) => {
        sleeps.push(ms);
        await new Promise((resolve) => setTimeout(resolve, ms));
      },
      onResponse: (r) => statuses.push(r.status),
    });
    for (let i = 0; i < 3; i++) await client.listBotUsers();
    expect(statuses).toEqual([200, 200, 429, 200]);
    expect(sleeps).toEqual([1000]);
  });

  it('429 is re-sent even for a POST, and creates exactly once', async () => {
    const key = freshKey();
    server.knobs.rateLimit = { limit: 1, windowMs: 60_000 };
    const { client, sleeps } = connect({
      apiKey: key,
      // Instead of waiting a minute, the "wait" lifts the server's limit.
      sleep: async (ms) => {
        sleeps.push(ms);
        server.knobs.rateLimit = undefined;
      },
    });
    await client.listBotUsers();
    await client.createBotUser({ name: 'once' });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(1000);
    expect(sleeps[0]).toBeLessThanOrEqual(60_000);
    expect((await client.listBotUsers()).items.filter((b) => b.name === 'once')).toHaveLength(1);
  });

  it('503 faults: GET and PATCH retried to success', async () => {
    let sleepsLeft = 0;
    const { client, sleeps } = connect({
      // Each backoff "wait" counts down; the last one clears the fault.
      sleep: async (ms) => {
        sleeps.push(ms);
        if (--sleepsLeft === 0) server.knobs.faultRate = 0;
      },
    });
    const edge = await client.createTlsEdge({ hostports: [hostport()] });
    sleepsLeft = 2;
    server.knobs.faultRate = 1;
    expect((await client.getTlsEdge(edge.id)).id).toBe(edge.id);
    expect(sleeps).toHaveLength(2);
    sleepsLeft = 3;
    server.knobs.faultRate = 1;
    const updated = await client.updateTlsEdge(edge.id, { description: 'after 503s' });
    expect(updated.description).toBe('after 503s');
    expect(sleeps).toHaveLength(5);
  });

  it('503 on a POST: thrown flagged outcomeUnknown, not re-sent', async () => {
    const key = freshKey();
    const { client, sleeps } = connect({ apiKey: key });
    server.knobs.faultRate = 1;
    const err = await client.createBotUser({ name: 'maybe' }).catch((e: unknown) => e);
    server.knobs.faultRate = 0;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, outcomeUnknown: true });
    expect(sleeps).toEqual([]);
  });

  it('reset after a performed POST: outcomeUnknown, and the write did happen', async () => {
    const key = freshKey();
    const { client, sleeps } = connect({ apiKey: key });
    const before = (await client.listBotUsers()).items.length;
    server.knobs.resetRate = 1;
    const err = await client.createBotUser({ name: 'ghost' }).catch((e: unknown) => e);
    server.knobs.resetRate = 0;
    expect(err).toBeInstanceOf(NetworkError);
    expect(isOutcomeUnknown(err)).toBe(true);
    expect(sleeps).toEqual([]);
    const after = (await client.listBotUsers()).items;
    expect(after).toHaveLength(before + 1); // why a blind retry would duplicate
  });

  it('resets on an idempotent request are retried', async () => {
    const { client, sleeps } = connect({
      apiKey: freshKey(),
      sleep: async (ms) => {
        sleeps.push(ms);
        server.knobs.resetRate = 0;
      },
    });
    server.knobs.resetRate = 1;
    expect((await client.listHttpsEdges()).calls).toBe(1);
    expect(sleeps).toHaveLength(1);
  });
});

describe('secrets', () => {
  it('keeps API keys out of error messages and logs', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'trace',
      destination: { write: (l: string) => void lines.push(l) },
    });
    const wrongKey = 'sk_wrong_SECRET_abcdef';
    const good = connect({ logger, apiKey: server.apiKey }).client;
    const bad = connect({ logger, apiKey: wrongKey }).client;
    const errors: unknown[] = [];
    errors.push(await bad.listTlsEdges().catch((e: unknown) => e));
    errors.push(
      await good.getTlsEdge('edgtls_2abcdefghijklmnopqrstuvwxyz1').catch((e: unknown) => e),
    );
    server.knobs.resetRate = 1;
    errors.push(await good.createBotUser({ name: 'x' }).catch((e: unknown) => e));
    server.knobs.resetRate = 0;
    server.knobs.faultRate = 1;
    errors.push(await good.listBotUsers().catch((e: unknown) => e));
    server.knobs.faultRate = 0;
    expect(errors.every((e) => e instanceof Error)).toBe(true);
    expect(lines.length).toBeGreaterThan(0);
    const text = [
      ...errors.map((e) => `${(e as Error).message} ${(e as Error).stack}`),
      ...lines,
    ].join('\n');
    for (const key of [server.apiKey, wrongKey, ...server.apiKeys]) expect(text).not.toContain(key);
  });
});
