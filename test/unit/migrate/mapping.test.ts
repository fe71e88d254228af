/**
 * The mapping of the cloud endpoints specification (section 4), one case per row: the module as
 * an edge holds it, and the action (type and config) it becomes, in its phase and rule.
 */
import { describe, expect, it } from 'vitest';
import type { Action } from '../../../src/migrate/actions.js';
import { type Policy, type Rule, translateEdge } from '../../../src/migrate/translate.js';
import { edgeFromYaml } from './helpers.js';

const WEB = 'bkdtg_2kt3xG55hdajmiOILUFbeDE0v5z';
const DB = 'bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a';
const BACKENDS = new Map([
  [WEB, 'https://web.internal'],
  [DB, 'tls://db.internal:5432'],
]);
const IPP = 'ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY';
const CA = 'ca_2YvG88zHTBUrwWfAPU0bnv6b8QY';
const GUARD = "req.url.path.startsWith('/')";

/** An HTTPS edge with one route `/` holding `route` (indented as a route's fields). */
const https = (route: string, edge = '') => `kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
${edge}routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: ${WEB} }
${route}`;

const tls = (fields: string) => `kind: TLSEdge
name: db
hostports: [db.example.com:443]
backend: { backend_id: ${DB} }
${fields}`;

type Phase = keyof Policy;

interface Row {
  /** The row of the mapping, as the specification words it. */
  readonly row: string;
  readonly yaml: string;
  readonly phase: Phase;
  /** The rule the module becomes, and its guard (none: an unguarded rule). */
  readonly rule: string;
  readonly expressions?: readonly string[];
  readonly actions: readonly Action[];
}

