/**
 * Every validation rule (the spec's Limits table, api-notes' validation section and error
 * table), one bad input per rule: asserts the status, the `error_code`, the error body's shape
 * and that nothing changed in the account.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor, snapshot } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
const fx = { tls: '', https: '', https2: '', route: '', plainRoute: '', oidcRoute: '', bot: '' };
const TLS_HP = 'tls.example.com:443';
const HTTPS_HP = 'https.example.com:443';
/** 253 characters: four labels (63, 63, 63, 61) and three dots. */
const LONG_HOST_253 = ['a', 'b', 'c'].map((c) => c.repeat(63)).join('.') + '.' + 'd'.repeat(61);

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  fx.tls = (await call('POST', '/edges/tls', { hostports: [TLS_HP] })).json.id;
  fx.https = (await call('POST', '/edges/https', { hostports: [HTTPS_HP] })).json.id;
  fx.route = (
    await call('POST', `/edges/https/${fx.https}/routes`, {
      match_type: 'path_prefix',
      match: '/taken',
      oauth: { provider: { google: {} } },
    })
  ).json.id;
  fx.plainRoute = (
    await call('POST', `/edges/https/${fx.https}/routes`, {
      match_type: 'path_prefix',
      match: '/plain',
    })
  ).json.id;
  // At most one route of an edge may carry an auth module: the OIDC route has an edge of its own.
  fx.https2 = (
    await call('POST', '/edges/https', { hostports: ['https2.example.com:443'] })
  ).json.id;
  fx.oidcRoute = (
    await call('POST', `/edges/https/${fx.https2}/routes`, {
      match_type: 'path_prefix',
      match: '/oidc',
      oidc: { issuer: 'https://idp.example.com', client_id: 'c', client_secret: 's' },
    })
  ).json.id;
  fx.bot = (await call('POST', '/bot_users', { name: 'b' })).json.id;
});
afterAll(async () => {
  await server.close();
});

interface Case {
  readonly rule: string;
  readonly method: string;
  readonly path: () => string;
  readonly body?: unknown;
  readonly raw?: string | Uint8Array;
  readonly headers?: Record<string, string | undefined>;
  readonly status: number;
  readonly code: string;
  /** A fragment the message must contain. */
  readonly msg?: string;
  /** State the case needs, made before the snapshot and undone after. */
  readonly setup?: () => Promise<void>;
  readonly teardown?: () => Promise<void>;
}

const tls = () => '/edges/tls';
const tlsEdge = () => `/edges/tls/${fx.tls}`;
const https = () => '/edges/https';
const routes = () => `/edges/https/${fx.https}/routes`;
const route = () => `/edges/https/${fx.https}/routes/${fx.route}`;
const oidcRoute = () => `/edges/https/${fx.https2}/routes/${fx.oidcRoute}`;
const plainRoute = () => `/edges/https/${fx.https}/routes/${fx.plainRoute}`;
/** A whole circuit breaker: every field the service needs. */
const CB = { tripped_duration: 10, rolling_window: 10, num_buckets: 10, volume_threshold: 20 };
const bots = () => '/bot_users';
const newRoute = (extra: object) => ({ match_type: 'path_prefix', match: '/new', ...extra });

