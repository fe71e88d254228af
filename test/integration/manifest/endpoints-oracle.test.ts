/**
 * The client's action table held against the local server (the oracle, over real HTTP): for
 * every action type in every phase, and for every config field of the table a valid value, an
 * out-of-bound one (where the field has bounds) and one of the wrong type, a generated policy
 * is accepted by `validate` (the manifest pipeline) if and only if `POST /endpoints` accepts it.
 * A field added to the table without samples here fails the coverage check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ACTIONS, PHASES, type Phase } from '../../../src/manifest/policy/actions.js';
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
  idle_session_timeout: duration('idle_session_timeout'),
  max_session_duration: duration('max_session_duration'),
  userinfo_refresh_interval: duration('userinfo_refresh_interval'),
};

const SAMPLES: Record<string, Record<string, Samples>> = {
  'forward-internal': {
    url: {
      valid: { url: 'http://api.internal:8080' },
      bound: [{ url: 'https://api.example.com' }, { url: 'tcp://api.internal:5432' }],
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
      valid: { allow: ['192.168.0.0/16', '::/0'] },
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
      bound: [{ ip_policies: ['pol_1'] }],
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
      valid: { mutual_tls_certificate_authorities: ['ca_123', PEM_CERT] },
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
      bound: [{ headers: names(11) }, { headers: [] }, { headers: ['x a'] }],
      wrong: { headers: 'x-a' },
    },
  },
  'compress-response': {
    algorithms: {
      valid: { algorithms: ['br', 'gzip'] },
      bound: [{ algorithms: ['zstd'] }, { algorithms: [] }],
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
      valid: { provider: 'sns', secret: undefined },
      bound: [{ secret: '' }],
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
    enforce: { valid: { enforce: false }, wrong: { enforce: 1 } },
  },
  oauth: {
    provider: {
      valid: { provider: 'amazon', ...OWN },
      bound: [{ provider: 'okta' }, { provider: 'facebook' }],
      wrong: { provider: 1 },
    },
    ...session,
    auth_id: { valid: { auth_id: 'app' }, bound: [{ auth_id: '' }], wrong: { auth_id: 1 } },
  },
  'openid-connect': {
    issuer_url: {
      valid: { issuer_url: 'https://login.example.com/o' },
      bound: [{ issuer_url: 'not a url' }],
      wrong: { issuer_url: 1 },
    },
    ...Object.fromEntries(Object.entries(session).filter(([k]) => k !== 'scopes')),
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
    headers: {
      valid: { headers: { 'x-a': 'b' } },
      bound: [{ headers: headers(11) }],
      wrong: { headers: 'x' },
    },
  },
  'close-connection': {},
  'set-vars': {
    vars: {
      valid: { vars: [{ b: 'x' }] },
      bound: [{ vars: [{ a: 1, b: 2 }] }],
      wrong: { vars: { a: 1 } },
    },
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

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
});
afterAll(async () => {
  await server.close();
});

/** Both verdicts on one policy: the manifest pipeline's and the server's. */
async function verdicts(policy: Record<string, unknown>) {
  const url = `https://h${++hosts}.example.com`;
  const manifest = stringify({ kind: 'CloudEndpoint', name: 'ep', url, traffic_policy: policy });
  const built = buildFrom({ 'ep.yaml': manifest });
  const reply = await call('POST', '/endpoints', { url, traffic_policy: JSON.stringify(policy) });
  expect([201, 400]).toContain(reply.status);
  return {
    validate: built.ok,
    server: reply.status === 201,
    why: `validate: ${errorLines(built).join(' | ') || 'ok'}; server: ${reply.status === 201 ? 'ok' : reply.json?.msg}`,
  };
}

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
