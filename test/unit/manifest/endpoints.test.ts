/**
 * `kind: CloudEndpoint`: every rule with one valid and one invalid case, the invalid one with
 * its exact diagnostic (file:line:col, path into the policy, message); and the model the loader
 * fills (normalised URL, default binding, the policy as data, sensitive paths). Pure pipeline on
 * in-memory files.
 */
import { describe, expect, it } from 'vitest';
import type { CloudEndpointManifest } from '../../../src/manifest/schema.js';
import { sensitiveValues } from '../../../src/manifest/secrets.js';
import { buildFrom, errorLines, type MemoryOptions } from './helpers.js';

/** An endpoint document: line 1 kind, 2 name, 3 url, then `extra` lines, then the policy. */
function endpoint(policy: string, options: { url?: string; extra?: string; name?: string } = {}) {
  return [
    'kind: CloudEndpoint',
    `name: ${options.name ?? 'app'}`,
    `url: ${options.url ?? 'https://app.example.com'}`,
    ...(options.extra === undefined ? [] : [options.extra]),
    'traffic_policy:',
    policy,
  ].join('\n');
}

/** The policy of an https endpoint: its request phase ends in a forward-internal (line 5 on). */
const FORWARD = `  on_http_request:
    - actions:
        - type: forward-internal
          config: { url: https://web.internal }`;

const request = (actions: string) => `  on_http_request:
    - actions:
${actions}
    - actions:
        - type: forward-internal
          config: { url: https://web.internal }`;

interface Case {
  readonly rule: string;
  readonly valid: Record<string, string>;
  readonly invalid: Record<string, string>;
  readonly expected: string[];
  readonly options?: MemoryOptions;
}

const one = (text: string) => ({ 'a.yaml': text });

