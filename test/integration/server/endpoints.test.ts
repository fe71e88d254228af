/**
 * Every endpoint of the Edge API over real HTTP: create, get, list, update and delete of TLS
 * edges, HTTPS edges, routes and bot users; every module sub-resource (PUT, GET, DELETE) on each
 * owner with its exact read shape; PATCH semantics; cascades; account isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NAMEID_FORMAT } from '../../../src/hosted/edge-api.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let base: string;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  base = server.url;
});
afterAll(async () => {
  await server.close();
});

const ID = /^[a-z]+_[0-9A-Za-z]{27}$/;
const CREATED_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

let hostCounter = 0;
const hostport = () => `h${++hostCounter}.example.com:443`;

async function newHttpsEdge(): Promise<string> {
  const r = await call('POST', '/edges/https', { hostports: [hostport()] });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

async function newRoute(edgeId: string, match = '/'): Promise<string> {
  const r = await call('POST', `/edges/https/${edgeId}/routes`, {
    match_type: 'path_prefix',
    match,
  });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

describe('TLS edges', () => {
  it('create, get, list, update and delete with exact shapes', async () => {
    const hp = hostport();
    const created = await call('POST', '/edges/tls', {
      description: 'd',
      metadata: '{"a":1}',
      hostports: [hp],
      backend: { backend_id: 'bkdtg_abc' },
      tls_termination: { terminate_at: 'upstream' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/json');
    const id = created.json.id as string;
    expect(id).toMatch(/^edgtls_[0-9A-Za-z]{27}$/);
    expect(created.json).toEqual({
      id,
      description: 'd',
      metadata: '{"a":1}',
      created_at: expect.stringMatching(CREATED_AT),
      uri: `${base}/edges/tls/${id}`,
      hostports: [hp],
      backend: {
        enabled: true,
        backend: { id: 'bkdtg_abc', uri: `${base}/backends/tunnel_group/bkdtg_abc` },
      },
      ip_restriction: null,
      mutual_tls: null,
      tls_termination: { enabled: true, terminate_at: 'upstream', min_version: null },
      traffic_policy: null,
      policy: null,
    });
    expect(Object.keys(created.json)).toEqual([
      'id',
      'description',
      'metadata',
      'created_at',
      'uri',
      'hostports',
      'backend',
      'ip_restriction',
      'mutual_tls',
      'tls_termination',
      'traffic_policy',
      'policy',
    ]);

    const got = await call('GET', `/edges/tls/${id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(created.json);

    const listed = await call('GET', '/edges/tls');
    expect(listed.status).toBe(200);
    expect(listed.json.uri).toBe(`${base}/edges/tls`);
    expect(listed.json.next_page_uri).toBeNull();
    expect(listed.json.tls_edges).toContainEqual(created.json);

    const patched = await call('PATCH', `/edges/tls/${id}`, {
      id,
      description: 'e',
      traffic_policy: { value: 'p' },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toEqual({
      ...created.json,
      description: 'e',
      traffic_policy: { enabled: true, value: 'p' },
    });

    const deleted = await call('DELETE', `/edges/tls/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(deleted.headers.get('svc-operation-id')).toMatch(/^op_/);
    const gone = await call('GET', `/edges/tls/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error_code).toBe('ERR_SVC_7000');
    expect((await call('DELETE', `/edges/tls/${id}`)).status).toBe(404);
    // Its hostport is free again.
    expect((await call('POST', '/edges/tls', { hostports: [hp] })).status).toBe(201);
  });

  it('defaults: empty body gives an empty edge; min_version 1.2 and terminate_at edge', async () => {
    const r = await call('POST', '/edges/tls', { tls_termination: {} });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ description: '', metadata: '', hostports: [] });
    expect(r.json.tls_termination).toEqual({
      enabled: true,
      terminate_at: 'edge',
      min_version: '1.2',
    });
  });
});

describe('HTTPS edges and routes', () => {
  it('create, get, list, update and delete; routes embedded in creation order', async () => {
    const hp = hostport();
    const created = await call('POST', '/edges/https', {
      hostports: [hp],
      mutual_tls: { certificate_authority_ids: ['ca_1', 'ca_2'] },
      tls_termination: { min_version: '1.3' },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(created.json).toEqual({
      id,
      description: '',
      metadata: '',
      created_at: expect.stringMatching(CREATED_AT),
      uri: `${base}/edges/https/${id}`,
      hostports: [hp],
      mutual_tls: {
        enabled: true,
        certificate_authorities: [
          { id: 'ca_1', uri: `${base}/certificate_authorities/ca_1` },
          { id: 'ca_2', uri: `${base}/certificate_authorities/ca_2` },
        ],
      },
      tls_termination: { enabled: true, terminate_at: 'edge', min_version: '1.3' },
      routes: [],
    });
    expect('policy' in created.json).toBe(false);
    expect('traffic_policy' in created.json).toBe(false);

    const r1 = await call('POST', `/edges/https/${id}/routes`, {
      edge_id: id,
      match_type: 'exact_path',
      match: '/b',
      description: 'first',
      backend: { backend_id: 'bkdhr_x' },
    });
    expect(r1.status).toBe(201);
    const routeId = r1.json.id as string;
    expect(routeId).toMatch(/^edghtsrt_[0-9A-Za-z]{27}$/);
    expect(r1.json).toEqual({
      edge_id: id,
      id: routeId,
      created_at: expect.stringMatching(CREATED_AT),
      match_type: 'exact_path',
      match: '/b',
      uri: `${base}/edges/https/${id}/routes/${routeId}`,
      description: 'first',
      metadata: '',
      backend: {
        enabled: true,
        backend: { id: 'bkdhr_x', uri: `${base}/backends/http_response/bkdhr_x` },
      },
      ip_restriction: null,
      circuit_breaker: null,
      compression: null,
      request_headers: null,
      response_headers: null,
      webhook_verification: null,
      oauth: null,
      saml: null,
      oidc: null,
      websocket_tcp_converter: null,
      user_agent_filter: null,
      traffic_policy: null,
      policy: null,
    });
    const r2 = await call('POST', `/edges/https/${id}/routes`, {
      match_type: 'path_prefix',
      match: '/a',
    });
    expect(r2.status).toBe(201);

    const got = await call('GET', `/edges/https/${id}`);
    expect(got.json.routes.map((r: { id: string }) => r.id)).toEqual([routeId, r2.json.id]);
    expect(got.json.routes[0]).toEqual(r1.json);
    const listed = await call('GET', '/edges/https');
    expect(listed.json.https_edges).toContainEqual(got.json);

    expect((await call('GET', `/edges/https/${id}/routes/${routeId}`)).json).toEqual(r1.json);
    const patched = await call('PATCH', `/edges/https/${id}/routes/${routeId}`, {
      edge_id: id,
      id: routeId,
      match: '/c',
      compression: {},
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toEqual({ ...r1.json, match: '/c', compression: { enabled: true } });

    const edgePatched = await call('PATCH', `/edges/https/${id}`, { description: 'x' });
    expect(edgePatched.json.description).toBe('x');
    expect(edgePatched.json.routes).toHaveLength(2);
    expect(edgePatched.json.mutual_tls).toEqual(created.json.mutual_tls);

    expect((await call('DELETE', `/edges/https/${id}/routes/${r2.json.id}`)).status).toBe(204);
    expect((await call('GET', `/edges/https/${id}/routes/${r2.json.id}`)).json.error_code).toBe(
      'ERR_SVC_7124',
    );

    expect((await call('DELETE', `/edges/https/${id}`)).status).toBe(204);
    expect((await call('GET', `/edges/https/${id}`)).status).toBe(404);
    // The routes went with the edge.
    expect((await call('GET', `/edges/https/${id}/routes/${routeId}`)).status).toBe(404);
    expect((await call('POST', '/edges/https', { hostports: [hp] })).status).toBe(201);
  });

  it('the route collection has no list (405 with Allow)', async () => {
    const id = await newHttpsEdge();
    const r = await call('GET', `/edges/https/${id}/routes`);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
  });
});

const ca = (id: string) => ({ id, uri: `${base}/certificate_authorities/${id}` });
const ipp = (id: string) => ({ id, uri: `${base}/ip_policies/${id}` });

interface ModuleCase {
  readonly name: string;
  readonly body: unknown;
  readonly read: () => unknown;
}

const TLS_MODULE_CASES: ModuleCase[] = [
  {
    name: 'backend',
    body: { backend_id: 'bkdtg_1' },
    read: () => ({
      enabled: true,
      backend: { id: 'bkdtg_1', uri: `${base}/backends/tunnel_group/bkdtg_1` },
    }),
  },
  {
    name: 'ip_restriction',
    body: { enabled: false, ip_policy_ids: ['ipp_1', 'ipp_2'] },
    read: () => ({ enabled: false, ip_policies: [ipp('ipp_1'), ipp('ipp_2')] }),
  },
  {
    name: 'mutual_tls',
    body: { certificate_authority_ids: ['ca_9'] },
    read: () => ({ enabled: true, certificate_authorities: [ca('ca_9')] }),
  },
  {
    name: 'tls_termination',
    body: { terminate_at: 'agent', min_version: '1.1' },
    read: () => ({ enabled: true, terminate_at: 'agent', min_version: '1.1' }),
  },
  {
    name: 'traffic_policy',
    body: { value: '{"inbound":[]}' },
    read: () => ({ enabled: true, value: '{"inbound":[]}' }),
  },
];

const HTTPS_MODULE_CASES: ModuleCase[] = [
  {
    name: 'mutual_tls',
    body: { certificate_authority_ids: [] },
    read: () => ({ enabled: true, certificate_authorities: [] }),
  },
  {
    name: 'tls_termination',
    body: {},
    read: () => ({ enabled: true, terminate_at: 'edge', min_version: '1.2' }),
  },
];

const oauthProviders = (google: unknown) => ({
  github: null,
  facebook: null,
  microsoft: null,
  google,
  linkedin: null,
  gitlab: null,
  twitch: null,
  amazon: null,
});

const ROUTE_MODULE_CASES: ModuleCase[] = [
  TLS_MODULE_CASES[0] as ModuleCase,
  TLS_MODULE_CASES[1] as ModuleCase,
  {
    name: 'circuit_breaker',
    // Stored exactly as sent; a left-out error_threshold_percentage is 0, as the service does.
    body: { tripped_duration: 7, rolling_window: 30, num_buckets: 128, volume_threshold: 5 },
    read: () => ({
      enabled: true,
      tripped_duration: 7,
      rolling_window: 30,
      num_buckets: 128,
      volume_threshold: 5,
      error_threshold_percentage: 0,
    }),
  },
  { name: 'compression', body: { enabled: false }, read: () => ({ enabled: false }) },
  {
    name: 'request_headers',
    body: { add: { 'X-Req': 'v' } },
    read: () => ({ enabled: true, add: { 'X-Req': 'v' }, remove: [] }),
  },
  {
    name: 'response_headers',
    body: { add: { 'X-Frame-Options': 'DENY' }, remove: ['Server'] },
    read: () => ({ enabled: true, add: { 'x-frame-options': 'DENY' }, remove: ['server'] }),
  },
  {
    name: 'webhook_verification',
    body: { provider: 'GitHub', secret: 's3cret' },
    read: () => ({ enabled: true, provider: 'github', secret: 's3cret' }),
  },
  {
    name: 'oauth',
    body: {
      provider: {
        google: {
          client_id: 'id',
          client_secret: 'sec',
          scopes: ['email'],
          email_domains: ['example.com'],
        },
      },
      inactivity_timeout: 60,
    },
    read: () => ({
      enabled: true,
      provider: oauthProviders({
        client_id: 'id',
        client_secret: 'sec',
        scopes: ['email'],
        email_addresses: [],
        email_domains: ['example.com'],
      }),
      options_passthrough: false,
      cookie_prefix: 'svc.',
      inactivity_timeout: 60,
      maximum_duration: 0,
      auth_check_interval: 0,
    }),
  },
  {
    name: 'oidc',
    body: {
      issuer: 'https://accounts.example.com',
      client_id: 'c',
      client_secret: 's',
      cookie_prefix: 'app.',
    },
    read: () => ({
      enabled: true,
      options_passthrough: false,
      cookie_prefix: 'app.',
      inactivity_timeout: 0,
      maximum_duration: 0,
      issuer: 'https://accounts.example.com',
      client_id: 'c',
      client_secret: 's',
      scopes: [],
    }),
  },
  { name: 'websocket_tcp_converter', body: {}, read: () => ({ enabled: true }) },
  {
    name: 'user_agent_filter',
    body: { deny: ['^curl/', 'bot$'] },
    read: () => ({ enabled: true, allow: [], deny: ['^curl/', 'bot$'] }),
  },
  TLS_MODULE_CASES[4] as ModuleCase,
];

describe('module sub-resources', () => {
  async function exercise(path: string, c: ModuleCase, ownerPath: string) {
    expect((await call('GET', `${path}/${c.name}`)).status).toBe(404);
    const put = await call('PUT', `${path}/${c.name}`, c.body);
    expect(put.status, put.text).toBe(200);
    expect(put.json).toEqual(c.read());
    expect((await call('GET', `${path}/${c.name}`)).json).toEqual(c.read());
    const owner = await call('GET', ownerPath);
    const record =
      owner.json.routes?.find?.((r: { uri: string }) => r.uri === `${base}${path}`) ?? owner.json;
    expect(record[c.name]).toEqual(c.read());
    const del = await call('DELETE', `${path}/${c.name}`);
    expect(del.status).toBe(204);
    expect((await call('GET', `${path}/${c.name}`)).status).toBe(404);
    // DELETE of an unset module is also 204.
    expect((await call('DELETE', `${path}/${c.name}`)).status).toBe(204);
    const after = await call('GET', ownerPath);
    const rec2 =
      after.json.routes?.find?.((r: { uri: string }) => r.uri === `${base}${path}`) ?? after.json;
    expect(rec2[c.name]).toBeNull();
  }

  it.each(TLS_MODULE_CASES)('TLS edge $name', async (c) => {
    const edge = await call('POST', '/edges/tls', {});
    await exercise(`/edges/tls/${edge.json.id}`, c, `/edges/tls/${edge.json.id}`);
  });

  it.each(HTTPS_MODULE_CASES)('HTTPS edge $name', async (c) => {
    const id = await newHttpsEdge();
    await exercise(`/edges/https/${id}`, c, `/edges/https/${id}`);
  });

  it.each(ROUTE_MODULE_CASES)('route $name', async (c) => {
    const id = await newHttpsEdge();
    const rid = await newRoute(id);
    await exercise(`/edges/https/${id}/routes/${rid}`, c, `/edges/https/${id}`);
  });

  it('route saml: server-made URLs from the route id, a real certificate kept across updates', async () => {
    const id = await newHttpsEdge();
    const rid = await newRoute(id);
    const put = await call('PUT', `/edges/https/${id}/routes/${rid}/saml`, {
      idp_metadata: '<EntityDescriptor/>',
    });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({
      enabled: true,
      options_passthrough: false,
      cookie_prefix: '', // the service's SAML default (OAuth's is 'svc.')
      inactivity_timeout: 0,
      maximum_duration: 0,
      idp_metadata: '<EntityDescriptor/>',
      force_authn: false,
      allow_idp_initiated: true, // the service's default
      authorized_groups: [],
      entity_id: `${base}/saml/${rid}/metadata`,
      assertion_consumer_service_url: `${base}/saml/${rid}/acs`,
      single_logout_url: `${base}/saml/${rid}/slo`,
      request_signing_certificate_pem: expect.stringMatching(
        /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/,
      ),
      metadata_url: `${base}/saml/${rid}/metadata`,
      nameid_format: DEFAULT_NAMEID_FORMAT,
    });
    const { X509Certificate } = await import('node:crypto');
    const cert = new X509Certificate(put.json.request_signing_certificate_pem);
    expect(cert.subject).toBe(`CN=${rid}`);
    const again = await call('PATCH', `/edges/https/${id}/routes/${rid}`, {
      saml: { idp_metadata: '<x/>', force_authn: true },
    });
    expect(again.json.saml.force_authn).toBe(true);
    expect(again.json.saml.request_signing_certificate_pem).toBe(
      put.json.request_signing_certificate_pem,
    );
  });

  it('unknown module names are 404', async () => {
    const id = await newHttpsEdge();
    expect((await call('GET', `/edges/https/${id}/backend`)).status).toBe(404);
    const edge = await call('POST', '/edges/tls', {});
    expect((await call('PUT', `/edges/tls/${edge.json.id}/oauth`, {})).status).toBe(404);
  });
});

describe('PATCH semantics', () => {
  it('leaves absent fields and modules unchanged and replaces a present module whole', async () => {
    const id = await newHttpsEdge();
    const created = await call('POST', `/edges/https/${id}/routes`, {
      match_type: 'path_prefix',
      match: '/p',
      description: 'keep',
      metadata: 'm',
      backend: { backend_id: 'bkdtg_1' },
      oauth: {
        provider: { google: { email_domains: ['a.com'], email_addresses: ['x@a.com'] } },
        cookie_prefix: 'c.',
      },
    });
    const rid = created.json.id;
    const patched = await call('PATCH', `/edges/https/${id}/routes/${rid}`, {
      oauth: { provider: { github: { organizations: ['acme'] } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.description).toBe('keep');
    expect(patched.json.metadata).toBe('m');
    expect(patched.json.backend).toEqual(created.json.backend);
    // Whole replacement: the google provider and the cookie prefix are gone.
    expect(patched.json.oauth.provider.google).toBeNull();
    expect(patched.json.oauth.provider.github).toEqual({
      client_id: null,
      client_secret: null,
      scopes: [],
      email_addresses: [],
      email_domains: [],
      teams: [],
      organizations: ['acme'],
    });
    expect(patched.json.oauth.cookie_prefix).toBe('svc.');
    // An empty PATCH changes nothing.
    const empty = await call('PATCH', `/edges/https/${id}/routes/${rid}`, {});
    expect(empty.json).toEqual(patched.json);
  });

  it('cannot remove a module (null is refused and nothing changes)', async () => {
    const edge = await call('POST', '/edges/tls', { backend: { backend_id: 'bkdtg_1' } });
    const r = await call('PATCH', `/edges/tls/${edge.json.id}`, { backend: null });
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe('ERR_SVC_215');
    expect((await call('GET', `/edges/tls/${edge.json.id}`)).json).toEqual(edge.json);
  });

  it('hostports: an edge may keep its own hostports; another edge may not take them', async () => {
    const hp = hostport();
    const a = await call('POST', '/edges/tls', { hostports: [hp] });
    expect(
      (await call('PATCH', `/edges/tls/${a.json.id}`, { hostports: [hp, hostport()] })).status,
    ).toBe(200);
    const b = await newHttpsEdge();
    const clash = await call('PATCH', `/edges/https/${b}`, { hostports: [hp.toUpperCase()] });
    expect(clash.status).toBe(400);
    expect(clash.json.error_code).toBe('ERR_SVC_7122');
    // Releasing a hostport lets another edge claim it.
    expect((await call('PATCH', `/edges/tls/${a.json.id}`, { hostports: [] })).status).toBe(200);
    expect((await call('PATCH', `/edges/https/${b}`, { hostports: [hp] })).status).toBe(200);
  });
});

describe('bot users', () => {
  it('create, get, list, update and delete', async () => {
    const created = await call('POST', '/bot_users', { name: 'ci' });
    expect(created.status).toBe(201);
    const id = created.json.id;
    expect(id).toMatch(ID);
    expect(created.json).toEqual({
      id,
      uri: `${base}/bot_users/${id}`,
      name: 'ci',
      active: true,
      created_at: expect.stringMatching(CREATED_AT),
    });
    expect(Object.keys(created.json)).toEqual(['id', 'uri', 'name', 'active', 'created_at']);
    expect((await call('GET', `/bot_users/${id}`)).json).toEqual(created.json);
    const list = await call('GET', '/bot_users');
    expect(list.json).toEqual({
      bot_users: [created.json],
      uri: `${base}/bot_users`,
      next_page_uri: null,
    });
    const patched = await call('PATCH', `/bot_users/${id}`, { active: false });
    expect(patched.json).toEqual({ ...created.json, active: false });
    expect((await call('PATCH', `/bot_users/${id}`, { name: 'ci2' })).json).toEqual({
      ...created.json,
      active: false,
      name: 'ci2',
    });
    expect((await call('DELETE', `/bot_users/${id}`)).status).toBe(204);
    expect((await call('GET', `/bot_users/${id}`)).status).toBe(404);
  });
});

describe('account isolation', () => {
  it("another account's IDs are 404 and its lists and hostports are separate", async () => {
    // Two keys, two accounts, one server.
    const two = await startTestServer({ apiKeys: ['key-a', 'key-b'] });
    try {
      const a = clientFor(two, 'key-a');
      const b = clientFor(two, 'key-b');
      const hp = 'shared.example.com:443';
      const edge = await a('POST', '/edges/https', { hostports: [hp] });
      const rid = (
        await a('POST', `/edges/https/${edge.json.id}/routes`, {
          match_type: 'exact_path',
          match: '/',
        })
      ).json.id;
      const bot = await a('POST', '/bot_users', { name: 'x' });
      for (const [method, path, body] of [
        ['GET', `/edges/https/${edge.json.id}`, undefined],
        ['PATCH', `/edges/https/${edge.json.id}`, {}],
        ['DELETE', `/edges/https/${edge.json.id}`, undefined],
        ['GET', `/edges/https/${edge.json.id}/routes/${rid}`, undefined],
        ['PUT', `/edges/https/${edge.json.id}/mutual_tls`, { certificate_authority_ids: [] }],
        ['GET', `/bot_users/${bot.json.id}`, undefined],
        ['DELETE', `/bot_users/${bot.json.id}`, undefined],
      ] as const) {
        const r = await b(method, path, body);
        expect(r.status, `${method} ${path}`).toBe(404);
      }
      expect((await b('GET', '/edges/https')).json.https_edges).toEqual([]);
      expect((await b('GET', '/bot_users')).json.bot_users).toEqual([]);
      // Hostports are unique per account, not across accounts.
      expect((await b('POST', '/edges/tls', { hostports: [hp] })).status).toBe(201);
      expect((await a('GET', `/edges/https/${edge.json.id}`)).status).toBe(200);
    } finally {
      await two.close();
    }
  });
});

describe('IDs', () => {
  it('sort by creation even within one millisecond', async () => {
    const made = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/bot_users', { name: 'n' })),
    );
    const ids = made.map((r) => r.json.id as string);
    const list = await call('GET', '/bot_users?limit=100');
    const listed = (list.json.bot_users as { id: string }[]).map((b) => b.id);
    // Newest first = IDs descending; the 20 concurrent ones appear in creation (ID) order.
    expect(listed).toEqual([...listed].sort().reverse());
    for (const id of ids) expect(listed).toContain(id);
  });
});
