import { describe, expect, it } from 'vitest';
import { POLICY_LIMITS } from '../../../src/hosted/policy-actions.js';
import { duration } from '../../../src/migrate/actions.js';
import { celString } from '../../../src/migrate/cel.js';
import { translateEdge } from '../../../src/migrate/translate.js';
import { edgeFromYaml } from './helpers.js';

const BACKEND = 'bkdtg_2kt3xG55hdajmiOILUFbeDE0v5z';
const BACKENDS = new Map([
  [BACKEND, 'https://web.internal'],
  ['bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a', 'tls://db.internal:5432'],
]);

function translate(yaml: string) {
  return translateEdge(edgeFromYaml(yaml), BACKENDS);
}

const https = (route: string) => `kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: ${BACKEND} }
${route}`;

describe('CEL literals and durations', () => {
  it.each([
    ['/p', "'/p'"],
    ["it's", "'it\\'s'"],
    ['a\\b', "'a\\\\b'"],
    ['tab\there', "'tab\\there'"],
  ])('celString(%j) is %s', (value, literal) => {
    expect(celString(value)).toBe(literal);
  });

  it.each([
    [30, '30s'],
    [90, '90s'],
    [120, '2m'],
    [900, '15m'],
    [3600, '1h'],
    [0, '0s'],
  ])('%i seconds is %s', (seconds, text) => {
    expect(duration(seconds)).toBe(text);
  });
});

describe('translateEdge: endpoints', () => {
  it('a TLS edge: one tls:// endpoint per hostport with restrict-ips, terminate-tls and the backend', () => {
    const { endpoints, diagnostics } = translate(`kind: TLSEdge
name: db
description: Database
metadata: { team: data }
hostports: [db.example.com:443, db2.example.com:443]
backend: { backend_id: bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a }
ip_restriction: { ip_policy_ids: [ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY] }
tls_termination: { min_version: "1.3" }
mutual_tls: { certificate_authority_ids: [ca_2YvG88zHTBUrwWfAPU0bnv6b8QY] }
`);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(endpoints.map((e) => [e.name, e.url])).toEqual([
      ['db-db.example.com', 'tls://db.example.com:443'],
      ['db-db2.example.com', 'tls://db2.example.com:443'],
    ]);
    expect(endpoints[0]).toMatchObject({ description: 'Database', metadata: { team: 'data' } });
    expect(endpoints[0]!.traffic_policy).toEqual({
      on_tcp_connect: [
        {
          name: 'db ip_restriction',
          actions: [
            {
              type: 'restrict-ips',
              config: { enforce: true, ip_policies: ['ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY'] },
            },
          ],
        },
        {
          name: 'db tls_termination',
          actions: [
            {
              type: 'terminate-tls',
              config: {
                min_version: '1.3',
                mutual_tls_certificate_authorities: ['ca_2YvG88zHTBUrwWfAPU0bnv6b8QY'],
                mutual_tls_verification_strategy: 'require-and-verify',
              },
            },
          ],
        },
        {
          name: 'db backend',
          actions: [{ type: 'forward-internal', config: { url: 'tls://db.internal:5432' } }],
        },
      ],
    });
  });

  it('an HTTPS edge on 443 becomes https://host (the default port dropped), named after the edge', () => {
    const { endpoints } = translate(https(''));
    expect(endpoints.map((e) => [e.name, e.url])).toEqual([['shop', 'https://shop.example.com']]);
  });

  it('a public hostport on another port than 443 is an error located at the hostport', () => {
    const { endpoints, diagnostics } = translate(`kind: TLSEdge
name: db
hostports: [192.0.2.10:5432]
`);
    expect(endpoints).toEqual([]);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ path: 'hostports[0]', line: 3, severity: 'error' }),
    );
  });

  it('a backend with no mapping is an error naming it', () => {
    const { diagnostics } = translate(
      https('').replace(BACKEND, 'bkdtg_2kt3xG55hdajmiOILUFbeDE0v5q'),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        path: 'routes[0].backend.backend_id',
        message: expect.stringContaining('bkdtg_2kt3xG55hdajmiOILUFbeDE0v5q'),
      }),
    );
  });

  it('a request phase always ends in an unguarded 404, and the response phase holds compression and headers', () => {
    const { endpoints } = translate(
      https(`    compression: {}
    response_headers: { add: { X-Served-By: edge }, remove: [Server] }
`),
    );
    const policy = endpoints[0]!.traffic_policy;
    expect(policy.on_http_request!.at(-1)).toEqual({
      name: 'shop no route',
      actions: [{ type: 'custom-response', config: { status_code: 404 } }],
    });
    expect(policy.on_http_response!.map((r) => r.actions.map((a) => a.type))).toEqual([
      ['compress-response'],
      ['remove-headers', 'add-headers'],
    ]);
  });

  it('more than ten headers are split into several actions; user-agent cannot be added', () => {
    const add = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`X-H${i}`, `v${i}`]));
    const { endpoints, diagnostics } = translate(
      https(`    request_headers: { add: ${JSON.stringify({ ...add, 'User-Agent': 'x' })} }\n`),
    );
    const headers = endpoints[0]!.traffic_policy.on_http_request!.find(
      (r) => r.name === 'shop / request_headers',
    )!;
    expect(
      headers.actions.map((a) => Object.keys((a.config as { headers: object }).headers).length),
    ).toEqual([10, 2]);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'warning',
        path: 'routes[0].request_headers.add["User-Agent"]',
      }),
    );
  });
});