const cases: Case[] = [
  // ---- URL, bindings, fields ---------------------------------------------------------------------
  {
    rule: 'the URL has a scheme',
    valid: one(endpoint(FORWARD)),
    invalid: one(endpoint(FORWARD, { url: 'app.example.com' })),
    expected: [
      'a.yaml:3:6: url: has no scheme (expected one of https, http, tls, tcp, e.g. https://host)',
    ],
  },
  {
    rule: 'the scheme is one of https, http, tls, tcp',
    valid: one(endpoint(FORWARD, { url: 'http://app.example.com' })),
    invalid: one(endpoint(FORWARD, { url: 'ftp://app.example.com' })),
    expected: ['a.yaml:3:6: url: scheme "ftp" is not one of https, http, tls, tcp'],
  },
  {
    rule: 'no path',
    valid: one(endpoint(FORWARD, { url: 'https://app.example.com/' })),
    invalid: one(endpoint(FORWARD, { url: 'https://app.example.com/api' })),
    expected: ['a.yaml:3:6: url: must not have a path'],
  },
  {
    rule: 'no query',
    valid: one(endpoint(FORWARD)),
    invalid: one(endpoint(FORWARD, { url: 'https://app.example.com?a=1' })),
    expected: ['a.yaml:3:6: url: must not have a query'],
  },
  {
    rule: 'no fragment',
    valid: one(endpoint(FORWARD)),
    invalid: one(endpoint(FORWARD, { url: 'https://app.example.com#top' })),
    expected: ['a.yaml:3:6: url: must not have a fragment'],
  },
  {
    rule: 'no user info',
    valid: one(endpoint(FORWARD)),
    invalid: one(endpoint(FORWARD, { url: 'https://me@app.example.com' })),
    expected: ['a.yaml:3:6: url: must not carry user info'],
  },
  {
    rule: 'a tcp URL needs a port',
    valid: one(
      endpoint('  on_tcp_connect:\n    - actions:\n        - type: close-connection', {
        url: 'tcp://app.example.com:5432',
      }),
    ),
    invalid: one(
      endpoint('  on_tcp_connect:\n    - actions:\n        - type: close-connection', {
        url: 'tcp://app.example.com',
      }),
    ),
    expected: ['a.yaml:3:6: url: a tcp URL needs an explicit port'],
  },
  {
    rule: 'a public https endpoint is on port 443',
    valid: one(endpoint(FORWARD, { url: 'https://app.example.com:443' })),
    invalid: one(endpoint(FORWARD, { url: 'https://app.example.com:8443' })),
    expected: [
      'a.yaml:3:6: url: binding public (the default): a public https endpoint must use port 443',
    ],
  },
  {
    rule: 'a public http endpoint is on port 80',
    valid: one(endpoint(FORWARD, { url: 'http://app.example.com', extra: 'bindings: [public]' })),
    invalid: one(
      endpoint(FORWARD, { url: 'http://app.example.com:8080', extra: 'bindings: [public]' }),
    ),
    expected: ['a.yaml:4:12: bindings[0]: binding public: a public http endpoint must use port 80'],
  },
  {
    rule: 'an internal binding needs a .internal host',
    valid: one(
      endpoint(FORWARD, { url: 'https://api.internal:8443', extra: 'bindings: [internal]' }),
    ),
    invalid: one(
      endpoint(FORWARD, { url: 'https://api.example.com', extra: 'bindings: [internal]' }),
    ),
    expected: [
      "a.yaml:4:12: bindings[0]: binding internal: an internal endpoint's host must end in .internal",
    ],
  },
  {
    rule: 'a .internal host is always internal',
    valid: one(endpoint(FORWARD, { url: 'https://api.internal' })),
    invalid: one(endpoint(FORWARD, { url: 'https://api.internal', extra: 'bindings: [public]' })),
    expected: ['a.yaml:4:12: bindings[0]: binding public: a .internal host is always internal'],
  },
  {
    rule: 'kubernetes: http://name.namespace or tcp://name.namespace:port only',
    valid: one(endpoint(FORWARD, { url: 'http://web.shop:8080', extra: 'bindings: [kubernetes]' })),
    invalid: one(endpoint(FORWARD, { url: 'https://web.shop', extra: 'bindings: [kubernetes]' })),
    expected: [
      'a.yaml:4:12: bindings[0]: binding kubernetes: kubernetes takes only http://name.namespace[:port] or tcp://name.namespace:port',
    ],
  },
  {
    rule: 'at most one binding',
    valid: one(endpoint(FORWARD, { extra: 'bindings: [public]' })),
    invalid: one(endpoint(FORWARD, { extra: 'bindings: [public, public]' })),
    expected: ['a.yaml:4:11: bindings: takes at most one binding'],
  },
  {
    rule: 'description is at most 255 bytes',
    valid: one(endpoint(FORWARD, { extra: `description: ${'é'.repeat(127)}` })),
    invalid: one(endpoint(FORWARD, { extra: `description: ${'é'.repeat(128)}` })),
    expected: ['a.yaml:4:14: description: must be at most 255 bytes (UTF-8)'],
  },
  {
    rule: 'metadata as stored is at most 4096 bytes',
    valid: one(endpoint(FORWARD, { extra: `metadata: { note: ${'x'.repeat(4000)} }` })),
    invalid: one(endpoint(FORWARD, { extra: `metadata: { note: ${'x'.repeat(4060)} }` })),
    expected: [
      "a.yaml:4:11: metadata: stored metadata would be 4120 bytes (labels plus edgesync's own keys); the limit is 4096",
    ],
  },
  {
    rule: 'labels never use the edgesync/ prefix',
    valid: one(endpoint(FORWARD, { extra: 'metadata: { team: web }' })),
    invalid: one(endpoint(FORWARD, { extra: 'metadata: { edgesync/owner: me }' })),
    expected: [
      'a.yaml:4:13: metadata: label prefix "edgesync/" is reserved for edgesync\'s own keys',
    ],
  },

  // ---- the policy: phases and rules ------------------------------------------------------------
  {
    rule: 'known phases only',
    valid: one(endpoint(`${FORWARD}\n  on_http_response: []`)),
    invalid: one(endpoint(`${FORWARD}\n  on_http_respons: []`)),
    expected: [
      'a.yaml:9:3: traffic_policy: unknown field "on_http_respons"; did you mean "on_http_response"?',
    ],
  },
  {
    rule: 'a legacy phase name and its new name are not both set',
    valid: one(endpoint(FORWARD.replace('on_http_request', 'inbound'))),
    invalid: one(endpoint(`${FORWARD}\n  inbound: []`)),
    expected: [
      'a.yaml:9:12: traffic_policy.inbound: the same phase as on_http_request: write one of them',
    ],
  },
  {
    rule: 'a tls endpoint has only on_tcp_connect',
    valid: one(
      endpoint('  on_tcp_connect:\n    - actions:\n        - type: close-connection', {
        url: 'tls://app.example.com:443',
      }),
    ),
    invalid: one(
      endpoint(
        '  on_tcp_connect:\n    - actions:\n        - type: close-connection\n  on_http_response: []',
        { url: 'tls://app.example.com:443' },
      ),
    ),
    expected: [
      'a.yaml:8:21: traffic_policy.on_http_response: a tls endpoint has no HTTP phases (only on_tcp_connect)',
    ],
  },
  {
    rule: 'a rule has name, expressions and actions only',
    valid: one(endpoint(FORWARD.replace('- actions:', '- name: backend\n      actions:'))),
    invalid: one(endpoint(FORWARD.replace('- actions:', '- nam: backend\n      actions:'))),
    expected: [
      'a.yaml:6:7: traffic_policy.on_http_request[0]: unknown field "nam"; did you mean "name"?',
    ],
  },
  {
    rule: 'a rule has at least one action',
    valid: one(endpoint(FORWARD)),
    invalid: one(
      endpoint(`  on_http_request:\n    - actions: []\n${FORWARD.split('\n').slice(1).join('\n')}`),
    ),
    expected: [
      'a.yaml:6:16: traffic_policy.on_http_request[0].actions: a rule needs at least one action',
    ],
  },
  {
    rule: 'expressions are CEL',
    valid: one(
      endpoint(
        request(`        - type: deny`).replace(
          '- actions:',
          `- expressions: ["req.url.path == '/a'"]\n      actions:`,
        ),
      ),
    ),
    invalid: one(
      endpoint(
        request(`        - type: deny`).replace(
          '- actions:',
          `- expressions: ["req.url.path == "]\n      actions:`,
        ),
      ),
    ),
    // At the offending token (the end of the text), not at the expression's start.
    expected: [
      'a.yaml:6:38: traffic_policy.on_http_request[0].expressions[0]: CEL: Unexpected token: EOF',
    ],
  },

  // ---- the policy: actions ---------------------------------------------------------------------
  {
    rule: 'known action types only',
    valid: one(
      endpoint(request('        - type: remove-headers\n          config: { headers: [x-a] }')),
    ),
    invalid: one(
      endpoint(request('        - type: remove-header\n          config: { headers: [x-a] }')),
    ),
    expected: [
      'a.yaml:7:17: traffic_policy.on_http_request[0].actions[0].type: unknown action type "remove-header" (did you mean remove-headers?); known: add-headers, ai-gateway, basic-auth, circuit-breaker, close-connection, compress-response, custom-response, deny, forward-internal, http-request, jwt-validation, log, oauth, openid-connect, owasp-crs-request, owasp-crs-response, rate-limit, redirect, remove-headers, request-body-find-replace, response-body-find-replace, restrict-ips, saml, set-vars, sse-find-replace, terminate-tls, url-rewrite, verify-webhook',
    ],
  },
  {
    rule: 'an action runs only in its phases',
    valid: one(
      endpoint(
        `${FORWARD}\n  on_http_response:\n    - actions:\n        - type: compress-response`,
      ),
    ),
    invalid: one(endpoint(request('        - type: compress-response'))),
    expected: [
      'a.yaml:7:17: traffic_policy.on_http_request[0].actions[0].type: compress-response cannot run in on_http_request (only in on_http_response)',
    ],
  },
  {
    rule: "config fields are the action table's",
    valid: one(
      endpoint(
        request('        - type: deny\n          config: { status_code: 404 }').replace(
          '- actions:',
          "- expressions: ['true']\n      actions:",
        ),
      ),
    ),
    invalid: one(
      endpoint(
        request('        - type: deny\n          config: { status_cod: 404 }').replace(
          '- actions:',
          "- expressions: ['true']\n      actions:",
        ),
      ),
    ),
    expected: [
      'a.yaml:9:21: traffic_policy.on_http_request[0].actions[0].config: unknown field "status_cod"; did you mean "status_code"?',
    ],
  },
  {
    rule: 'config values are within their bounds',
    valid: one(
      endpoint(
        request(
          '        - type: circuit-breaker\n          config: { error_threshold: 1, window_duration: 2m }',
        ),
      ),
    ),
    invalid: one(
      endpoint(
        request(
          '        - type: circuit-breaker\n          config: { error_threshold: 1.5, window_duration: 3m }',
        ),
      ),
    ),
    expected: [
      'a.yaml:8:38: traffic_policy.on_http_request[0].actions[0].config.error_threshold: must be 0..1',
      'a.yaml:8:60: traffic_policy.on_http_request[0].actions[0].config.window_duration: must be 1s..120s, got 3m',
    ],
  },
  {
    rule: 'config values have their types',
    valid: one(
      endpoint(request('        - type: add-headers\n          config: { headers: { x-a: b } }')),
    ),
    invalid: one(
      endpoint(request('        - type: add-headers\n          config: { headers: [x-a] }')),
    ),
    expected: [
      'a.yaml:8:30: traffic_policy.on_http_request[0].actions[0].config.headers: expected a mapping, got a list',
    ],
  },
  {
    rule: 'add-headers may not add user-agent; a custom response may answer with one',
    valid: one(
      endpoint(
        '  on_http_request:\n    - actions:\n        - type: custom-response\n          config: { headers: { user-agent: edge } }',
      ),
    ),
    invalid: one(
      endpoint(
        request('        - type: add-headers\n          config: { headers: { User-Agent: b } }'),
      ),
    ),
    expected: [
      'a.yaml:8:44: traffic_policy.on_http_request[0].actions[0].config.headers["User-Agent"]: user-agent may not be added',
    ],
  },
  {
    rule: 'required config fields',
    valid: one(
      endpoint(request('        - type: saml\n          config: { idp_metadata: "<xml/>" }')),
    ),
    invalid: one(endpoint(request('        - type: saml\n          config: {}'))),
    expected: [
      'a.yaml:8:19: traffic_policy.on_http_request[0].actions[0].config.idp_metadata: required field is missing',
    ],
  },
  {
    rule: "fields that go together (the table's own rules)",
    valid: one(endpoint(request('        - type: oauth\n          config: { provider: google }'))),
    invalid: one(
      endpoint(request('        - type: oauth\n          config: { provider: facebook }')),
    ),
    expected: [
      'a.yaml:8:31: traffic_policy.on_http_request[0].actions[0].config.provider: provider facebook needs client_id and client_secret',
    ],
  },
  {
    rule: 'deny takes no config in on_tcp_connect',
    valid: one(
      endpoint('  on_tcp_connect:\n    - actions:\n        - type: deny', {
        url: 'tls://a.example.com:443',
      }),
    ),
    invalid: one(
      endpoint(
        '  on_tcp_connect:\n    - actions:\n        - type: deny\n          config: { status_code: 403 }',
        {
          url: 'tls://a.example.com:443',
        },
      ),
    ),
    expected: [
      'a.yaml:8:34: traffic_policy.on_tcp_connect[0].actions[0].config.status_code: deny takes no config in on_tcp_connect',
    ],
  },
  {
    rule: "forward-internal goes to an internal endpoint of the endpoint's protocol",
    valid: one(endpoint(FORWARD.replace('https://web.internal', 'http://web.internal:8080'))),
    invalid: one(endpoint(FORWARD.replace('https://web.internal', 'https://web.example.com'))),
    expected: [
      'a.yaml:8:26: traffic_policy.on_http_request[0].actions[0].config.url: https://web.example.com is not an internal endpoint (a .internal host)',
    ],
  },
  {
    rule: `\${...} interpolations are CEL`,
    valid: one(
      endpoint(
        request(
          `        - type: add-headers\n          config: { headers: { x-host: "\${req.host}" } }`,
        ),
      ),
    ),
    invalid: one(
      endpoint(
        request(
          `        - type: add-headers\n          config: { headers: { x-host: "\${req.host ==}" } }`,
        ),
      ),
    ),
    expected: [
      `a.yaml:8:54: traffic_policy.on_http_request[0].actions[0].config.headers["x-host"]: CEL: Unexpected token: EOF`,
    ],
  },
  {
    rule: 'at most one authentication action',
    valid: one(endpoint(request('        - type: oauth\n          config: { provider: google }'))),
    invalid: one(
      endpoint(
        request(
          '        - type: oauth\n          config: { provider: google }\n        - type: openid-connect\n          config: { issuer_url: "https://id.example.com" }',
        ),
      ),
    ),
    expected: [
      'a.yaml:9:17: traffic_policy.on_http_request[0].actions[1].type: a second authentication action (the first is on_http_request[0].actions[0]); an endpoint has at most one of oauth, openid-connect, saml',
    ],
  },
  {
    rule: 'nothing after a terminating action',
    valid: one(
      endpoint(request('        - type: restrict-ips\n          config: { allow: [10.0.0.0/8] }')),
    ),
    invalid: one(
      endpoint(
        request(
          '        - type: custom-response\n          config: { status_code: 200 }\n        - type: restrict-ips\n          config: { allow: [10.0.0.0/8] }',
        ).replace('- actions:', "- expressions: ['true']\n      actions:"),
      ),
    ),
    expected: [
      'a.yaml:10:17: traffic_policy.on_http_request[0].actions[1].type: unreachable: actions[0] (custom-response) ends the phase before it',
    ],
  },
  {
    rule: "the entry phase's last rule has no expressions",
    valid: one(endpoint(FORWARD)),
    invalid: one(
      endpoint(FORWARD.replace('- actions:', "- expressions: ['true']\n      actions:")),
    ),
    expected: [
      "a.yaml:6:20: traffic_policy.on_http_request[0].expressions: a https endpoint's policy must end in a terminating action in on_http_request (deny, custom-response, forward-internal without on_error: continue, close-connection): its last rule has expressions, so it may not run",
    ],
  },
  {
    rule: "the entry phase's last rule ends with a terminating action",
    valid: one(endpoint(FORWARD)),
    invalid: one(
      endpoint(
        FORWARD.replace(
          '{ url: https://web.internal }',
          '{ url: https://web.internal, on_error: continue }',
        ),
      ),
    ),
    expected: [
      "a.yaml:7:17: traffic_policy.on_http_request[0].actions[0].type: a https endpoint's policy must end in a terminating action in on_http_request (deny, custom-response, forward-internal without on_error: continue, close-connection): its last rule ends with forward-internal, which does not end the phase",
    ],
  },
  {
    rule: 'the entry phase is there',
    valid: one(endpoint(FORWARD)),
    invalid: one(
      endpoint('  on_http_response:\n    - actions:\n        - type: compress-response'),
    ),
    expected: [
      "a.yaml:5:3: traffic_policy: a https endpoint's policy must end in a terminating action in on_http_request (deny, custom-response, forward-internal without on_error: continue, close-connection): on_http_request has no rules",
    ],
  },

  // ---- the policy written as a string ----------------------------------------------------------
  {
    rule: 'a block literal policy: errors point at the line inside it',
    valid: one(
      endpoint('  |\n  on_http_request:\n    - actions:\n        - type: deny').replace(
        'traffic_policy:\n',
        'traffic_policy:',
      ),
    ),
    invalid: one(
      endpoint('  |\n  on_http_request:\n    - actions:\n        - type: denied').replace(
        'traffic_policy:\n',
        'traffic_policy:',
      ),
    ),
    expected: [
      'a.yaml:7:17: traffic_policy.on_http_request[0].actions[0].type: unknown action type "denied"; known: add-headers, ai-gateway, basic-auth, circuit-breaker, close-connection, compress-response, custom-response, deny, forward-internal, http-request, jwt-validation, log, oauth, openid-connect, owasp-crs-request, owasp-crs-response, rate-limit, redirect, remove-headers, request-body-find-replace, response-body-find-replace, restrict-ips, saml, set-vars, sse-find-replace, terminate-tls, url-rewrite, verify-webhook',
    ],
  },
  {
    rule: 'a JSON policy string: errors point at the string',
    valid: one(
      endpoint(` '{"on_http_request": [{"actions": [{"type": "deny"}]}]}'`).replace(
        'traffic_policy:\n',
        'traffic_policy:',
      ),
    ),
    invalid: one(
      endpoint(
        ` '{"on_http_request": [{"actions": [{"type": "deny", "config": {"status_code": 99}}]}]}'`,
      ).replace('traffic_policy:\n', 'traffic_policy:'),
    ),
    expected: [
      'a.yaml:4:17: traffic_policy.on_http_request[0].actions[0].config.status_code: must be 100..599',
    ],
  },
  {
    rule: 'a policy string that is no YAML: the line inside it',
    valid: one(
      endpoint('  |\n  on_http_request:\n    - actions: [{ type: deny }]').replace(
        'traffic_policy:\n',
        'traffic_policy:',
      ),
    ),
    invalid: one(
      endpoint(
        '  |\n  on_http_request:\n    - actions: [{ type: deny }\n  on_http_response: []',
      ).replace('traffic_policy:\n', 'traffic_policy:'),
    ),
    expected: ['a.yaml:7:3: traffic_policy: not a YAML or JSON document: '],
  },

  {
    rule: 'a policy string of two YAML documents: refused at the second, never cut to the first',
    valid: one(
      endpoint(
        '  |\n  on_http_request:\n    - actions: [{ type: restrict-ips, config: { enforce: true, allow: [10.0.0.0/8] } }]\n    - actions: [{ type: deny }]',
      ).replace('traffic_policy:\n', 'traffic_policy:'),
    ),
    invalid: one(
      endpoint(
        '  |\n  on_http_request:\n    - actions: [{ type: deny }]\n  ---\n  on_http_request:\n    - actions: [{ type: restrict-ips, config: { enforce: true, allow: [10.0.0.0/8] } }]',
      ).replace('traffic_policy:\n', 'traffic_policy:'),
    ),
    expected: [
      'a.yaml:7:3: traffic_policy: holds more than one YAML document (a policy is exactly one document',
    ],
  },
  {
    rule: 'a reference that fails is the one error about its field (no rule over the hole)',
    valid: one(
      endpoint(
        request(
          '        - type: oauth\n          config: { provider: google, client_id: a, client_secret: { env: SECRET } }',
        ),
      ),
    ),
    invalid: one(
      endpoint(
        request(
          '        - type: oauth\n          config: { provider: google, client_id: a, client_secret: { env: NOPE } }',
        ),
      ),
    ),
    expected: [
      'a.yaml:8:75: traffic_policy.on_http_request[0].actions[0].config.client_secret: environment variable NOPE is not set',
    ],
    options: { env: { SECRET: 'the-secret' } },
  },

  // ---- across the set --------------------------------------------------------------------------
  {
    rule: 'names are unique among CloudEndpoints',
    valid: {
      'a.yaml': endpoint(FORWARD),
      'b.yaml': endpoint(FORWARD, { name: 'other', url: 'https://other.example.com' }),
    },
    invalid: {
      'a.yaml': endpoint(FORWARD),
      'b.yaml': endpoint(FORWARD, { url: 'https://other.example.com' }),
    },
    expected: [
      'b.yaml:2:7: name: duplicate CloudEndpoint name "app" (first defined at a.yaml:2:7)',
    ],
  },
  {
    rule: 'one URL and binding: both pool, or only one endpoint',
    valid: {
      'a.yaml': endpoint(FORWARD, { extra: 'pooling_enabled: true' }),
      'b.yaml': endpoint(FORWARD, {
        name: 'b',
        url: 'https://APP.example.com:443',
        extra: 'pooling_enabled: true',
      }),
    },
    invalid: {
      'a.yaml': endpoint(FORWARD, { extra: 'pooling_enabled: true' }),
      'b.yaml': endpoint(FORWARD, { name: 'b', url: 'https://APP.example.com:443' }),
    },
    expected: [
      'b.yaml:3:6: url: CloudEndpoint "app" (a.yaml:3:6) already uses https://app.example.com (public); both must set pooling_enabled: true to share it',
    ],
  },
  {
    rule: "an endpoint does not claim an edge's host and port",
    valid: {
      'a.yaml': endpoint(FORWARD),
      'b.yaml': 'kind: HTTPSEdge\nname: old\nhostports: [old.example.com:443]\n',
    },
    invalid: {
      'a.yaml': endpoint(FORWARD),
      'b.yaml': 'kind: HTTPSEdge\nname: old\nhostports: [app.example.com:443]\n',
    },
    expected: [
      'a.yaml:3:6: url: https://app.example.com claims app.example.com:443, which HTTPSEdge "old" serves (b.yaml:3:13); remove the hostport from the edge first',
    ],
  },
];

