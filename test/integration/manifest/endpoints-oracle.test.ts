/**
 * The client's action table held against the local server (the oracle, over real HTTP): for
 * every action type in every phase, and for every config field of the table a valid value, an
 * out-of-bound one (where the field has bounds) and one of the wrong type, a generated policy
 * is accepted by `validate` (the manifest pipeline) if and only if `POST /endpoints` accepts it.
 * A field added to the table without samples here fails the coverage check. URL forms and
 * bindings are held against the server the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ACTIONS, PHASES, type Phase } from '../../../src/hosted/policy-actions.js';
import { liveIpPolicies } from '../../helpers/live-ip-policies.js';
import { startTestServer } from '../../helpers/server.js';
import { buildFrom, errorLines } from '../../unit/manifest/helpers.js';
import { type Call, clientFor } from '../server/client.js';

type Config = Record<string, unknown>;

const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----';
const OWN = { client_id: 'my-client', client_secret: 'my-secret' };
const headers = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, 'v']));
/** `${expr}` as a policy writes it (not a JavaScript template). */
const interp = (expr: string) => `$${'{'}${expr}}`;
const names = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`);

const JWT = {
  issuer: { allow_list: [{ value: 'https://id.example.com/' }] },
  http: { tokens: [{ type: 'jwt', method: 'header', name: 'authorization', prefix: 'Bearer ' }] },
  jws: {
    allowed_algorithms: ['RS256'],
    keys: { sources: { additional_jkus: ['https://id.example.com/jwks.json'] } },
  },
};
const RATE = {
  name: 'per-ip',
  algorithm: 'sliding_window',
  capacity: 10,
  rate: '60s',
  bucket_key: ['conn.client_ip'],
};

/** The smallest config each action type is accepted with. */
const BASE: Record<string, Config> = {
  'forward-internal': { url: 'https://web.internal' },
  'restrict-ips': { allow: ['10.0.0.0/8'] },
  'terminate-tls': {},
  'add-headers': { headers: { 'x-a': 'b' } },
  'remove-headers': { headers: ['x-a'] },
  'compress-response': {},
  'verify-webhook': { provider: 'github', secret: 'whsec-1' },
  'circuit-breaker': {},
  oauth: { provider: 'google' },
  'openid-connect': { issuer_url: 'https://id.example.com' },
  saml: { idp_metadata: '<EntityDescriptor/>' },
  deny: {},
  'custom-response': {},
  'close-connection': {},
  'set-vars': { vars: [{ a: 1 }] },
  'ai-gateway': {},
  'basic-auth': { credentials: ['alice:correct-horse'] },
  'http-request': { url: 'https://auth.internal/check' },
  'jwt-validation': JWT,
  log: { metadata: { route: 'api' } },
  'owasp-crs-request': {},
  'owasp-crs-response': {},
  'rate-limit': RATE,
  redirect: { to: 'https://www.example.com' },
  'request-body-find-replace': { replacements: [{ from: 'a', to: 'b' }] },
  'response-body-find-replace': { replacements: [{ from: 'a', to: 'b' }] },
  'sse-find-replace': { replacements: [{ from: 'a', to: 'b' }] },
  'url-rewrite': { to: '/new' },
};

interface Samples {
  /** Merged into the base config: accepted. */
  readonly valid: Config;
  /** Each merged into the base config: refused (out of bounds, or a rule of the field's). */
  readonly bound?: readonly Config[];
  /** Merged into the base config: refused (the wrong type). */
  readonly wrong: Config;
}

const duration = (field: string): Samples => ({
  valid: { [field]: '15m' },
  bound: [{ [field]: 'soon' }],
  wrong: { [field]: 15 },
});
const session: Record<string, Samples> = {
  client_id: {
    valid: OWN,
    bound: [{ ...OWN, client_id: '' }, { client_id: 'alone' }],
    wrong: { ...OWN, client_id: 1 },
  },
  client_secret: {
    valid: OWN,
    bound: [{ ...OWN, client_secret: '' }, { client_secret: 'alone' }],
    wrong: { ...OWN, client_secret: 1 },
  },
  scopes: {
    valid: { ...OWN, scopes: ['email'] },
    bound: [{ scopes: ['email'] }],
    wrong: { ...OWN, scopes: 'email' },
  },
  allow_cors_preflight: {
    valid: { allow_cors_preflight: true },
    wrong: { allow_cors_preflight: 'yes' },
  },
  max_session_duration: duration('max_session_duration'),
  userinfo_refresh_interval: duration('userinfo_refresh_interval'),
  authz_url_params: {
    valid: { authz_url_params: { prompt: 'login' } },
    bound: [{ authz_url_params: { prompt: interp('req.host') } }],
    wrong: { authz_url_params: 'prompt=login' },
  },
  auth_id: { valid: { auth_id: 'app' }, bound: [{ auth_id: '' }], wrong: { auth_id: 1 } },
  auth_cookie_domain: {
    valid: { auth_cookie_domain: 'example.com' },
    bound: [{ auth_cookie_domain: '' }],
    wrong: { auth_cookie_domain: true },
  },
};

const SAMPLES: Record<string, Record<string, Samples>> = {
  'forward-internal': {
    url: {
      valid: { url: 'http://api.internal:8080' },
      bound: [
        { url: 'https://api.example.com' },
        { url: 'tcp://api.internal:5432' },
        { url: interp("'https://' +") },
      ],
      wrong: { url: 42 },
    },
    on_error: {
      valid: { on_error: 'continue' },
      bound: [{ on_error: 'retry' }],
      wrong: { on_error: true },
    },
  },
  'restrict-ips': {
    enforce: { valid: { enforce: false }, wrong: { enforce: 'yes' } },
    allow: {
      valid: { allow: ['192.168.0.0/16', '::/0', interp("secrets.get('net', 'office')")] },
      bound: [{ allow: ['10.0.0.0/33'] }],
      wrong: { allow: '10.0.0.0/8' },
    },
    deny: {
      valid: { deny: ['10.1.0.0/16'] },
      bound: [{ deny: ['10.0.0.1'] }],
      wrong: { deny: [10] },
    },
    ip_policies: {
      valid: { ip_policies: ['ipp_abc123'] },
      bound: [{ ip_policies: ['pol_1'] }, { ip_policies: [interp('vars.p')] }],
      wrong: { ip_policies: 'ipp_abc123' },
    },
  },
  'terminate-tls': {
    min_version: {
      valid: { min_version: '1.3' },
      bound: [{ min_version: '1.1' }, { min_version: '1.3', max_version: '1.2' }],
      wrong: { min_version: true },
    },
    max_version: {
      valid: { max_version: 1.2 },
      bound: [{ max_version: '1.4' }],
      wrong: { max_version: [] },
    },
    server_certificate: {
      valid: { server_certificate: PEM_CERT, server_private_key: PEM_KEY },
      bound: [
        { server_certificate: 'cert', server_private_key: PEM_KEY },
        { server_certificate: PEM_CERT },
      ],
      wrong: { server_certificate: 1, server_private_key: PEM_KEY },
    },
    server_private_key: {
      valid: { server_certificate: PEM_CERT, server_private_key: PEM_KEY },
      bound: [
        { server_certificate: PEM_CERT, server_private_key: 'key' },
        { server_private_key: PEM_KEY },
      ],
      wrong: { server_certificate: PEM_CERT, server_private_key: {} },
    },
    mutual_tls_certificate_authorities: {
      valid: {
        mutual_tls_certificate_authorities: ['ca_123', PEM_CERT, interp("secrets.get('t', 'ca')")],
      },
      bound: [{ mutual_tls_certificate_authorities: ['ca-123'] }],
      wrong: { mutual_tls_certificate_authorities: 'ca_123' },
    },
    mutual_tls_verification_strategy: {
      valid: { mutual_tls_verification_strategy: 'require-any' },
      bound: [{ mutual_tls_verification_strategy: 'verify' }],
      wrong: { mutual_tls_verification_strategy: 1 },
    },
  },
  'add-headers': {
    headers: {
      valid: { headers: headers(10) },
      bound: [
        { headers: headers(11) },
        { headers: {} },
        { headers: { 'User-Agent': 'x' } },
        { headers: { 'x a': 'b' } },
      ],
      wrong: { headers: ['x-a'] },
    },
  },
  'remove-headers': {
    headers: {
      valid: { headers: names(10) },
      bound: [
        { headers: names(11) },
        { headers: [] },
        { headers: ['x a'] },
        { headers: ['User-Agent'] },
        { headers: [interp('vars.h')] },
      ],
      wrong: { headers: 'x-a' },
    },
  },
  'compress-response': {
    algorithms: {
      valid: { algorithms: ['br', 'gzip'] },
      bound: [{ algorithms: ['zstd'] }, { algorithms: [] }, { algorithms: ['br', 'br'] }],
      wrong: { algorithms: 'gzip' },
    },
  },
  'verify-webhook': {
    provider: {
      valid: { provider: 'Stripe' },
      bound: [{ provider: 'nosuch' }],
      wrong: { provider: 5 },
    },
    secret: {
      valid: { provider: 'sns', secret: interp("secrets.get('aws', 'topic-owner')") },
      bound: [{ secret: '' }, { provider: 'sns', secret: undefined }, { secret: interp('req.') }],
      wrong: { secret: 5 },
    },
    enforce: { valid: { enforce: false }, wrong: { enforce: 'no' } },
  },
  'circuit-breaker': {
    error_threshold: {
      valid: { error_threshold: 0 },
      bound: [{ error_threshold: 1.5 }, { error_threshold: -0.1 }],
      wrong: { error_threshold: '0.5' },
    },
    volume_threshold: {
      valid: { volume_threshold: 2_000_000_000 },
      bound: [
        { volume_threshold: 0 },
        { volume_threshold: 2_000_000_001 },
        { volume_threshold: 1.5 },
      ],
      wrong: { volume_threshold: '10' },
    },
    window_duration: {
      valid: { window_duration: '2m' },
      bound: [{ window_duration: '3m' }, { window_duration: '500ms' }],
      wrong: { window_duration: 10 },
    },
    tripped_duration: {
      valid: { tripped_duration: '1s' },
      bound: [{ tripped_duration: '121s' }],
      wrong: { tripped_duration: false },
    },
    num_buckets: {
      valid: { num_buckets: 10 },
      bound: [{ num_buckets: 0 }, { num_buckets: 129 }],
      wrong: { num_buckets: '10' },
    },
    enforce: { valid: { enforce: false }, wrong: { enforce: 1 } },
  },
  oauth: {
    provider: {
      valid: { provider: 'amazon', ...OWN },
      bound: [{ provider: 'okta' }, { provider: 'facebook' }],
      wrong: { provider: 1 },
    },
    ...session,
    idle_session_timeout: duration('idle_session_timeout'),
  },
  'openid-connect': {
    issuer_url: {
      valid: { issuer_url: 'https://login.example.com/o' },
      bound: [{ issuer_url: 'not a url' }],
      wrong: { issuer_url: 1 },
    },
    ...Object.fromEntries(Object.entries(session).filter(([k]) => k !== 'scopes')),
    idle_session_duration: duration('idle_session_duration'),
    idle_session_timeout: {
      valid: { idle_session_timeout: '15m' },
      bound: [{ idle_session_timeout: '15m', idle_session_duration: '15m' }],
      wrong: { idle_session_timeout: 15 },
    },
    scopes: {
      valid: { scopes: ['openid'] },
      bound: [{ scopes: [''] }],
      wrong: { scopes: 'openid' },
    },
  },
  saml: {
    idp_metadata: {
      valid: { idp_metadata: '<x/>' },
      bound: [{ idp_metadata: '' }],
      wrong: { idp_metadata: 1 },
    },
  },
  deny: {
    status_code: {
      valid: { status_code: 404 },
      bound: [{ status_code: 600 }, { status_code: 99 }],
      wrong: { status_code: '404' },
    },
  },
  'custom-response': {
    status_code: {
      valid: { status_code: 599 },
      bound: [{ status_code: 1000 }],
      wrong: { status_code: 'x' },
    },
    body: {
      valid: { body: `hello ${interp('req.host')}` },
      bound: [{ body: interp('req.host ==') }, { body: `$${'{'}req.host` }],
      wrong: { body: 1 },
    },
    content: {
      valid: { content: 'gone' },
      bound: [{ content: 'a', body: 'b' }],
      wrong: { content: [] },
    },
    headers: {
      valid: { headers: { 'x-a': 'b' } },
      bound: [{ headers: headers(11) }],
      wrong: { headers: 'x' },
    },
  },
  'close-connection': {},
  'set-vars': {
    vars: {
      valid: { vars: [{ b: 'x' }, { c: interp('req.host') }] },
      bound: [{ vars: [{ a: 1, b: 2 }] }, { vars: [{ a: 'x' }, { b: interp('vars.a') }] }],
      wrong: { vars: { a: 1 } },
    },
  },
  'ai-gateway': {
    on_error: {
      valid: { on_error: 'continue' },
      bound: [{ on_error: 'retry' }],
      wrong: { on_error: 1 },
    },
    per_request_timeout: duration('per_request_timeout'),
    total_timeout: duration('total_timeout'),
    providers: {
      valid: {
        providers: [{ id: 'openai', api_keys: [{ value: interp("secrets.get('ai', 'k')") }] }],
      },
      bound: [{ providers: [{ id: '' }] }, { providers: [{ id: interp('vars.p') }] }],
      wrong: { providers: { id: 'openai' } },
    },
  },
  'basic-auth': {
    credentials: {
      valid: { credentials: [`bob:${interp("secrets.get('v', 'pw')")}`, interp('vars.c')] },
      bound: [
        { credentials: ['bob:short'] },
        { credentials: ['bobpassword'] },
        { credentials: [`${interp('vars.u')}password`] },
        { credentials: [] },
        { credentials: Array(11).fill('a:abcdefgh') },
      ],
      wrong: { credentials: 'bob:longpassword' },
    },
    realm: {
      valid: { realm: 'ops' },
      bound: [{ realm: 'x'.repeat(129) }, { realm: 'é' }, { realm: interp('req.host') }],
      wrong: { realm: 1 },
    },
    enforce: { valid: { enforce: false }, wrong: { enforce: 'no' } },
  },
  'http-request': {
    url: {
      valid: { url: interp("'https://a.internal/' + req.host") },
      bound: [{ url: 'not a url' }],
      wrong: { url: 1 },
    },
    method: {
      valid: { method: 'POST' },
      bound: [{ method: 'HEAD' }, { method: interp('req.method') }],
      wrong: { method: 1 },
    },
    query_params: {
      valid: { query_params: [{ key: interp('vars.k'), value: interp('req.host') }] },
      bound: [
        { query_params: Array(33).fill({ key: 'k', value: 'v' }) },
        { query_params: [{ key: 'k'.repeat(129), value: 'v' }] },
        { query_params: [{ key: 'k', value: 'v'.repeat(8193) }] },
      ],
      wrong: { query_params: { k: 'v' } },
    },
    headers: {
      valid: { headers: { 'x-a': interp('conn.client_ip') } },
      bound: [{ headers: headers(11) }],
      wrong: { headers: ['x-a'] },
    },
    body: {
      valid: { body: interp('req.url') },
      bound: [{ body: interp('(') }],
      wrong: { body: {} },
    },
    max_redirects: {
      valid: { max_redirects: 100 },
      bound: [{ max_redirects: 101 }, { max_redirects: -1 }],
      wrong: { max_redirects: '1' },
    },
    timeout: {
      valid: { timeout: '30s' },
      bound: [{ timeout: '31s' }, { timeout: '999ms' }],
      wrong: { timeout: 3 },
    },
    retry_condition: {
      valid: { retry_condition: 'attempts < 3' },
      bound: [{ retry_condition: 'attempts <' }],
      wrong: { retry_condition: false },
    },
    on_error: {
      valid: { on_error: 'halt' },
      bound: [{ on_error: 'stop' }],
      wrong: { on_error: 0 },
    },
  },
  'jwt-validation': {
    issuer: {
      valid: { issuer: { allow_list: [{ value: interp("secrets.get('j', 'iss')") }] } },
      bound: [{ issuer: { allow_list: [] } }, { issuer: { allow_list: [{ value: '' }] } }],
      wrong: { issuer: 'https://id.example.com/' },
    },
    audience: {
      valid: { audience: { allow_list: [{ value: 'api' }] } },
      bound: [
        { audience: { allow_list: [] } },
        { audience: { allow_list: [{ value: interp('req.host') }] } },
      ],
      wrong: { audience: ['api'] },
    },
    http: {
      valid: { http: { tokens: [{ type: 'at+jwt', method: 'body', name: interp('vars.f') }] } },
      bound: [
        { http: { tokens: [] } },
        { http: { tokens: [{ type: 'saml', method: 'header', name: 'a' }] } },
        { http: { tokens: [{ type: 'jwt', method: 'query', name: 'a' }] } },
      ],
      wrong: { http: { tokens: 'authorization' } },
    },
    jws: {
      valid: {
        jws: {
          allowed_algorithms: ['ES256'],
          keys: [
            {
              sources: [{ additional_jkus: [interp("secrets.get('j', 'jwks')")] }],
              identification: [{ token_claims: ['kid'] }],
            },
          ],
        },
      },
      bound: [
        { jws: { ...JWT.jws, allowed_algorithms: ['none'] } },
        { jws: { ...JWT.jws, allowed_algorithms: [] } },
        { jws: { ...JWT.jws, keys: { sources: { additional_jkus: ['not a url'] } } } },
      ],
      wrong: { jws: 'RS256' },
    },
  },
  log: {
    metadata: {
      valid: {
        metadata: { path: interp('req.url.path'), n: 1, deep: { l: [interp('conn.client_ip')] } },
      },
      bound: [{ metadata: { a: interp('req.') } }],
      wrong: { metadata: ['a'] },
    },
  },
  ...Object.fromEntries(
    ['owasp-crs-request', 'owasp-crs-response'].map((type) => [
      type,
      {
        on_error: {
          valid: { on_error: 'continue' },
          bound: [{ on_error: 'retry' }],
          wrong: { on_error: false },
        },
        process_body: { valid: { process_body: true }, wrong: { process_body: 'yes' } },
        exclude_rule_ids: {
          valid: { exclude_rule_ids: [900000, 999999] },
          bound: [{ exclude_rule_ids: [899999] }, { exclude_rule_ids: [1000000] }],
          wrong: { exclude_rule_ids: 942100 },
        },
      },
    ]),
  ),
  'rate-limit': {
    name: {
      valid: { name: 'x'.repeat(1023) },
      bound: [{ name: 'x'.repeat(1024) }, { name: '' }, { name: interp('req.host') }],
      wrong: { name: 1 },
    },
    enforce: { valid: { enforce: false }, wrong: { enforce: 'false' } },
    algorithm: {
      valid: { algorithm: 'sliding_window' },
      bound: [{ algorithm: 'token_bucket' }, { algorithm: undefined }],
      wrong: { algorithm: 1 },
    },
    capacity: {
      valid: { capacity: 2_000_000_000 },
      bound: [{ capacity: 0 }, { capacity: 2_000_000_001 }, { capacity: 1.5 }],
      wrong: { capacity: '10' },
    },
    rate: {
      valid: { rate: '24h' },
      bound: [{ rate: '50s' }, { rate: '65s' }, { rate: '25h' }],
      wrong: { rate: 60 },
    },
    bucket_key: {
      valid: { bucket_key: ['req.host', "getReqHeader('x-api-key')"] },
      bound: [
        { bucket_key: [] },
        { bucket_key: Array(11).fill('req.host') },
        { bucket_key: ['req.host +'] },
      ],
      wrong: { bucket_key: 'req.host' },
    },
  },
  redirect: {
    from: {
      valid: { from: '(?i)^http://(.*)$', to: 'https://$1' },
      bound: [{ from: '(?=x)' }, { from: '(' }],
      wrong: { from: 1 },
    },
    to: { valid: { to: interp('req.url') }, bound: [{ to: undefined }], wrong: { to: 1 } },
    status_code: {
      valid: { status_code: 308 },
      bound: [{ status_code: 200 }, { status_code: 304 }],
      wrong: { status_code: '301' },
    },
    headers: {
      valid: { headers: { 'x-a': interp('req.host') } },
      bound: [{ headers: headers(11) }],
      wrong: { headers: 'x' },
    },
  },
  ...Object.fromEntries(
    ['request-body-find-replace', 'response-body-find-replace', 'sse-find-replace'].map((type) => [
      type,
      {
        replacements: {
          valid: {
            replacements: [{ from: '(\\d+)', to: '#$1' }, { from: interp('vars.re') }],
          },
          bound: [
            { replacements: [] },
            { replacements: [{ to: 'x' }] },
            { replacements: [{ from: '[' }] },
            ...(type === 'sse-find-replace'
              ? [{ replacements: [{ field: 'id', from: 'a' }] }]
              : []),
          ],
          wrong: { replacements: { from: 'a' } },
        },
      },
    ]),
  ),
  'url-rewrite': {
    from: { valid: { from: '^/old/(.*)' }, bound: [{ from: '(?<=a)b' }], wrong: { from: [] } },
    to: { valid: { to: interp('req.url') }, bound: [{ to: undefined }], wrong: { to: 5 } },
  },
};

/** A policy for an https endpoint with `action` in `phase`, its request phase ending in deny. */
function policyWith(phase: Phase, action: Config): Record<string, unknown> {
  const guarded = { expressions: ['true'], actions: [action] };
  const last = { actions: [{ type: 'deny' }] };
  if (phase === 'on_http_request') return { on_http_request: [guarded, last] };
  return { [phase]: [guarded], on_http_request: [last] };
}

/** Undefined values removed, as JSON and YAML both drop them. */
function withoutUndefined(config: Config): Config {
  return JSON.parse(JSON.stringify(config)) as Config;
}

let server: Awaited<ReturnType<typeof startTestServer>>;
let call: Call;
let hosts = 0;

let live: (text: string) => Promise<string>;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  live = liveIpPolicies(call);
});
afterAll(async () => {
  await server.close();
});

/** Both verdicts on one policy: the manifest pipeline's and the server's. */
async function verdicts(policy: Record<string, unknown>) {
  const url = `https://h${++hosts}.example.com`;
  const manifest = stringify({ kind: 'CloudEndpoint', name: 'ep', url, traffic_policy: policy });
  const built = buildFrom({ 'ep.yaml': manifest });
  // Made-up ipp_ IDs become policies of the account (one it lacks is 2216).
  const text = await live(JSON.stringify(policy));
  const reply = await call('POST', '/endpoints', { url, traffic_policy: text });
  expect([201, 400]).toContain(reply.status);
  return {
    validate: built.ok,
    server: reply.status === 201,
    why: `validate: ${errorLines(built).join(' | ') || 'ok'}; server: ${reply.status === 201 ? 'ok' : reply.json?.msg}`,
  };
}

