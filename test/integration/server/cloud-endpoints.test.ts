/**
 * The cloud endpoints API of the local server over real HTTP (cloud-endpoints.md): exact read
 * shape with empty fields omitted, URL normalisation and bindings as stored, partial update,
 * pooling and URL uniqueness, the host and port of an edge (381), pagination and CEL filters,
 * byte limits, policy errors naming their path, agent endpoints untouchable, accounts isolated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import { generateApiKey, type RunningServer } from '../../../src/server/index.js';
import { ERROR_CODE } from '../../../src/spec/api.js';
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
    [{}, CODE.emptyUpdate],
    [{ type: 'cloud' }, ERROR_CODE.unknownField],
    [{ url: 'http://x.example.com' }, CODE.schemeChange],
    [{ url: 'tls://x.example.com:443' }, CODE.schemeChange],
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
    [{ url: 'https://x.example.com' }, ERROR_CODE.invalidValue, 'traffic_policy'],
    [{ traffic_policy: POLICY }, ERROR_CODE.invalidValue, 'url'],
    [
      { url: 'https://x.example.com', traffic_policy: POLICY, type: 'agent' },
      ERROR_CODE.invalidValue,
      'type',
    ],
    [
      { url: 'https://x.example.com', traffic_policy: POLICY, name: 'x' },
      ERROR_CODE.unknownField,
      'accepted fields',
    ],
    [
      { url: 'https://x.example.com', traffic_policy: POLICY, bindings: ['public', 'internal'] },
      ERROR_CODE.invalidValue,
      'bindings',
    ],
    [
      { url: 'https://x.example.com', traffic_policy: POLICY, bindings: ['private'] },
      ERROR_CODE.invalidValue,
      'bindings',
    ],
  ])('create %j is a 400 %s', async (body, code, text) => {
    const r = await call('POST', '/endpoints', body);
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(code);
    expect(r.json.msg).toContain(text);
  });
});

describe('URLs and bindings as stored', () => {
  it.each([
    ['HTTPS://Web.Internal:443', [], 'https://web.internal', ['internal']],
    ['tls://Mail.Example.com', [], 'tls://mail.example.com:443', ['public']],
    ['http://api.example.com:80', [], 'http://api.example.com', ['public']],
    ['tcp://db.internal:5432', [], 'tcp://db.internal:5432', ['internal']],
    ['http://svc.ns:8080', ['kubernetes'], 'http://svc.ns:8080', ['kubernetes']],
  ])('%s with bindings %j is %s %j', async (url, bindings, stored, expected) => {
    const tcp = url.startsWith('tcp') || url.startsWith('tls');
    const policy = url.startsWith('tcp')
      ? TCP_POLICY.replace('tls://app.internal:443', 'tcp://x.internal:1')
      : tcp
        ? TCP_POLICY
        : POLICY;
    const r = await create({ url, bindings, traffic_policy: policy });
    expect(r.status, r.text).toBe(201);
    expect(r.json.url).toBe(stored);
    expect(r.json.bindings).toEqual(expected);
  });

  it.each([
    ['app.example.com', CODE.badUrl],
    ['ftp://app.example.com', CODE.badScheme],
    ['https://app.example.com/path', CODE.badUrl],
    ['tcp://db.internal', CODE.portRequired],
    ['https://app.example.com:8443', CODE.bindingMismatch],
  ])('%s is refused with %s', async (url, code) => {
    const r = await create({ url });
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(code);
  });
});

describe('a policy error names its code and path', () => {
  it('answers the 22xx code and the path inside the document', async () => {
    const policy = [
      'on_http_request:',
      '  - actions: [{type: deny}]',
      '    expressions: ["true"]',
      '  - actions:',
      '      - type: add-headers',
      '        config: {headers: {user-agent: x}}',
      '      - type: deny',
    ].join('\n');
    const r = await create({ url: `https://${host()}`, traffic_policy: policy });
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(CODE.badPolicy);
    expect(r.json.msg).toContain(
      'traffic_policy: on_http_request[1].actions[0].config.headers.user-agent:',
    );
    const unknown = await create({
      url: `https://${host()}`,
      traffic_policy: 'on_http_request: [{actions: [{type: teleport}]}]',
    });
    expect(unknown.json.error_code).toBe(CODE.unknownAction);
    expect(unknown.json.msg).toContain('on_http_request[0].actions[0].type');
  });
});

describe('pooling and URL uniqueness', () => {
  it.each([
    [false, false, CODE.urlInUse],
    [true, false, CODE.poolingNotEnabled],
    [false, true, CODE.poolingNotEnabledOnHolder],
    [true, true, undefined],
  ])('holder pooling %s, newcomer pooling %s: %s', async (holder, newcomer, code) => {
    const url = `https://${host()}`;
    expect((await create({ url, pooling_enabled: holder })).status).toBe(201);
    const r = await create({ url: url.toUpperCase(), pooling_enabled: newcomer });
    expect(r.status).toBe(code === undefined ? 201 : 400);
    expect(r.json.error_code).toBe(code);
  });

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

describe('byte limits', () => {
  it.each([
    ['description', 255, 201],
    ['description', 256, 400],
    ['metadata', 4096, 201],
    ['metadata', 4097, 400],
  ])('%s of %i bytes: %i', async (field, bytes, status) => {
    // Two-byte characters: the limit counts bytes, not characters.
    const value = `${'é'.repeat(Math.floor(bytes / 2))}${bytes % 2 === 1 ? 'x' : ''}`;
    const r = await create({ url: `https://${host()}`, [field]: value });
    expect(r.status).toBe(status);
    if (status === 400) expect(r.json.msg).toContain(`${field} must be at most`);
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
