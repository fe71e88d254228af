/**
 * The cloud endpoints API of the local server over real HTTP (cloud-endpoints.md): exact read
 * shape with empty fields omitted, partial update, pooling changed in place, the host and port
 * of an edge released (381), agent endpoints untouchable, accounts isolated. The rules of the
 * specification's tables (fields, URLs, bindings, policy, codes) are in cloud-spec.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE } from '../../../src/hosted/edge-api.js';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import { generateApiKey, type RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

const POLICY =
  'on_http_request:\n  - actions:\n      - type: forward-internal\n        config: {url: "https://web.internal"}\n';
const TCP_POLICY = JSON.stringify({
  on_tcp_connect: [
    { actions: [{ type: 'forward-internal', config: { url: 'tls://app.internal:443' } }] },
  ],
});
const AGENT_URL = 'https://agent.example.com';

let server: RunningServer & { apiKey: string };
let call: Call;
let other: Call;
let base: string;
let counter = 0;
const host = () => `app${++counter}.example.com`;

beforeAll(async () => {
  const otherKey = generateApiKey();
  const key = generateApiKey();
  server = await startTestServer({
    apiKeys: [key, otherKey],
    agentEndpoints: [{ url: AGENT_URL, description: 'held by an agent' }],
  });
  call = clientFor(server, key);
  other = clientFor(server, otherKey);
  base = server.url;
});
afterAll(async () => {
  await server.close();
});

async function create(body: Record<string, unknown>, as: Call = call) {
  return as('POST', '/endpoints', { traffic_policy: POLICY, ...body });
}

describe('create, get, list, update, delete', () => {
  it('answers the exact read shape and omits empty fields', async () => {
    const h = host();
    const created = await create({ url: `https://${h.toUpperCase()}:443` });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(id).toMatch(/^ep_[0-9A-Za-z]{27}$/);
    expect(Object.keys(created.json)).toEqual([
      'id',
      'uri',
      'type',
      'url',
      'traffic_policy',
      'bindings',
      'pooling_enabled',
      'created_at',
      'updated_at',
      'scheme',
      'host',
      'port',
      'principal',
    ]);
    expect(created.json).toMatchObject({
      uri: `${base}/endpoints/${id}`,
      type: 'cloud',
      url: `https://${h}`,
      traffic_policy: POLICY,
      bindings: ['public'],
      pooling_enabled: false,
      scheme: 'https',
      host: h,
      port: 443,
    });
    expect(created.json.principal.id).toMatch(/^usr_[0-9A-Za-z]{27}$/);
    expect(created.json.principal.uri).toBe(`${base}/users/${created.json.principal.id}`);
    expect(created.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.text).not.toContain('null');
    const got = await call('GET', `/endpoints/${id}`);
    expect(got.status).toBe(200);
    expect(got.text).toBe(created.text);
  });

  it('PATCH is partial, keeps the policy text as sent, and may clear a description', async () => {
    const c = await create({ url: `https://${host()}`, description: 'd', metadata: '{"a":1}' });
    const id = c.json.id as string;
    const policy = JSON.stringify({ on_http_request: [{ actions: [{ type: 'deny' }] }] });
    const p1 = await call('PATCH', `/endpoints/${id}`, { traffic_policy: policy });
    expect(p1.status).toBe(200);
    expect(p1.json).toMatchObject({
      description: 'd',
      metadata: '{"a":1}',
      traffic_policy: policy,
    });
    const p2 = await call('PATCH', `/endpoints/${id}`, { description: '' });
    expect(p2.json.description).toBeUndefined();
    expect(p2.json.metadata).toBe('{"a":1}');
    expect((await call('GET', `/endpoints/${id}`)).text).toBe(p2.text);
  });

  it.each([
    [{ description: null }, ERROR_CODE.invalidValue],
    [{ traffic_policy: '' }, ERROR_CODE.invalidValue],
  ])('PATCH %j is refused with %s and changes nothing', async (body, code) => {
    const c = await create({ url: `https://${host()}` });
    const r = await call('PATCH', `/endpoints/${c.json.id}`, body);
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(code);
    expect((await call('GET', `/endpoints/${c.json.id}`)).text).toBe(c.text);
  });

  it('PATCH moves the URL in place (same scheme) and DELETE removes it', async () => {
    const c = await create({ url: `https://${host()}` });
    const to = host();
    const moved = await call('PATCH', `/endpoints/${c.json.id}`, { url: `https://${to}` });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({ url: `https://${to}`, host: to });
    const del = await call('DELETE', `/endpoints/${c.json.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const gone = await call('GET', `/endpoints/${c.json.id}`);
    expect(gone.status).toBe(404);
  });

  it.each([
    [
      { url: 'https://x.example.com', traffic_policy: POLICY, name: 'x' },
      ERROR_CODE.unknownField,
      'accepted fields',
    ],
  ])('create %j is a 400 %s', async (body, code, text) => {
    const r = await call('POST', '/endpoints', body);
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(code);
    expect(r.json.msg).toContain(text);
  });
});

describe('pooling and URL uniqueness', () => {
  it('turning pooling off while sharing the URL is refused; another account is unaffected', async () => {
    const url = `https://${host()}`;
    const a = await create({ url, pooling_enabled: true });
    await create({ url, pooling_enabled: true });
    const off = await call('PATCH', `/endpoints/${a.json.id}`, { pooling_enabled: false });
    expect(off.json.error_code).toBe(CODE.poolingNotEnabled);
    expect((await create({ url }, other)).status).toBe(201);
  });

  it('an agent endpoint holds its URL like any endpoint', async () => {
    const r = await create({ url: AGENT_URL });
    expect(r.json.error_code).toBe(CODE.urlInUse);
  });
});

describe('a host and port still held by an edge (381)', () => {
  it.each([
    ['https://%h', POLICY],
    ['tls://%h:443', TCP_POLICY],
  ])('%s is refused until the edge is deleted', async (pattern, policy) => {
    const h = host();
    const edge = await call('POST', '/edges/https', { hostports: [`${h}:443`] });
    expect(edge.status).toBe(201);
    const url = pattern.replace('%h', h.toUpperCase());
    const refused = await create({ url, traffic_policy: policy });
    expect(refused.status).toBe(400);
    expect(refused.json.error_code).toBe(CODE.heldByEdge);
    expect(refused.json.msg).toContain('already reserved by an edge');
    const moved = await create({ url: `https://${host()}` });
    expect((await call('PATCH', `/endpoints/${moved.json.id}`, { url })).json.error_code).toBe(
      url.startsWith('tls') ? CODE.schemeChange : CODE.heldByEdge,
    );
    expect((await call('DELETE', `/edges/https/${edge.json.id}`)).status).toBe(204);
    expect((await create({ url, traffic_policy: policy })).status).toBe(201);
  });

  it('an edge of another account does not hold it', async () => {
    const h = host();
    expect((await other('POST', '/edges/tls', { hostports: [`${h}:443`] })).status).toBe(201);
    expect((await create({ url: `https://${h}` })).status).toBe(201);
  });
});

describe('agent endpoints', () => {
  it('are listed and read, never changed or deleted', async () => {
    const page = await other(
      'GET',
      `/endpoints?filter=${encodeURIComponent('obj.type == "agent"')}`,
    );
    expect(page.json.endpoints).toHaveLength(1);
    const agent = page.json.endpoints[0];
    expect(agent).toMatchObject({ type: 'agent', url: AGENT_URL, description: 'held by an agent' });
    expect(agent.traffic_policy).toBeUndefined();
    const before = await other('GET', `/endpoints/${agent.id}`);
    const patch = await other('PATCH', `/endpoints/${agent.id}`, { description: 'mine' });
    expect(patch.status).toBe(400);
    expect(patch.json.msg).toContain('agent endpoint');
    expect((await other('DELETE', `/endpoints/${agent.id}`)).status).toBe(400);
    expect((await other('GET', `/endpoints/${agent.id}`)).text).toBe(before.text);
  });
});

describe('accounts', () => {
  it("another account's endpoint is a 404 for get, update and delete", async () => {
    const mine = await create({ url: `https://${host()}` });
    for (const [method, body] of [['GET'], ['PATCH', { description: 'x' }], ['DELETE']] as const) {
      const r = await other(method, `/endpoints/${mine.json.id}`, body);
      expect(r.status).toBe(404);
    }
    expect((await call('GET', `/endpoints/${mine.json.id}`)).text).toBe(mine.text);
  });

  it.each([
    ['/endpoints/edghts_1', ERROR_CODE.wrongIdPrefix],
    ['/endpoints?before_id=bot_1', ERROR_CODE.wrongIdPrefix],
    ['/endpoints?sort=asc', ERROR_CODE.unknownQueryParam],
  ])('GET %s is a 400 %s', async (path, code) => {
    const r = await call('GET', path);
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(code);
  });

  it('lists the filter among the accepted query parameters of endpoints only', async () => {
    expect((await call('GET', '/endpoints?x=1')).json.msg).toContain(
      'accepted: before_id, beforeId, limit, filter',
    );
    expect((await call('GET', '/edges/tls?filter=true')).json.msg).toContain(
      'accepted: before_id, beforeId, limit',
    );
  });
});