const ROWS: readonly Row[] = [
  {
    row: 'backend.backend_id -> forward-internal to the internal URL (HTTPS route)',
    yaml: https(''),
    phase: 'on_http_request',
    rule: 'shop / backend',
    expressions: [GUARD],
    actions: [{ type: 'forward-internal', config: { url: 'https://web.internal' } }],
  },
  {
    row: 'backend.backend_id -> forward-internal to the internal URL (TLS edge)',
    yaml: tls(''),
    phase: 'on_tcp_connect',
    rule: 'db backend',
    actions: [{ type: 'forward-internal', config: { url: 'tls://db.internal:5432' } }],
  },
  {
    row: 'ip_restriction -> restrict-ips in on_tcp_connect on a TLS edge',
    yaml: tls(`ip_restriction: { ip_policy_ids: [${IPP}] }\n`),
    phase: 'on_tcp_connect',
    rule: 'db ip_restriction',
    actions: [{ type: 'restrict-ips', config: { enforce: true, ip_policies: [IPP] } }],
  },
  {
    row: "ip_restriction -> restrict-ips in on_http_request under the route's guard",
    yaml: https(`    ip_restriction: { ip_policy_ids: [${IPP}] }\n`),
    phase: 'on_http_request',
    rule: 'shop / ip_restriction',
    expressions: [GUARD],
    actions: [{ type: 'restrict-ips', config: { enforce: true, ip_policies: [IPP] } }],
  },
  {
    row: 'mutual_tls + tls_termination -> one terminate-tls in on_tcp_connect',
    yaml: https(
      '',
      `mutual_tls: { certificate_authority_ids: [${CA}] }\ntls_termination: { min_version: "1.3" }\n`,
    ),
    phase: 'on_tcp_connect',
    rule: 'shop tls_termination',
    actions: [
      {
        type: 'terminate-tls',
        config: {
          min_version: '1.3',
          mutual_tls_certificate_authorities: [CA],
          mutual_tls_verification_strategy: 'require-and-verify',
        },
      },
    ],
  },
  {
    row: 'tls_termination min_version 1.1 -> terminate-tls with 1.2',
    yaml: tls('tls_termination: { terminate_at: edge, min_version: "1.1" }\n'),
    phase: 'on_tcp_connect',
    rule: 'db tls_termination',
    actions: [{ type: 'terminate-tls', config: { min_version: '1.2' } }],
  },
  {
    row: 'circuit_breaker -> circuit-breaker (percentage, window and tripped duration as strings; buckets kept, ignored by the service)',
    yaml: https(
      '    circuit_breaker: { error_threshold_percentage: 0.5, volume_threshold: 20, rolling_window: 60, tripped_duration: 30, num_buckets: 10 }\n',
    ),
    phase: 'on_http_request',
    rule: 'shop / circuit_breaker',
    expressions: [GUARD],
    actions: [
      {
        type: 'circuit-breaker',
        config: {
          error_threshold: 0.5,
          volume_threshold: 20,
          window_duration: '1m',
          tripped_duration: '30s',
          num_buckets: 10,
          enforce: true,
        },
      },
    ],
  },
  {
    row: 'compression -> compress-response {algorithms: [gzip, deflate]} in on_http_response',
    yaml: https('    compression: {}\n'),
    phase: 'on_http_response',
    rule: 'shop / compression',
    expressions: [GUARD],
    actions: [{ type: 'compress-response', config: { algorithms: ['gzip', 'deflate'] } }],
  },
  {
    row: 'request_headers -> remove-headers then add-headers in on_http_request',
    yaml: https('    request_headers: { add: { X-A: one }, remove: [X-Drop] }\n'),
    phase: 'on_http_request',
    rule: 'shop / request_headers',
    expressions: [GUARD],
    actions: [
      { type: 'remove-headers', config: { headers: ['x-drop'] } },
      { type: 'add-headers', config: { headers: { 'x-a': 'one' } } },
    ],
  },
  {
    row: 'response_headers -> the same in on_http_response',
    yaml: https('    response_headers: { add: { X-B: two }, remove: [Server] }\n'),
    phase: 'on_http_response',
    rule: 'shop / response_headers',
    expressions: [GUARD],
    actions: [
      { type: 'remove-headers', config: { headers: ['server'] } },
      { type: 'add-headers', config: { headers: { 'x-b': 'two' } } },
    ],
  },
  {
    row: 'webhook_verification -> verify-webhook',
    yaml: https('    webhook_verification: { provider: github, secret: whsec-0123456789 }\n'),
    phase: 'on_http_request',
    rule: 'shop / webhook_verification',
    expressions: [GUARD],
    actions: [
      {
        type: 'verify-webhook',
        config: { provider: 'github', secret: 'whsec-0123456789', enforce: true },
      },
    ],
  },
  {
    row: 'oauth -> oauth (provider key, options_passthrough, the session timers and auth_check_interval as durations)',
    yaml: https(`    oauth:
      options_passthrough: true
      inactivity_timeout: 300
      maximum_duration: 86400
      auth_check_interval: 3600
      provider:
        google: { client_id: id.apps, client_secret: shh, scopes: [email] }
`),
    phase: 'on_http_request',
    rule: 'shop / oauth',
    expressions: [GUARD],
    actions: [
      {
        type: 'oauth',
        config: {
          provider: 'google',
          client_id: 'id.apps',
          client_secret: 'shh',
          scopes: ['email'],
          allow_cors_preflight: true,
          idle_session_timeout: '5m',
          max_session_duration: '24h',
          userinfo_refresh_interval: '1h',
        },
      },
    ],
  },
  {
    row: 'oauth timers of 0 (never, on an edge) -> left to the endpoint (a duration of 0 is not one)',
    yaml: https(`    oauth:
      inactivity_timeout: 0
      maximum_duration: 0
      auth_check_interval: 0
      provider: { google: {} }
`),
    phase: 'on_http_request',
    rule: 'shop / oauth',
    expressions: [GUARD],
    actions: [{ type: 'oauth', config: { provider: 'google' } }],
  },
  {
    row: 'oauth email_addresses / email_domains -> deny 403 when the email is in neither list',
    yaml: https(
      '    oauth: { provider: { google: { email_addresses: [ann@x.com], email_domains: [y.com] } } }\n',
    ),
    phase: 'on_http_request',
    rule: 'shop / oauth allow list',
    expressions: [
      GUARD,
      "!(actions.svc.oauth.identity.email in ['ann@x.com'] || actions.svc.oauth.identity.email.endsWith('@y.com'))",
    ],
    actions: [{ type: 'deny', config: { status_code: 403 } }],
  },
  {
    row: 'oidc -> openid-connect (issuer -> issuer_url; idle timer -> idle_session_duration; cookie_prefix -> auth_id)',
    yaml: https(`    oidc:
      issuer: https://id.example.com
      client_id: cid
      client_secret: shh
      scopes: [profile]
      options_passthrough: false
      inactivity_timeout: 90
      maximum_duration: 7200
      cookie_prefix: shop.
`),
    phase: 'on_http_request',
    rule: 'shop / oidc',
    expressions: [GUARD],
    actions: [
      {
        type: 'openid-connect',
        config: {
          issuer_url: 'https://id.example.com',
          client_id: 'cid',
          client_secret: 'shh',
          scopes: ['profile'],
          allow_cors_preflight: false,
          idle_session_duration: '90s',
          max_session_duration: '2h',
          auth_id: 'shop',
        },
      },
    ],
  },
  {
    row: 'saml -> saml {idp_metadata}',
    yaml: https('    saml: { idp_metadata: "<EntityDescriptor/>" }\n'),
    phase: 'on_http_request',
    rule: 'shop / saml',
    expressions: [GUARD],
    actions: [{ type: 'saml', config: { idp_metadata: '<EntityDescriptor/>' } }],
  },
  {
    row: 'user_agent_filter -> a guarded deny 403 rule',
    yaml: https('    user_agent_filter: { deny: ["(?i)bot"] }\n'),
    phase: 'on_http_request',
    rule: 'shop / user_agent_filter',
    expressions: [
      GUARD,
      "hasReqHeader('user-agent') ? getReqHeader('user-agent').exists(ua, ua.matches('(?i)bot')) : true",
    ],
    actions: [{ type: 'deny', config: { status_code: 403 } }],
  },
  {
    row: "traffic_policy module (HTTPS route) -> its rules under the route's guard",
    yaml: https(
      `    traffic_policy: { value: { on_http_request: [{ name: teapot, expressions: ["req.host == 'x'"], actions: [{ type: custom-response, config: { status_code: 418 } }] }] } }\n`,
    ),
    phase: 'on_http_request',
    rule: 'shop / traffic_policy teapot',
    expressions: [GUARD, "req.host == 'x'"],
    actions: [{ type: 'custom-response', config: { status_code: 418 } }],
  },
  {
    row: 'traffic_policy module (TLS edge) -> its on_tcp_connect rules',
    yaml: tls(
      'traffic_policy: { value: { on_tcp_connect: [{ actions: [{ type: restrict-ips, config: { deny: [10.0.0.0/8] } }] }] } }\n',
    ),
    phase: 'on_tcp_connect',
    rule: 'db traffic_policy on_tcp_connect[0]',
    actions: [{ type: 'restrict-ips', config: { deny: ['10.0.0.0/8'] } }],
  },
];