/** Both verdicts on one endpoint's URL and binding (a policy that suits its scheme). */
async function urlVerdicts(url: string, binding: string | undefined) {
  const tcp = /^(tls|tcp):/i.test(url);
  const policy = tcp
    ? { on_tcp_connect: [{ actions: [{ type: 'close-connection' }] }] }
    : { on_http_request: [{ actions: [{ type: 'deny' }] }] };
  const bindings = binding === undefined ? {} : { bindings: [binding] };
  const manifest = stringify({
    kind: 'CloudEndpoint',
    name: 'ep',
    url,
    ...bindings,
    traffic_policy: policy,
  });
  const built = buildFrom({ 'ep.yaml': manifest });
  const reply = await call('POST', '/endpoints', {
    url,
    ...bindings,
    traffic_policy: JSON.stringify(policy),
  });
  return {
    validate: built.ok,
    server: reply.status === 201,
    why: `${errorLines(built).join(' | ')} / ${reply.json?.msg}`,
  };
}

describe('URLs and bindings against the server', () => {
  const forms = [
    'https://H.example.com:443',
    'https://H.example.com:8443',
    'http://H.example.com',
    'http://H.example.com:8080',
    'tls://H.example.com',
    'tls://H.example.com:8443',
    'tcp://H.example.com',
    'tcp://H.example.com:5432',
    'ftp://H.example.com',
    'H.example.com',
    'https://H.example.com/path',
    'https://H.example.com?q=1',
    'https://user@H.example.com',
    'https://H.internal:8443',
    'tcp://H.internal:5432',
    'http://H.shop:8080',
    'tcp://H.shop:5432',
    'https://H_x.example.com',
    'https://*.H.example.com',
  ];
  const cases = forms.flatMap((form) =>
    [undefined, 'public', 'internal', 'kubernetes'].map((binding) => ({ form, binding })),
  );
  it.each(cases)('$form ($binding)', async ({ form, binding }) => {
    const v = await urlVerdicts(form.replace('H', `u${++hosts}`), binding);
    expect(v.validate, v.why).toBe(v.server);
  });
});