describe('translateEdge: secrets stay references', () => {
  it('client_secret, header values and webhook secrets written as references are written as the same references', () => {
    const { endpoints } = translate(
      https(`    request_headers: { add: { X-Key: { env: UPSTREAM_KEY } } }
    webhook_verification: { provider: github, secret: { file: hook.txt } }
    oauth:
      provider:
        google: { client_id: id.apps, client_secret: { env: GOOGLE_SECRET } }
`),
    );
    const text = JSON.stringify(endpoints);
    expect(text).not.toContain('resolved-from-reference');
    const actions = endpoints[0]!.traffic_policy.on_http_request!.flatMap((r) => r.actions);
    expect(actions.find((a) => a.type === 'oauth')!.config!.client_secret).toEqual({
      env: 'GOOGLE_SECRET',
    });
    expect(actions.find((a) => a.type === 'verify-webhook')!.config!.secret).toEqual({
      file: 'hook.txt',
    });
    expect(actions.find((a) => a.type === 'add-headers')!.config!.headers).toEqual({
      'x-key': { env: 'UPSTREAM_KEY' },
    });
  });

  it('a reference inside an allow list cannot go into CEL: an error at that element', () => {
    const { diagnostics } = translate(
      https(`    oauth:
      provider:
        google: { email_domains: [{ env: DOMAIN }] }
`),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        path: 'routes[0].oauth.provider.google.email_domains[0]',
      }),
    );
  });
});

