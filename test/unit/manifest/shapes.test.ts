/**
 * Good cases for every shape: each resource kind and every module, minimal and full, loaded to
 * the exact model (defaults filled, references resolved, `source` and `sensitive` attached).
 */
import { describe, expect, it } from 'vitest';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildFrom, type MemoryOptions } from './helpers.js';

function load(files: Record<string, string>, options: MemoryOptions = {}): DesiredSet {
  const result = buildFrom(files, options);
  if (!result.ok) throw new Error(result.diagnostics.map((d) => d.message).join('\n'));
  return result.set;
}

const routeWith = (module: string) => `kind: HTTPSEdge
name: web
routes:
  - match_type: path_prefix
    match: /
${module
  .split('\n')
  .map((l) => (l === '' ? l : `    ${l}`))
  .join('\n')}
`;

describe('resources', () => {
  it('a minimal TLS edge gets its defaults', () => {
    const set = load({ 'a.yaml': 'kind: TLSEdge\nname: db\n' });
    expect(set).toEqual({
      tlsEdges: [
        {
          kind: 'TLSEdge',
          name: 'db',
          metadata: {},
          protect: false,
          hostports: [],
          source: { file: 'a.yaml', line: 1, column: 1 },
          sensitive: [],
        },
      ],
      httpsEdges: [],
      botUsers: [],
      cloudEndpoints: [],
    });
  });

  it('a TLS edge with every field and all five modules', () => {
    const set = load({
      'tcp/db.yml': `# leading comment
kind: TLSEdge
name: orders-db
id: edgtls_2abcdefghijklmnopqrstuvwxyz
description: Orders database
protect: true
metadata: { team: data, env: prod }
hostports: [10.0.0.5:5432, "*.db.example.com:443"]
backend: { backend_id: bkdtg_2abc }
ip_restriction: { enabled: false, ip_policy_ids: [ipp_2a, ipp_2b] }
mutual_tls: { certificate_authority_ids: [ca_2a] }
tls_termination: { terminate_at: edge, min_version: "1.3" }
traffic_policy:
  value:
    on_tcp_connect: [{ actions: [{ type: log }] }]
`,
    });
    expect(set.tlsEdges[0]).toEqual({
      kind: 'TLSEdge',
      name: 'orders-db',
      description: 'Orders database',
      metadata: { team: 'data', env: 'prod' },
      protect: true,
      id: 'edgtls_2abcdefghijklmnopqrstuvwxyz',
      hostports: ['10.0.0.5:5432', '*.db.example.com:443'],
      backend: { enabled: true, backend_id: 'bkdtg_2abc' },
      ip_restriction: { enabled: false, ip_policy_ids: ['ipp_2a', 'ipp_2b'] },
      mutual_tls: { enabled: true, certificate_authority_ids: ['ca_2a'] },
      tls_termination: { enabled: true, terminate_at: 'edge', min_version: '1.3' },
      traffic_policy: { enabled: true, value: '{"on_tcp_connect":[{"actions":[{"type":"log"}]}]}' },
      source: { file: 'tcp/db.yml', line: 2, column: 1 },
      sensitive: [],
    });
  });

  it('TLS termination at upstream without min_version', () => {
    const set = load({
      'a.yaml': 'kind: TLSEdge\nname: mqtt\ntls_termination: { terminate_at: upstream }\n',
    });
    expect(set.tlsEdges[0]?.tls_termination).toEqual({ enabled: true, terminate_at: 'upstream' });
  });

  it('an HTTPS edge with its own modules and routes in manifest order', () => {
    const set = load({
      'a.yaml': `kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
mutual_tls: { enabled: false, certificate_authority_ids: [] }
tls_termination: { min_version: "1.2" }
routes:
  - match_type: path_prefix
    match: /z
    description: last alphabetically, first here
  - match_type: exact_path
    match: /a
    metadata: { owner: team-a }
`,
    });
    const edge = set.httpsEdges[0];
    expect(edge?.mutual_tls).toEqual({ enabled: false, certificate_authority_ids: [] });
    expect(edge?.tls_termination).toEqual({ enabled: true, min_version: '1.2' });
    expect(edge?.routes).toEqual([
      {
        match_type: 'path_prefix',
        match: '/z',
        description: 'last alphabetically, first here',
        metadata: {},
        source: { file: 'a.yaml', line: 7, column: 5 },
        sensitive: [],
      },
      {
        match_type: 'exact_path',
        match: '/a',
        metadata: { owner: 'team-a' },
        source: { file: 'a.yaml', line: 10, column: 5 },
        sensitive: [],
      },
    ]);
  });

  it.each([
    ['kind: BotUser\nname: ci\n', { active: true, ensure: 'present' }],
    ['kind: BotUser\nname: ci\nactive: false\n', { active: false, ensure: 'present' }],
    ['kind: BotUser\nname: ci\nensure: absent\n', { active: true, ensure: 'absent' }],
  ])('bot user %#', (text, expected) => {
    const set = load({ 'bots.yaml': text });
    expect(set.botUsers).toEqual([
      {
        kind: 'BotUser',
        name: 'ci',
        ...expected,
        source: { file: 'bots.yaml', line: 1, column: 1 },
        sensitive: [],
      },
    ]);
  });

  it('sorts each kind by name and keeps several kinds per file', () => {
    const set = load({
      'b.yaml': 'kind: TLSEdge\nname: b\n---\nkind: BotUser\nname: z\n',
      'a.yaml': 'kind: TLSEdge\nname: c\n---\n---\nkind: TLSEdge\nname: a\n',
    });
    expect(set.tlsEdges.map((e) => [e.name, e.source.file, e.source.line])).toEqual([
      ['a', 'a.yaml', 5],
      ['b', 'b.yaml', 1],
      ['c', 'a.yaml', 1],
    ]);
    expect(set.botUsers.map((b) => b.name)).toEqual(['z']);
  });
});