describe('the action table against the server', () => {
  it('has base configs and samples for exactly the types and fields of the table', () => {
    expect(Object.keys(BASE).sort()).toEqual(Object.keys(ACTIONS).sort());
    for (const [type, spec] of Object.entries(ACTIONS)) {
      expect(Object.keys(SAMPLES[type] ?? {}).sort(), type).toEqual(
        Object.keys(spec.fields).sort(),
      );
    }
  });

  const phaseCases = Object.keys(ACTIONS).flatMap((type) =>
    PHASES.map((phase) => ({ type, phase, runs: ACTIONS[type]?.phases.includes(phase) === true })),
  );
  it.each(phaseCases)(
    '$type in $phase: accepted iff the table says it runs there ($runs)',
    async ({ type, phase, runs }) => {
      const v = await verdicts(policyWith(phase, { type, config: BASE[type] }));
      expect(v.validate, v.why).toBe(v.server);
      expect(v.server, v.why).toBe(runs);
    },
  );

  const noConfigCases = Object.entries(ACTIONS).flatMap(([type, spec]) =>
    (spec.noConfigIn ?? []).flatMap((phase) =>
      Object.values(SAMPLES[type] ?? {}).map((s) => ({ type, phase, patch: s.valid })),
    ),
  );
  it.each(noConfigCases)(
    '$type in $phase takes no config: $patch',
    async ({ type, phase, patch }) => {
      const v = await verdicts(policyWith(phase, { type, config: patch }));
      expect(v.validate, v.why).toBe(v.server);
      expect(v.server, v.why).toBe(false);
    },
  );

  const fieldCases = Object.entries(SAMPLES).flatMap(([type, fields]) =>
    Object.entries(fields).flatMap(([field, s]) => [
      { type, field, kind: 'valid', patch: s.valid, accepted: true },
      ...(s.bound ?? []).map((patch) => ({
        type,
        field,
        kind: 'out of bound',
        patch,
        accepted: false,
      })),
      { type, field, kind: 'wrong type', patch: s.wrong, accepted: false },
    ]),
  );
  it.each(fieldCases)('$type $field, $kind: $patch', async ({ type, patch, accepted }) => {
    const spec = ACTIONS[type];
    const phase = spec?.phases.find((p) => !spec.noConfigIn?.includes(p)) as Phase;
    const config = withoutUndefined({ ...BASE[type], ...patch });
    const v = await verdicts(policyWith(phase, { type, config }));
    expect(v.validate, v.why).toBe(v.server);
    expect(v.server, v.why).toBe(accepted);
  });
});