const CASES: Case[] = [
  // ---- rules of the hosted service (api-notes' last section) -------------------------------
  {
    rule: 'a domain hostport on a port other than 443',
    method: 'POST',
    path: tls,
    body: { hostports: ['db.example.com:5432'] },
    status: 400,
    code: 'ERR_SVC_7116',
    msg: 'does not use port 443',
  },
  {
    rule: 'a wildcard domain hostport on port 8443',
    method: 'PATCH',
    path: tlsEdge,
    body: { hostports: ['*.example.com:8443'] },
    status: 400,
    code: 'ERR_SVC_7116',
  },
  {
    rule: 'hostport not of the form hostname:port',
    method: 'POST',
    path: https,
    body: { hostports: ['http://a.example.com:443'] },
    status: 400,
    code: 'ERR_SVC_7104',
  },
  {
    rule: 'mutual_tls on a TLS edge terminated upstream',
    method: 'POST',
    path: tls,
    body: {
      hostports: ['10.0.0.1:5432'],
      tls_termination: { terminate_at: 'upstream' },
      mutual_tls: { certificate_authority_ids: ['ca_1'] },
    },
    status: 400,
    code: 'ERR_SVC_7062',
  },
  {
    rule: 'PUT mutual_tls on an edge terminated upstream',
    method: 'PUT',
    path: () => `${tlsEdge()}/mutual_tls`,
    body: { certificate_authority_ids: ['ca_1'] },
    status: 400,
    code: 'ERR_SVC_7062',
    setup: async () => {
      await call('PUT', `${tlsEdge()}/tls_termination`, { terminate_at: 'upstream' });
    },
    teardown: async () => {
      await call('DELETE', `${tlsEdge()}/tls_termination`);
    },
  },
  {
    rule: 'a second route with an auth module on one edge',
    method: 'POST',
    path: routes,
    body: newRoute({
      oidc: { issuer: 'https://i.example.com', client_id: 'c', client_secret: 's' },
    }),
    status: 400,
    code: 'ERR_SVC_7155',
  },
  {
    rule: 'PUT an auth module on a second route of one edge',
    method: 'PUT',
    path: () => `${plainRoute()}/saml`,
    body: { idp_metadata: '<x/>' },
    status: 400,
    code: 'ERR_SVC_7155',
  },
  {
    rule: 'cookie_prefix with a dash',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: {} }, cookie_prefix: 'my-app.' },
    status: 400,
    code: 'ERR_SVC_7042',
  },
  {
    rule: 'a partial circuit breaker',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { error_threshold_percentage: 0.5, num_buckets: 10 },
    status: 400,
    code: 'ERR_SVC_7016',
    msg: 'rolling_window is required',
  },
  {
    rule: 'a circuit breaker without volume_threshold',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { tripped_duration: 10, rolling_window: 10, num_buckets: 10 },
    status: 400,
    code: 'ERR_SVC_7018',
  },
  {
    rule: 'a request header named __proto__ (would be dropped by any copy into an object)',
    method: 'PUT',
    path: () => `${route()}/request_headers`,
    raw: '{"add":{"X-A":"a","__proto__":"b"}}',
    status: 400,
    code: 'ERR_SVC_215',
    msg: 'add: a key named "__proto__" is not accepted',
  },
  {
    rule: 'a response header named __proto__, spelled with an escape',
    method: 'PUT',
    path: () => `${route()}/response_headers`,
    raw: '{"add":{"\\u005f_proto__":"b"}}',
    status: 400,
    code: 'ERR_SVC_215',
    msg: '"__proto__"',
  },
  {
    rule: 'a __proto__ key at the top of a create',
    method: 'POST',
    path: tls,
    raw: '{"description":"d","__proto__":{"description":"e"}}',
    status: 400,
    code: 'ERR_SVC_215',
    msg: 'the body: a key named "__proto__"',
  },
  {
    rule: 'request header value with a tab',
    method: 'PUT',
    path: () => `${route()}/request_headers`,
    body: { add: { 'X-A': 'a\tb' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'response header value with an escape character',
    method: 'PUT',
    path: () => `${route()}/response_headers`,
    body: { add: { 'X-A': 'a\u001b[2J' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'request header value with DEL',
    method: 'PUT',
    path: () => `${route()}/request_headers`,
    body: { add: { 'X-A': 'a\u007f' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  ...['(?=bot)x', '(?<!a)b', '(a)\\1', 'a++', 'a*+', '(?>a)'].map(
    (pattern): Case => ({
      rule: `a user agent pattern that is not RE2: ${pattern}`,
      method: 'PUT',
      path: () => `${route()}/user_agent_filter`,
      body: { deny: [pattern] },
      status: 400,
      code: 'ERR_SVC_215',
      msg: 'not an RE2 regular expression',
    }),
  ),
  ...['hosted_hooks', 'amazon_sns', 'brevo', 'linear'].map(
    (provider): Case => ({
      rule: `webhook provider ${provider} (not in the service's list)`,
      method: 'PUT',
      path: () => `${route()}/webhook_verification`,
      body: { provider, secret: 's' },
      status: 400,
      code: 'ERR_SVC_215',
    }),
  ),
  // ---- protocol --------------------------------------------------------------------------
  {
    rule: 'missing version header',
    method: 'GET',
    path: tls,
    headers: { 'svc-version': undefined },
    status: 400,
    code: 'ERR_SVC_218',
  },
  {
    rule: 'wrong version header',
    method: 'GET',
    path: tls,
    headers: { 'svc-version': '1' },
    status: 400,
    code: 'ERR_SVC_217',
  },
  {
    rule: 'missing API key',
    method: 'POST',
    path: bots,
    body: { name: 'x' },
    headers: { authorization: undefined },
    status: 401,
    code: 'ERR_SVC_401',
  },
  {
    rule: 'unknown API key',
    method: 'POST',
    path: bots,
    body: { name: 'x' },
    headers: { authorization: 'Bearer nope' },
    status: 401,
    code: 'ERR_SVC_401',
  },
  {
    rule: 'malformed Authorization',
    method: 'GET',
    path: bots,
    headers: { authorization: 'Basic abc' },
    status: 401,
    code: 'ERR_SVC_401',
  },
  {
    rule: 'wrong content type',
    method: 'POST',
    path: bots,
    raw: '{"name":"x"}',
    headers: { 'content-type': 'text/plain' },
    status: 400,
    code: 'ERR_SVC_210',
  },
  {
    rule: 'missing content type',
    method: 'POST',
    path: bots,
    raw: '{"name":"x"}',
    headers: { 'content-type': undefined },
    status: 400,
    code: 'ERR_SVC_210',
  },
  {
    rule: 'body not JSON',
    method: 'POST',
    path: tls,
    raw: '{"description":',
    status: 400,
    code: 'ERR_SVC_213',
  },
  { rule: 'empty body', method: 'POST', path: tls, raw: '', status: 400, code: 'ERR_SVC_213' },
  {
    rule: 'a body that is not UTF-8 (never replaced with U+FFFD)',
    method: 'POST',
    path: tls,
    raw: new Uint8Array([...Buffer.from('{"description":"a'), 0xff, ...Buffer.from('"}')]),
    status: 400,
    code: 'ERR_SVC_213',
    msg: 'not valid UTF-8',
  },
  {
    rule: 'a body with a truncated UTF-8 sequence',
    method: 'PATCH',
    path: tlsEdge,
    raw: new Uint8Array([...Buffer.from('{"description":"caf'), 0xc3, ...Buffer.from('"}')]),
    status: 400,
    code: 'ERR_SVC_213',
    msg: 'not valid UTF-8',
  },
  {
    rule: 'body not an object',
    method: 'POST',
    path: tls,
    body: [1, 2],
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'unknown route',
    method: 'GET',
    path: () => '/edges/udp',
    status: 404,
    code: 'ERR_SVC_404',
  },
  { rule: 'wrong method', method: 'PUT', path: tls, body: {}, status: 405, code: 'ERR_SVC_405' },
  {
    rule: 'path ID with the wrong prefix',
    method: 'GET',
    path: () => `/edges/tls/${fx.https}`,
    status: 400,
    code: 'ERR_SVC_227',
  },
  {
    rule: 'route path ID with the wrong prefix',
    method: 'DELETE',
    path: () => `/edges/https/${fx.https}/routes/${fx.https}`,
    status: 400,
    code: 'ERR_SVC_227',
  },
  {
    rule: 'unknown query parameter on a list',
    method: 'GET',
    path: () => '/edges/tls?page=2',
    status: 400,
    code: 'ERR_SVC_231',
    msg: 'before_id, beforeId, limit',
  },
  {
    rule: 'query parameter on a non-list',
    method: 'DELETE',
    path: () => `/edges/tls/${fx.tls}?force=true`,
    status: 400,
    code: 'ERR_SVC_231',
  },
  {
    rule: 'limit 0',
    method: 'GET',
    path: () => '/bot_users?limit=0',
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'limit 101',
    method: 'GET',
    path: () => '/bot_users?limit=101',
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'limit not a number',
    method: 'GET',
    path: () => '/bot_users?limit=ten',
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'before_id with the wrong prefix',
    method: 'GET',
    path: () => `/edges/https?before_id=${fx.tls}`,
    status: 400,
    code: 'ERR_SVC_227',
  },

  // ---- edges -----------------------------------------------------------------------------
  {
    rule: 'unknown field names the accepted ones',
    method: 'POST',
    path: tls,
    body: { name: 'x' },
    status: 400,
    code: 'ERR_SVC_214',
    msg: 'accepted fields: description, metadata, hostports',
  },
  {
    rule: 'unknown field inside a module',
    method: 'POST',
    path: tls,
    body: { backend: { backend_id: 'bkdtg_1', weight: 1 } },
    status: 400,
    code: 'ERR_SVC_214',
    msg: 'enabled, backend_id',
  },
  {
    rule: 'description over 255 bytes (UTF-8)',
    method: 'POST',
    path: tls,
    body: { description: 'é'.repeat(128) },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'metadata over 4096 bytes',
    method: 'POST',
    path: https,
    body: { metadata: 'x'.repeat(4097) },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'description of wrong type',
    method: 'POST',
    path: tls,
    body: { description: 5 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'hostport without a port',
    method: 'POST',
    path: tls,
    body: { hostports: ['a.example.com'] },
    status: 400,
    code: 'ERR_SVC_7104',
  },
  {
    rule: 'hostport port 0',
    method: 'POST',
    path: tls,
    body: { hostports: ['a.example.com:0'] },
    status: 400,
    code: 'ERR_SVC_7112',
  },
  {
    rule: 'a port with a leading zero (another spelling of a taken hostport)',
    method: 'POST',
    path: https,
    body: { hostports: [TLS_HP.replace(':443', ':0443')] },
    status: 400,
    code: 'ERR_SVC_7104',
  },
  {
    rule: 'a port with two leading zeros',
    method: 'PATCH',
    path: tlsEdge,
    body: { hostports: [HTTPS_HP.replace(':443', ':00443')] },
    status: 400,
    code: 'ERR_SVC_7104',
  },
  {
    rule: 'a host name of 254 characters (DNS allows 253)',
    method: 'POST',
    path: tls,
    body: { hostports: [`${LONG_HOST_253}x:443`] },
    status: 400,
    code: 'ERR_SVC_7104',
  },
  {
    rule: 'hostport port 65536',
    method: 'POST',
    path: https,
    body: { hostports: ['a.example.com:65536'] },
    status: 400,
    code: 'ERR_SVC_7112',
  },
  {
    rule: 'duplicate hostports in one body',
    method: 'POST',
    path: tls,
    body: { hostports: ['d.example.com:443', 'd.example.com:443'] },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'hostport used by a TLS edge',
    method: 'POST',
    path: https,
    body: { hostports: [TLS_HP] },
    status: 400,
    code: 'ERR_SVC_7122',
  },
  {
    rule: 'hostport used by an HTTPS edge',
    method: 'PATCH',
    path: tlsEdge,
    body: { hostports: [HTTPS_HP] },
    status: 400,
    code: 'ERR_SVC_7122',
  },
  {
    rule: 'backend_id with the wrong prefix',
    method: 'POST',
    path: tls,
    body: { backend: { backend_id: 'ipp_1' } },
    status: 400,
    code: 'ERR_SVC_227',
  },
  {
    rule: 'backend_id missing',
    method: 'PUT',
    path: () => `${tlsEdge()}/backend`,
    body: {},
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'ip_policy_ids with the wrong prefix',
    method: 'POST',
    path: tls,
    body: { ip_restriction: { ip_policy_ids: ['ca_1'] } },
    status: 400,
    code: 'ERR_SVC_227',
  },
  {
    rule: 'ip_restriction without IP policies',
    method: 'PUT',
    path: () => `${tlsEdge()}/ip_restriction`,
    body: { ip_policy_ids: [] },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'certificate_authority_ids with the wrong prefix',
    method: 'POST',
    path: https,
    body: { mutual_tls: { certificate_authority_ids: ['ipp_1'] } },
    status: 400,
    code: 'ERR_SVC_227',
  },
  {
    rule: 'terminate_at invalid',
    method: 'PUT',
    path: () => `${tlsEdge()}/tls_termination`,
    body: { terminate_at: 'origin' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'min_version with terminate_at upstream',
    method: 'PUT',
    path: () => `${tlsEdge()}/tls_termination`,
    body: { terminate_at: 'upstream', min_version: '1.2' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'min_version not a TLS version',
    method: 'POST',
    path: tls,
    body: { tls_termination: { min_version: '1.4' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'terminate_at on an HTTPS edge',
    method: 'POST',
    path: https,
    body: { tls_termination: { terminate_at: 'edge' } },
    status: 400,
    code: 'ERR_SVC_214',
  },
  {
    rule: 'traffic_policy on an HTTPS edge',
    method: 'POST',
    path: https,
    body: { traffic_policy: { value: 'x' } },
    status: 400,
    code: 'ERR_SVC_214',
  },
  {
    rule: 'traffic_policy without value',
    method: 'PATCH',
    path: tlsEdge,
    body: { traffic_policy: {} },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'enabled of wrong type',
    method: 'PATCH',
    path: tlsEdge,
    body: { backend: { enabled: 'yes', backend_id: 'bkdtg_1' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'PATCH id that differs from the path',
    method: 'PATCH',
    path: tlsEdge,
    body: { id: 'edgtls_other' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'PATCH id with the wrong prefix',
    method: 'PATCH',
    path: tlsEdge,
    body: { id: fx.bot || 'bot_x' },
    status: 400,
    code: 'ERR_SVC_227',
  },
  {
    rule: 'PATCH cannot remove a module',
    method: 'PATCH',
    path: () => `/edges/https/${fx.https}`,
    body: { tls_termination: null },
    status: 400,
    code: 'ERR_SVC_215',
  },

  // ---- routes ----------------------------------------------------------------------------
  {
    rule: 'route without match_type',
    method: 'POST',
    path: routes,
    body: { match: '/x' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'route match_type invalid',
    method: 'POST',
    path: routes,
    body: { match_type: 'regex', match: '/x' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'route match not starting with /',
    method: 'POST',
    path: routes,
    body: { match_type: 'exact_path', match: 'x' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'route match already used on the edge',
    method: 'POST',
    path: routes,
    body: { match_type: 'exact_path', match: '/taken' },
    status: 400,
    code: 'ERR_SVC_7126',
  },
  {
    rule: 'PATCH route onto a used match',
    method: 'PATCH',
    path: plainRoute,
    body: { match: '/taken' },
    status: 400,
    code: 'ERR_SVC_7126',
  },
  {
    rule: 'route edge_id differs from the path',
    method: 'POST',
    path: routes,
    body: newRoute({ edge_id: 'edghts_other' }),
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'route description over 255 bytes',
    method: 'POST',
    path: routes,
    body: newRoute({ description: 'x'.repeat(256) }),
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'route metadata over 4096 bytes',
    method: 'PATCH',
    path: route,
    body: { metadata: '€'.repeat(1366) },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'two auth modules on create',
    method: 'POST',
    path: routes,
    body: newRoute({ oauth: { provider: { google: {} } }, saml: { idp_metadata: '<x/>' } }),
    status: 400,
    code: 'ERR_SVC_7079',
  },
  {
    rule: 'PUT a second auth module',
    method: 'PUT',
    path: () => `${route()}/oidc`,
    body: { issuer: 'https://i.example.com', client_id: 'c', client_secret: 's' },
    status: 400,
    code: 'ERR_SVC_7079',
  },
  {
    rule: 'PATCH a second auth module',
    method: 'PATCH',
    path: oidcRoute,
    body: { saml: { idp_metadata: '<x/>' } },
    status: 400,
    code: 'ERR_SVC_7079',
  },
  {
    rule: 'circuit breaker num_buckets over 128',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, num_buckets: 129 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'circuit breaker num_buckets 0',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, num_buckets: 0 },
    status: 400,
    code: 'ERR_SVC_7018',
  },
  {
    rule: 'circuit breaker error_threshold_percentage over 1',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, error_threshold_percentage: 50 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'circuit breaker error_threshold_percentage negative',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, error_threshold_percentage: -0.1 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'circuit breaker tripped_duration 0',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, tripped_duration: 0 },
    status: 400,
    code: 'ERR_SVC_7016',
  },
  {
    rule: 'circuit breaker rolling_window 0',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, rolling_window: 0 },
    status: 400,
    code: 'ERR_SVC_7017',
  },
  {
    rule: 'uint32 over 4294967295',
    method: 'PUT',
    path: () => `${route()}/circuit_breaker`,
    body: { ...CB, volume_threshold: 4_294_967_296 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'uint32 negative',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: {} }, inactivity_timeout: -1 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'uint32 fractional',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: {} }, maximum_duration: 1.5 },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'webhook provider unknown',
    method: 'PUT',
    path: () => `${route()}/webhook_verification`,
    body: { provider: 'myhooks', secret: 's' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'webhook provider missing',
    method: 'PUT',
    path: () => `${route()}/webhook_verification`,
    body: { secret: 's' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'webhook provider needs a secret',
    method: 'PUT',
    path: () => `${route()}/webhook_verification`,
    body: { provider: 'stripe' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'webhook sns takes no secret',
    method: 'PUT',
    path: () => `${route()}/webhook_verification`,
    body: { provider: 'SNS', secret: 's' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth with two providers',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: {}, github: {} } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth with no provider',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: {} },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth unknown provider',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { okta: {} } },
    status: 400,
    code: 'ERR_SVC_214',
  },
  {
    rule: 'oauth client_id without client_secret',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { client_id: 'c' } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth client_secret without client_id',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { client_secret: 's' } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth scopes without own client',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { scopes: ['email'] } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth email not lower-case',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { email_addresses: ['A@b.com'] } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth domain not lower-case',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { email_domains: ['B.com'] } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth duplicate list entries',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { email_domains: ['b.com', 'b.com'] } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth empty list entry',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { google: { email_domains: [''] } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oauth teams on a non-github provider',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { gitlab: { teams: ['a/b'] } } },
    status: 400,
    code: 'ERR_SVC_214',
  },
  {
    rule: 'oauth github team not org/team',
    method: 'PUT',
    path: () => `${route()}/oauth`,
    body: { provider: { github: { teams: ['team'] } } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'saml without idp_metadata',
    method: 'PUT',
    path: () => `${oidcRoute()}/saml`,
    body: { force_authn: true },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'saml nameid_format unsupported',
    method: 'PUT',
    path: () => `${route()}/saml`,
    body: { idp_metadata: '<x/>', nameid_format: 'urn:x' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'saml server-made field sent',
    method: 'PUT',
    path: () => `${route()}/saml`,
    body: { idp_metadata: '<x/>', entity_id: 'https://x' },
    status: 400,
    code: 'ERR_SVC_214',
  },
  {
    rule: 'oidc issuer not a URL',
    method: 'PUT',
    path: () => `${oidcRoute()}/oidc`,
    body: { issuer: 'idp', client_id: 'c', client_secret: 's' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'oidc without client_secret',
    method: 'PUT',
    path: () => `${oidcRoute()}/oidc`,
    body: { issuer: 'https://i.example.com', client_id: 'c' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'request header name invalid',
    method: 'PUT',
    path: () => `${route()}/request_headers`,
    body: { add: { 'bad name': 'v' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'request header value with CRLF',
    method: 'PUT',
    path: () => `${route()}/request_headers`,
    body: { add: { 'x-a': 'v\r\nx-b: w' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'response header names duplicate ignoring case',
    method: 'PUT',
    path: () => `${route()}/response_headers`,
    body: { add: { 'X-A': '1', 'x-a': '2' } },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'user agent filter invalid regex',
    method: 'PUT',
    path: () => `${route()}/user_agent_filter`,
    body: { allow: ['(unclosed'] },
    status: 400,
    code: 'ERR_SVC_215',
  },

  // ---- bot users -------------------------------------------------------------------------
  {
    rule: 'bot user without name',
    method: 'POST',
    path: bots,
    body: { active: true },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'bot user empty name',
    method: 'POST',
    path: bots,
    body: { name: '' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'bot user name over 255 bytes',
    method: 'POST',
    path: bots,
    body: { name: 'n'.repeat(256) },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'bot user active not boolean',
    method: 'PATCH',
    path: () => `/bot_users/${fx.bot}`,
    body: { active: 'no' },
    status: 400,
    code: 'ERR_SVC_215',
  },
  {
    rule: 'bot user unknown field',
    method: 'POST',
    path: bots,
    body: { name: 'x', role: 'admin' },
    status: 400,
    code: 'ERR_SVC_214',
    msg: 'accepted fields: name, active',
  },
];

it.each(CASES)('$rule -> $status $code', async (c) => {
  await c.setup?.();
  const before = await snapshot(call);
  const options = {
    ...(c.headers === undefined ? {} : { headers: c.headers }),
    ...(c.raw === undefined ? {} : { raw: c.raw }),
  };
  const r = await call(c.method, c.path(), c.body, options);
  expect(r.status, r.text).toBe(c.status);
  const op = r.headers.get('svc-operation-id');
  expect(op).toMatch(/^op_[0-9A-Za-z]{27}$/);
  expect(r.json).toEqual({
    error_code: c.code,
    status_code: c.status,
    msg: expect.any(String),
    details: { operation_id: op },
  });
  expect(Object.keys(r.json)).toEqual(['error_code', 'status_code', 'msg', 'details']);
  if (c.msg !== undefined) expect(r.json.msg).toContain(c.msg);
  expect(r.text).not.toMatch(/at .*\.(ts|js):\d+/);
  expect(await snapshot(call)).toEqual(before);
  await c.teardown?.();
});

it('405 carries Allow', async () => {
  const r = await call('POST', `/edges/tls/${fx.tls}`, {});
  expect(r.status).toBe(405);
  expect(r.headers.get('allow')).toBe('GET, PATCH, DELETE');
});