describe('CloudEndpoint rules', () => {
  it.each(cases)('$rule', ({ valid, invalid, expected, options }) => {
    const good = buildFrom(valid, options);
    expect(errorLines(good)).toEqual([]);
    const bad = errorLines(buildFrom(invalid, options));
    expect(bad).toHaveLength(expected.length);
    // A CEL parser's message is its own: the diagnostic starts with ours.
    for (const [i, line] of bad.entries()) {
      expect(line.startsWith(expected[i] as string), line).toBe(true);
    }
  });
});

describe('the CloudEndpoint model', () => {
  const load = (
    files: Record<string, string>,
    options?: MemoryOptions,
  ): CloudEndpointManifest[] => {
    const result = buildFrom(files, options);
    expect(errorLines(result)).toEqual([]);
    return result.ok ? result.set.cloudEndpoints : [];
  };

  it('normalises the URL, fills the defaults and keeps the policy as data', () => {
    const [ep] = load(one(endpoint(FORWARD, { url: 'HTTPS://App.Example.COM:443' })));
    expect(ep).toEqual({
      kind: 'CloudEndpoint',
      name: 'app',
      url: 'https://app.example.com',
      bindings: ['public'],
      pooling_enabled: false,
      metadata: {},
      protect: false,
      traffic_policy: {
        on_http_request: [
          { actions: [{ type: 'forward-internal', config: { url: 'https://web.internal' } }] },
        ],
      },
      source: { file: 'a.yaml', line: 1, column: 1 },
      sensitive: [],
    });
  });

  it('keeps ports other than the default, and a .internal host is internal', () => {
    const eps = load({
      'a.yaml': endpoint(FORWARD, { url: 'https://api.internal:8443' }),
      'b.yaml': endpoint('  on_tcp_connect:\n    - actions:\n        - type: close-connection', {
        name: 'db',
        url: 'TLS://DB.example.com:443',
      }),
    });
    expect(eps.map((e) => [e.name, e.url, e.bindings])).toEqual([
      ['app', 'https://api.internal:8443', ['internal']],
      ['db', 'tls://db.example.com:443', ['public']],
    ]);
  });

  it('reads a policy string (YAML or JSON) into the same data as the mapping', () => {
    const mapping = load(one(endpoint(FORWARD)))[0]?.traffic_policy;
    const yaml = load(one(`${endpoint('').trimEnd()} |\n${FORWARD}\n`))[0]?.traffic_policy;
    const json = load(one(`${endpoint('').trimEnd()} '${JSON.stringify(mapping)}'\n`))[0]
      ?.traffic_policy;
    expect(yaml).toEqual(mapping);
    expect(json).toEqual(mapping);
  });

  it('sorts endpoints by name and resolves { env } / { file } in config values, as sensitive', () => {
    const eps = load(
      {
        'a.yaml': endpoint(
          request(
            '        - type: oauth\n          config:\n            provider: google\n            client_id: { env: CLIENT_ID }\n            client_secret: { file: secret.txt }\n        - type: add-headers\n          config: { headers: { x-api: { env: API_KEY } } }',
          ),
          { name: 'zz' },
        ),
        'b.yaml': endpoint(FORWARD, { name: 'aa', url: 'https://aa.example.com' }),
      },
      {
        env: { CLIENT_ID: 'id-from-env', API_KEY: 'key-from-env' },
        refFiles: { 'secret.txt': 'secret-from-file\n' },
      },
    );
    expect(eps.map((e) => e.name)).toEqual(['aa', 'zz']);
    const zz = eps[1] as CloudEndpointManifest;
    expect(zz.traffic_policy.on_http_request).toEqual([
      {
        actions: [
          {
            type: 'oauth',
            config: {
              provider: 'google',
              client_id: 'id-from-env',
              client_secret: 'secret-from-file',
            },
          },
          { type: 'add-headers', config: { headers: { 'x-api': 'key-from-env' } } },
        ],
      },
      { actions: [{ type: 'forward-internal', config: { url: 'https://web.internal' } }] },
    ]);
    expect(zz.sensitive).toEqual([
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'client_id'],
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'client_secret'],
      ['traffic_policy', 'on_http_request', 0, 'actions', 1, 'config', 'headers', 'x-api'],
    ]);
  });

  it('makes the secret config fields sensitive however they are written', () => {
    const [ep] = load(
      one(
        endpoint(
          request(
            '        - type: verify-webhook\n          config: { provider: github, secret: literal-webhook-secret }',
          ),
        ),
      ),
    );
    expect(ep?.sensitive).toEqual([
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'secret'],
    ]);
    const [tls] = load(
      one(
        endpoint(
          '  on_tcp_connect:\n    - actions:\n        - type: terminate-tls\n          config:\n            server_certificate: "-----BEGIN CERTIFICATE-----"\n            server_private_key: "-----BEGIN PRIVATE KEY-----"\n        - type: close-connection',
          { url: 'tls://db.example.com:443' },
        ),
      ),
    );
    expect(tls?.sensitive).toEqual([
      ['traffic_policy', 'on_tcp_connect', 0, 'actions', 0, 'config', 'server_private_key'],
    ]);
  });

  it("gives the masking module every sensitive value of an endpoint's policy", () => {
    const result = buildFrom(
      one(
        endpoint(
          request(
            '        - type: verify-webhook\n          config: { provider: github, secret: literal-webhook-secret }\n        - type: add-headers\n          config: { headers: { x-key: { env: KEY } } }',
          ),
        ),
      ),
      { env: { KEY: 'key-from-env' } },
    );
    expect(result.ok && sensitiveValues(result.set).sort()).toEqual([
      'key-from-env',
      'literal-webhook-secret',
    ]);
  });

  it('a reference outside a string place is no reference (a set-vars value is free data)', () => {
    const [ep] = load(
      one(
        endpoint(
          request('        - type: set-vars\n          config: { vars: [{ who: { env: NOPE } }] }'),
        ),
      ),
    );
    expect(ep?.traffic_policy.on_http_request).toContainEqual({
      actions: [{ type: 'set-vars', config: { vars: [{ who: { env: 'NOPE' } }] } }],
    });
  });
});