function translate(yaml: string) {
  const { endpoints, diagnostics } = translateEdge(edgeFromYaml(yaml), BACKENDS);
  expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  expect(endpoints).toHaveLength(1);
  return endpoints[0]!.traffic_policy;
}

const types = (policy: Policy) =>
  Object.values(policy).flatMap((rules: Rule[]) =>
    rules.flatMap((r) => r.actions.map((a) => a.type)),
  );

describe('the mapping, row by row', () => {
  it.each(ROWS)('$row', ({ yaml, phase, rule, expressions, actions }) => {
    const policy = translate(yaml);
    const found = (policy[phase] ?? []).filter((r) => r.name === rule);
    expect(found).toEqual([
      expressions === undefined ? { name: rule, actions } : { name: rule, expressions, actions },
    ]);
  });

  it('the backend is last in its phase, before only the unguarded 404; headers come just before it', () => {
    const request = translate(
      https(
        '    request_headers: { add: { X-A: one } }\n    oauth: { provider: { google: {} } }\n    circuit_breaker: { tripped_duration: 30 }\n',
      ),
    ).on_http_request!;
    expect(request.map((r) => r.name)).toEqual([
      'shop / oauth',
      'shop / circuit_breaker',
      'shop / request_headers',
      'shop / backend',
      'shop no route',
    ]);
    expect(request.at(-1)).toEqual({
      name: 'shop no route',
      actions: [{ type: 'custom-response', config: { status_code: 404 } }],
    });
  });

  it('a TLS traffic policy runs after the IP restriction and TLS termination, before the backend', () => {
    const tcp = translate(
      tls(
        `ip_restriction: { ip_policy_ids: [${IPP}] }\ntls_termination: { min_version: "1.2" }\ntraffic_policy: { value: { on_tcp_connect: [{ name: t, actions: [{ type: restrict-ips, config: { deny: [10.0.0.0/8] } }] }] } }\n`,
      ),
    ).on_tcp_connect!;
    expect(tcp.map((r) => r.name)).toEqual([
      'db ip_restriction',
      'db tls_termination',
      'db traffic_policy t',
      'db backend',
    ]);
  });

  it.each([
    ['ip_restriction', `    ip_restriction: { enabled: false, ip_policy_ids: [${IPP}] }\n`],
    ['compression', '    compression: { enabled: false }\n'],
    ['request_headers', '    request_headers: { enabled: false, add: { X-A: one } }\n'],
    ['response_headers', '    response_headers: { enabled: false, remove: [Server] }\n'],
    [
      'webhook_verification',
      '    webhook_verification: { enabled: false, provider: github, secret: whsec-0123456789 }\n',
    ],
    ['oauth', '    oauth: { enabled: false, provider: { google: {} } }\n'],
    [
      'oidc',
      '    oidc: { enabled: false, issuer: https://id.example.com, client_id: c, client_secret: s }\n',
    ],
    ['saml', '    saml: { enabled: false, idp_metadata: "<x/>" }\n'],
    ['circuit_breaker', '    circuit_breaker: { enabled: false, tripped_duration: 30 }\n'],
    ['user_agent_filter', '    user_agent_filter: { enabled: false, deny: [bot] }\n'],
    [
      'traffic_policy',
      '    traffic_policy: { enabled: false, value: { on_http_request: [{ actions: [{ type: deny }] }] } }\n',
    ],
    ['websocket_tcp_converter (no equivalent at all)', '    websocket_tcp_converter: {}\n'],
  ])('module %s with enabled: false -> the action left out', (_module, route) => {
    const policy = translate(https(route));
    expect(types(policy)).toEqual(['forward-internal', 'custom-response']);
  });

  it.each([
    ['terminate_at: upstream', 'tls_termination: { terminate_at: upstream }\n'],
    ['tls_termination enabled: false', 'tls_termination: { enabled: false, min_version: "1.3" }\n'],
  ])('a TLS edge with %s -> no terminate-tls (TLS passes through)', (_what, fields) => {
    expect(types(translate(tls(fields)))).toEqual(['forward-internal']);
  });
});