describe('route modules', () => {
  it.each<[string, string, Record<string, unknown>]>([
    [
      'backend',
      'backend: { backend_id: bkdhr_2x }',
      { backend: { enabled: true, backend_id: 'bkdhr_2x' } },
    ],
    [
      'ip_restriction',
      'ip_restriction: { ip_policy_ids: [ipp_2x] }',
      { ip_restriction: { enabled: true, ip_policy_ids: ['ipp_2x'] } },
    ],
    [
      'circuit_breaker (all fields)',
      'circuit_breaker: { tripped_duration: 10, rolling_window: 30, num_buckets: 128, volume_threshold: 1, error_threshold_percentage: 1 }',
      {
        circuit_breaker: {
          enabled: true,
          tripped_duration: 10,
          rolling_window: 30,
          num_buckets: 128,
          volume_threshold: 1,
          error_threshold_percentage: 1,
        },
      },
    ],
    [
      'circuit_breaker (minimal: every field the service needs)',
      'circuit_breaker: { tripped_duration: 1, rolling_window: 2, num_buckets: 3, volume_threshold: 4 }',
      {
        circuit_breaker: {
          enabled: true,
          tripped_duration: 1,
          rolling_window: 2,
          num_buckets: 3,
          volume_threshold: 4,
        },
      },
    ],
    ['compression', 'compression: { enabled: false }', { compression: { enabled: false } }],
    [
      'request_headers',
      'request_headers: { add: { X-Env: prod }, remove: [Cookie] }',
      { request_headers: { enabled: true, add: { 'X-Env': 'prod' }, remove: ['Cookie'] } },
    ],
    [
      'response_headers',
      'response_headers: { remove: [Server] }',
      { response_headers: { enabled: true, remove: ['Server'] } },
    ],
    [
      'webhook_verification (sns, no secret)',
      'webhook_verification: { provider: SNS }',
      { webhook_verification: { enabled: true, provider: 'sns' } },
    ],
    [
      'oauth (managed application, github with teams and organizations)',
      'oauth:\n  provider:\n    github:\n      teams: [acme/sre]\n      organizations: [acme]\n      email_addresses: [ann@example.com]\n  options_passthrough: true\n  cookie_prefix: acme.\n  inactivity_timeout: 0\n  maximum_duration: 4294967295\n  auth_check_interval: 300',
      {
        oauth: {
          enabled: true,
          provider: {
            github: {
              teams: ['acme/sre'],
              organizations: ['acme'],
              email_addresses: ['ann@example.com'],
            },
          },
          options_passthrough: true,
          cookie_prefix: 'acme.',
          inactivity_timeout: 0,
          maximum_duration: 4294967295,
          auth_check_interval: 300,
        },
      },
    ],
    ...(['facebook', 'microsoft', 'linkedin', 'gitlab', 'twitch', 'amazon'] as const).map(
      (p): [string, string, Record<string, unknown>] => [
        `oauth (${p})`,
        `oauth: { provider: { ${p}: { email_domains: [example.com] } } }`,
        { oauth: { enabled: true, provider: { [p]: { email_domains: ['example.com'] } } } },
      ],
    ),
    [
      'saml',
      'saml:\n  idp_metadata: "<EntityDescriptor/>"\n  force_authn: true\n  allow_idp_initiated: false\n  authorized_groups: [admins]\n  nameid_format: urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress\n  options_passthrough: false\n  cookie_prefix: s.\n  inactivity_timeout: 60\n  maximum_duration: 3600',
      {
        saml: {
          enabled: true,
          options_passthrough: false,
          cookie_prefix: 's.',
          inactivity_timeout: 60,
          maximum_duration: 3600,
          idp_metadata: '<EntityDescriptor/>',
          force_authn: true,
          allow_idp_initiated: false,
          authorized_groups: ['admins'],
          nameid_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        },
      },
    ],
    [
      'websocket_tcp_converter',
      'websocket_tcp_converter: {}',
      { websocket_tcp_converter: { enabled: true } },
    ],
    [
      'user_agent_filter',
      'user_agent_filter: { allow: ["^curl/.*$"], deny: [bot] }',
      { user_agent_filter: { enabled: true, allow: ['^curl/.*$'], deny: ['bot'] } },
    ],
    [
      'traffic_policy (string)',
      'traffic_policy: { value: "{\\"on_http_request\\": []}" }',
      { traffic_policy: { enabled: true, value: '{"on_http_request": []}' } },
    ],
  ])('%s', (_name, module, expected) => {
    const route = load({ 'a.yaml': routeWith(module) }).httpsEdges[0]?.routes[0];
    expect(route).toEqual({
      match_type: 'path_prefix',
      match: '/',
      metadata: {},
      ...expected,
      source: { file: 'a.yaml', line: 4, column: 5 },
      sensitive: [],
    });
  });

  it('an own OAuth application: client_secret and scopes; the secret is sensitive', () => {
    const route = load({
      'a.yaml': routeWith(
        'oauth:\n  provider:\n    google:\n      client_id: 123.apps.example\n      client_secret: s3cret\n      scopes: [openid, email]',
      ),
    }).httpsEdges[0]?.routes[0];
    expect(route?.oauth?.provider.google).toEqual({
      client_id: '123.apps.example',
      client_secret: 's3cret',
      scopes: ['openid', 'email'],
    });
    expect(route?.sensitive).toEqual([['oauth', 'provider', 'google', 'client_secret']]);
  });

  it('oidc and webhook secrets are sensitive', () => {
    const set = load({
      'a.yaml': `kind: HTTPSEdge
name: web
routes:
  - match_type: path_prefix
    match: /a
    oidc: { issuer: "https://id.example.com/", client_id: web, client_secret: x, scopes: [openid] }
  - match_type: exact_path
    match: /hook
    webhook_verification: { provider: stripe, secret: whsec_1 }
`,
    });
    const [a, hook] = set.httpsEdges[0]?.routes ?? [];
    expect(a?.oidc).toEqual({
      enabled: true,
      issuer: 'https://id.example.com/',
      client_id: 'web',
      client_secret: 'x',
      scopes: ['openid'],
    });
    expect(a?.sensitive).toEqual([['oidc', 'client_secret']]);
    expect(hook?.sensitive).toEqual([['webhook_verification', 'secret']]);
  });
});