describe('CEL in a policy is checked against the service’s variables and functions', () => {
  it('reports every CEL error of a file in one run, each at its token in the file', () => {
    const policy = `  on_http_request:
    - expressions:
        - "req.url.pathh == '/a'"
        - request.path == '/'
        - "nosuch(req.url.path)"
      actions:
        - type: add-headers
          config: { headers: { x-a: "\${1 + 'a'}" } }
    - expressions:
        - |
          req.method == 'GET' &&
            req.url.pathh.startsWith('/b')
      actions:
        - type: deny
    - actions:
        - type: forward-internal
          config: { url: https://web.internal }`;
    expect(errorLines(buildFrom(one(endpoint(policy))))).toEqual([
      'a.yaml:7:20: traffic_policy.on_http_request[0].expressions[0]: CEL: No such key: pathh',
      'a.yaml:8:11: traffic_policy.on_http_request[0].expressions[1]: CEL: Unknown variable: request',
      "a.yaml:9:12: traffic_policy.on_http_request[0].expressions[2]: CEL: found no matching overload for 'nosuch(string)'",
      'a.yaml:12:40: traffic_policy.on_http_request[0].actions[0].config.headers["x-a"]: CEL: no such overload: int + string',
      'a.yaml:16:21: traffic_policy.on_http_request[1].expressions[0]: CEL: No such key: pathh',
    ]);
  });

  it('locates an error inside a policy written as a string (a block literal)', () => {
    const text = [
      'kind: CloudEndpoint',
      'name: app',
      'url: https://app.example.com',
      'traffic_policy: |',
      '  on_http_request:',
      '    - expressions: ["req.url.pathh == \'/\'"]',
      '      actions: [{ type: deny }]',
      '    - actions: [{ type: forward-internal, config: { url: "https://web.internal" } }]',
    ].join('\n');
    expect(errorLines(buildFrom(one(text)))).toEqual([
      'a.yaml:6:30: traffic_policy.on_http_request[0].expressions[0]: CEL: No such key: pathh',
    ]);
  });

  it('refuses ten unclosed (-(-(- expressions of a 7 KB file quickly, each located', () => {
    const bad = `${'(-'.repeat(340)}1`;
    const lines = Array.from({ length: 10 }, () => `        - "${bad}"`).join('\n');
    const policy = `  on_http_request:\n    - expressions:\n${lines}\n      actions:\n        - type: deny\n${FORWARD.split('\n').slice(1).join('\n')}`;
    const file = endpoint(policy);
    expect(file.length).toBeGreaterThan(7000);
    const started = performance.now();
    const errors = errorLines(buildFrom(one(file)));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(errors).toHaveLength(10);
    expect(errors[0]).toBe(
      'a.yaml:7:76: traffic_policy.on_http_request[0].expressions[0]: CEL: expression nests deeper than 32 levels',
    );
  });
});