describe('translateEdge: gaps', () => {
  it.each([
    ['    saml: { idp_metadata: "<x/>" }\n', 'routes[0].saml', 'warning'],
    [
      '    oauth: { provider: { github: { teams: [org/team] } } }\n',
      'routes[0].oauth.provider.github.teams',
      'error',
    ],
    [
      '    oauth: { provider: { github: { organizations: [org], email_domains: [example.com] } } }\n',
      'routes[0].oauth.provider.github.organizations',
      'warning',
    ],
    [
      '    saml: { idp_metadata: "<x/>", authorized_groups: [admins] }\n',
      'routes[0].saml.authorized_groups',
      'error',
    ],
    [
      '    saml: { idp_metadata: "<x/>", force_authn: true }\n',
      'routes[0].saml.force_authn',
      'warning',
    ],
    // A session the edge ended would go on: traffic the edge refused would pass.
    [
      '    saml: { idp_metadata: "<x/>", inactivity_timeout: 300 }\n',
      'routes[0].saml.inactivity_timeout',
      'error',
    ],
    [
      '    saml: { idp_metadata: "<x/>", maximum_duration: 3600 }\n',
      'routes[0].saml.maximum_duration',
      'error',
    ],
    [
      '    saml: { idp_metadata: "<x/>", options_passthrough: true }\n',
      'routes[0].saml.options_passthrough',
      'warning',
    ],
    ['    websocket_tcp_converter: {}\n', 'routes[0].websocket_tcp_converter', 'warning'],
    [
      '    circuit_breaker: { tripped_duration: 300 }\n',
      'routes[0].circuit_breaker.tripped_duration',
      'error',
    ],
    [
      '    circuit_breaker: { rolling_window: 300 }\n',
      'routes[0].circuit_breaker.rolling_window',
      'warning',
    ],
    ['    description: the API\n', 'routes[0].description', 'warning'],
    ['    oauth: { provider: { facebook: {} } }\n', 'routes[0].oauth.provider.facebook', 'error'],
  ])('%s -> %s (%s)', (route, path, severity) => {
    const { diagnostics } = translate(https(route));
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ path, severity, file: 'edges.yaml', line: expect.any(Number) }),
    );
  });

  it("a circuit breaker is held to the action table's bounds: its longest window and fixed buckets", () => {
    const max = POLICY_LIMITS.breakerWindowMaxMs / 1000;
    const buckets = POLICY_LIMITS.breakerBuckets;
    const at = (cb: string) => {
      const { endpoints, diagnostics } = translate(https(`    circuit_breaker: ${cb}\n`));
      const config = endpoints[0]?.traffic_policy.on_http_request?.[0]?.actions.find(
        (a) => a.type === 'circuit-breaker',
      )?.config;
      return { config, messages: diagnostics.map((d) => `${d.path}: ${d.message}`) };
    };
    const within = at(
      `{ rolling_window: ${max}, tripped_duration: ${max}, num_buckets: ${buckets} }`,
    );
    expect(within.messages.filter((m) => m.includes('circuit_breaker'))).toEqual([]);
    expect(within.config).toMatchObject({
      window_duration: duration(max),
      tripped_duration: duration(max),
    });
    const beyond = at(`{ rolling_window: ${max + 1}, num_buckets: ${buckets + 1} }`);
    expect(beyond.config).toMatchObject({ window_duration: duration(max) });
    expect(beyond.messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`rolling_window: a window over ${duration(max)} cannot`),
        expect.stringContaining(`num_buckets: the bucket count is fixed at ${buckets}`),
      ]),
    );
  });

  it('TLS 1.0 on a TLS edge is a warning and becomes 1.2', () => {
    const { endpoints, diagnostics } = translate(`kind: TLSEdge
name: db
hostports: [db.example.com:443]
tls_termination: { min_version: "1.0" }
`);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        path: 'tls_termination.min_version',
        severity: 'warning',
        line: 4,
      }),
    );
    expect(endpoints[0]!.traffic_policy.on_tcp_connect![0]!.actions[0]!.config).toEqual({
      min_version: '1.2',
    });
  });

  it('two routes that authenticate differently cannot share one endpoint', () => {
    const { diagnostics } = translate(`kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
routes:
  - { match_type: path_prefix, match: /a, oauth: { provider: { google: {} } } }
  - { match_type: path_prefix, match: /b, oauth: { provider: { github: {} } } }
`);
    expect(diagnostics.filter((d) => d.severity === 'error').map((d) => d.path)).toEqual([
      'routes[1].oauth',
    ]);
  });

  it('two routes with the same authentication share one action guarded by both', () => {
    const { endpoints, diagnostics } = translate(`kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
routes:
  - { match_type: path_prefix, match: /a, oauth: { provider: { google: { email_domains: [x.com] } } } }
  - { match_type: path_prefix, match: /b, oauth: { provider: { google: {} } } }
`);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const auth = endpoints[0]!.traffic_policy.on_http_request!.filter((r) =>
      r.actions.some((a) => a.type === 'oauth'),
    );
    expect(auth).toHaveLength(1);
  });

  it("a route's own traffic policy is merged under the route's guard; a tcp phase under a route is an error", () => {
    const ok = translate(
      https(
        `    traffic_policy: { value: { on_http_request: [{ name: limit, expressions: ["req.host == 'x'"], actions: [{ type: deny }] }] } }\n`,
      ),
    );
    const merged = ok.endpoints[0]!.traffic_policy.on_http_request!.find(
      (r) => r.name === 'shop / traffic_policy limit',
    )!;
    expect(merged.expressions).toEqual(["req.url.path.startsWith('/')", "req.host == 'x'"]);
    const bad = translate(
      https(
        `    traffic_policy: { value: { on_tcp_connect: [{ actions: [{ type: restrict-ips, config: { deny: [10.0.0.0/8] } }] }] } }\n`,
      ),
    );
    expect(bad.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        path: 'routes[0].traffic_policy.value.on_tcp_connect',
      }),
    );
  });

  it('an action cloud endpoints do not know, or not in that phase, is an error (never dropped, never copied)', () => {
    const unknown = translate(
      https(`    traffic_policy:
      value:
        on_http_request:
          - name: limit
            actions:
              - type: deny
              - type: rate-limiter
                config: { capacity: 10 }
`),
    );
    // Located at the action itself, not at the policy as a whole.
    expect(unknown.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        path: 'routes[0].traffic_policy.value.on_http_request[0].actions[1]',
        line: 14,
        column: 17,
        message: expect.stringContaining('"rate-limiter" has no cloud endpoint equivalent'),
      }),
    );
    const misplaced = translate(
      https(
        `    traffic_policy: { value: { on_http_response: [{ actions: [{ type: verify-webhook, config: { provider: github, secret: abcdefgh } }] }] } }\n`,
      ),
    );
    expect(misplaced.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        path: 'routes[0].traffic_policy.value.on_http_response[0].actions[0]',
        message: expect.stringContaining('"verify-webhook" cannot run in on_http_response'),
      }),
    );
    const known = translate(
      https(
        `    traffic_policy: { value: { on_http_request: [{ actions: [{ type: deny, config: { status_code: 401 } }] }] } }\n`,
      ),
    );
    expect(known.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('url-rewrite and log in a traffic_policy module translate: they are actions', () => {
    const result = translate(
      https(
        `    traffic_policy: { value: { on_http_request: [{ actions: [{ type: url-rewrite, config: { from: '^/old', to: '/new' } }, { type: log, config: { metadata: { route: shop } } }] }] } }\n`,
      ),
    );
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const text = JSON.stringify(result);
    expect(text).toContain('"type":"url-rewrite"');
    expect(text).toContain('"type":"log"');
  });
});
