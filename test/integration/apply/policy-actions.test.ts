/**
 * Policies with every action the endpoints API documents, against the local server over HTTP:
 * `validate` accepts them, `apply` creates them, and the next `plan` is empty (the policy reads
 * back as it was written, YAML mapping and `${...}` templates included).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ACTION_TYPES } from '../../../src/hosted/policy-actions.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, snapshotOf, tempDir } from './helpers.js';

/** `${expr}` as a policy writes it (not a JavaScript template). */
const interp = (expr: string) => `$${'{'}${expr}}`;
const guard = (actions: unknown[]) => ({ expressions: ["req.url.path.startsWith('/x')"], actions });

/** An https endpoint whose policy uses every action that runs on http. */
const WEB = {
  kind: 'CloudEndpoint',
  name: 'web',
  url: 'https://web.example.com',
  traffic_policy: {
    on_tcp_connect: [
      {
        actions: [
          { type: 'restrict-ips', config: { allow: [interp("secrets.get('net', 'office')")] } },
          { type: 'terminate-tls', config: { min_version: '1.3' } },
          { type: 'log', config: { metadata: { ip: interp('conn.client_ip') } } },
          { type: 'set-vars', config: { vars: [{ tier: 'gold' }] } },
        ],
      },
    ],
    on_http_request: [
      guard([
        {
          type: 'rate-limit',
          config: {
            name: 'per-ip',
            algorithm: 'sliding_window',
            capacity: 100,
            rate: '60s',
            bucket_key: ['conn.client_ip'],
          },
        },
        { type: 'basic-auth', config: { credentials: ['ops:correct-horse-battery'] } },
        {
          type: 'jwt-validation',
          config: {
            issuer: { allow_list: [{ value: 'https://id.example.com/' }] },
            http: {
              tokens: [{ type: 'jwt', method: 'header', name: 'authorization', prefix: 'Bearer ' }],
            },
            jws: {
              allowed_algorithms: ['RS256'],
              keys: { sources: { additional_jkus: ['https://id.example.com/jwks.json'] } },
            },
          },
        },
        { type: 'owasp-crs-request', config: { on_error: 'continue' } },
        { type: 'http-request', config: { url: 'https://auth.internal/check', method: 'POST' } },
        { type: 'request-body-find-replace', config: { replacements: [{ from: 'a', to: 'b' }] } },
        { type: 'url-rewrite', config: { from: '^/x/(.*)', to: '/$1' } },
        { type: 'redirect', config: { from: '^http://(.*)$', to: 'https://$1', status_code: 301 } },
        { type: 'verify-webhook', config: { provider: 'sns', secret: '123456789012' } },
        { type: 'circuit-breaker', config: { num_buckets: 10 } },
        { type: 'remove-headers', config: { headers: ['x-debug'] } },
        { type: 'add-headers', config: { headers: { 'x-ip': interp('conn.client_ip') } } },
      ]),
      guard([{ type: 'openid-connect', config: { issuer_url: 'https://id.example.com' } }]),
      guard([
        { type: 'ai-gateway', config: { on_error: 'continue' } },
        { type: 'close-connection' },
      ]),
      guard([{ type: 'custom-response', config: { status_code: 404, content: 'gone' } }]),
      { actions: [{ type: 'forward-internal', config: { url: 'https://web.internal' } }] },
    ],
    on_http_response: [
      {
        actions: [
          { type: 'compress-response' },
          { type: 'owasp-crs-response' },
          { type: 'response-body-find-replace', config: { replacements: [{ from: 'x' }] } },
        ],
      },
    ],
    on_event_stream_message: [
      {
        actions: [{ type: 'sse-find-replace', config: { replacements: [{ from: 'a', to: 'b' }] } }],
      },
    ],
  },
};

/** The authentication and deny actions left: one authentication action per endpoint. */
const OTHERS = [
  {
    kind: 'CloudEndpoint',
    name: 'login',
    url: 'https://login.example.com',
    traffic_policy: {
      on_http_request: [
        guard([{ type: 'oauth', config: { provider: 'google', auth_id: 'login' } }]),
        { actions: [{ type: 'deny', config: { status_code: 404 } }] },
      ],
    },
  },
  {
    kind: 'CloudEndpoint',
    name: 'sso',
    url: 'https://sso.example.com',
    traffic_policy: {
      on_http_request: [
        guard([{ type: 'saml', config: { idp_metadata: '<EntityDescriptor/>' } }]),
        { actions: [{ type: 'deny' }] },
      ],
    },
  },
];

let server: Awaited<ReturnType<typeof startTestServer>>;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;
beforeAll(() => {
  assertFreshBuild();
});
beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir('edgesync-actions-');
  dir = path.join(tmp.dir, 'manifests');
  await mkdir(dir);
});
afterEach(async () => {
  await server.close();
  await tmp.cleanup();
});

it('every documented action: validate, apply, and the next plan is empty', async () => {
  const docs = [WEB, ...OTHERS];
  const used = new Set(
    JSON.stringify(docs)
      .match(/"type":"[a-z-]+"/g)
      ?.map((t) => t.slice(8, -1)),
  );
  expect([...ACTION_TYPES].filter((t) => !used.has(t))).toEqual([]);
  await writeFile(path.join(dir, 'endpoints.yaml'), docs.map((d) => stringify(d)).join('---\n'));
  const env = apiEnv(server.url, server.apiKey);

  const validate = await runCli(['validate', dir], { env });
  expect(validate.code, validate.stderr).toBe(0);
  const apply = await runCli(['apply', '--yes', dir], { env });
  expect(apply.code, apply.stderr).toBe(0);
  const live = await snapshotOf(server.url, server.apiKey);
  expect(live.cloudEndpoints.map((e) => e.url).sort()).toEqual([
    'https://login.example.com',
    'https://sso.example.com',
    'https://web.example.com',
  ]);
  const again = await runCli(['plan', '--detailed-exitcode', dir], { env });
  expect(again.stdout, again.stderr).toContain('No changes');
  expect(again.code).toBe(0);
});
