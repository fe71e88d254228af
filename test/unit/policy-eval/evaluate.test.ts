import { describe, expect, it } from 'vitest';
import type { PolicyGiven } from '../../../src/manifest/policy/tests.js';
import { describeOutcome, describeRule } from '../../../src/policy-eval/cases.js';
import {
  evaluatePolicy,
  evaluatePrepared,
  type PolicyRequest,
  prepareRequest,
  requestTarget,
} from '../../../src/policy-eval/evaluate.js';

const ENDPOINT = 'https://app.example.com';

/** A `${expr}` interpolation, as a policy's config string writes it. */
const cel = (expr: string) => `$${'{'}${expr}}`;

const get = (url: string, more: Partial<PolicyRequest> = {}): PolicyRequest => ({
  method: 'GET',
  url,
  ...more,
});

/** The words of an outcome and the rule that decided it. */
function run(policy: Record<string, unknown>, request: PolicyRequest, given: PolicyGiven = {}) {
  const e = evaluatePolicy(policy, ENDPOINT, request, given);
  return { outcome: describeOutcome(e.outcome), rule: describeRule(e.decidedBy), e };
}

const admin = {
  on_http_request: [
    {
      name: 'office only',
      expressions: ["req.url.path.startsWith('/admin')"],
      actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }],
    },
    {
      name: 'admin',
      expressions: ["req.url.path.startsWith('/admin')"],
      actions: [{ type: 'forward-internal', config: { url: 'https://admin.internal' } }],
    },
    {
      name: 'app',
      actions: [{ type: 'forward-internal', config: { url: 'https://app.internal' } }],
    },
  ],
};

describe('the evaluator', () => {
  it.each([
    [
      '/admin from outside',
      get(`${ENDPOINT}/admin`, { clientIp: '203.0.113.9' }),
      'refused by restrict-ips (403)',
      'on_http_request[0] "office only" actions[0] (restrict-ips)',
    ],
    [
      '/admin from the office',
      get(`${ENDPOINT}/admin/x`, { clientIp: '10.1.2.3' }),
      'forwarded to https://admin.internal',
      'on_http_request[1] "admin" actions[0] (forward-internal)',
    ],
    [
      'the app',
      get(`${ENDPOINT}/`),
      'forwarded to https://app.internal',
      'on_http_request[2] "app" actions[0] (forward-internal)',
    ],
  ])('%s', (_name, request, outcome, rule) => {
    expect(run(admin, request)).toMatchObject({ outcome, rule });
  });

  it('runs every action type the spec documents as deciding an outcome', () => {
    const rule = (type: string, config: Record<string, unknown> = {}) => ({
      on_http_request: [
        { actions: [{ type, config }] },
        { actions: [{ type: 'forward-internal', config: { url: 'https://app.internal' } }] },
      ],
    });
    const r = get(`${ENDPOINT}/a?x=1`);
    expect(run(rule('deny'), r).outcome).toBe('refused by deny (403)');
    expect(run(rule('deny', { status_code: 404 }), r).outcome).toBe('refused by deny (404)');
    expect(
      run(rule('custom-response', { status_code: 418, body: `hi ${cel('req.url.path')}` }), r)
        .outcome,
    ).toBe('answered 418');
    expect(run(rule('custom-response'), r).outcome).toBe('answered 200');
    expect(run(rule('close-connection'), r).outcome).toBe('connection closed by close-connection');
    expect(run(rule('verify-webhook', { provider: 'github', secret: 's' }), r).outcome).toBe(
      'refused by verify-webhook (403)',
    );
    expect(
      run(rule('verify-webhook', { provider: 'github', secret: 's' }), r, {
        webhook_verified: true,
      }).outcome,
    ).toBe('forwarded to https://app.internal');
    expect(
      run(rule('verify-webhook', { provider: 'github', secret: 's', enforce: false }), r).outcome,
    ).toBe('forwarded to https://app.internal');
    expect(run(rule('jwt-validation', {}), r).outcome).toBe('refused by jwt-validation (401)');
    expect(run(rule('jwt-validation', {}), r, { jwt: { valid: true, claims: {} } }).outcome).toBe(
      'forwarded to https://app.internal',
    );
    expect(run(rule('rate-limit', { name: 'per-ip' }), r).outcome).toBe(
      'forwarded to https://app.internal',
    );
    expect(
      run(rule('rate-limit', { name: 'per-ip' }), r, { rate_limited: ['per-ip'] }).outcome,
    ).toBe('refused by rate-limit (429)');
    expect(
      run(rule('rate-limit', { name: 'per-ip' }), r, { rate_limited: ['other'] }).outcome,
    ).toBe('forwarded to https://app.internal');
    expect(run(rule('circuit-breaker'), r, { circuit_open: true }).outcome).toBe(
      'refused by circuit-breaker (503)',
    );
    expect(run(rule('oauth', { provider: 'google' }), r).outcome).toBe('oauth google');
    expect(
      run(rule('oauth', { provider: 'google' }), r, { identity: { email: 'a@x.com' } }).outcome,
    ).toBe('forwarded to https://app.internal');
    expect(run(rule('openid-connect', { issuer_url: 'https://id.example.com' }), r).outcome).toBe(
      'openid-connect https://id.example.com',
    );
    expect(run(rule('saml', { idp_metadata: '<x/>' }), r).outcome).toBe('saml saml');
    expect(run(rule('redirect', { to: 'https://other.example.com/' }), r).outcome).toBe(
      'redirected 302 to https://other.example.com/',
    );
    expect(run(rule('redirect', { from: 'com/a', to: 'com/b', status_code: 301 }), r).outcome).toBe(
      'redirected 301 to https://app.example.com/b?x=1',
    );
    // Unanchored, every match replaced: `/a` also matches the `//a` of `https://app`.
    expect(run(rule('redirect', { from: '/a', to: '/b' }), r).outcome).toBe(
      'redirected 302 to https://bpp.example.com/b?x=1',
    );
    // The documented no-op: a redirect to the URL itself does nothing.
    expect(run(rule('redirect', { from: '/nomatch', to: '/b' }), r).outcome).toBe(
      'forwarded to https://app.internal',
    );
    expect(run(rule('basic-auth', { credentials: ['u:password1'] }), r).outcome).toBe(
      'refused by basic-auth (401)',
    );
    const auth = { headers: { authorization: [`Basic ${btoa('u:password1')}`] } };
    expect(
      run(rule('basic-auth', { credentials: ['u:password1'] }), get(r.url, auth)).outcome,
    ).toBe('forwarded to https://app.internal');
    expect(run(rule('http-request'), r).outcome).toBe('error: action http-request is not modelled');
  });

  it('reads secrets, JWT claims and the identity from what the case gives', () => {
    const policy = {
      on_http_request: [
        {
          expressions: ["actions.svc.oauth.identity.email.endsWith('@x.com')"],
          actions: [{ type: 'forward-internal', config: { url: 'https://staff.internal' } }],
        },
        { actions: [{ type: 'deny' }] },
      ],
    };
    const withLogin = {
      on_http_request: [
        { actions: [{ type: 'oauth', config: { provider: 'google' } }] },
        ...policy.on_http_request,
      ],
    };
    expect(run(withLogin, get(ENDPOINT), { identity: { email: 'a@x.com' } }).outcome).toBe(
      'forwarded to https://staff.internal',
    );
    expect(run(withLogin, get(ENDPOINT), { identity: { email: 'a@y.com' } }).outcome).toBe(
      'refused by deny (403)',
    );
    const secret = {
      on_http_request: [
        {
          actions: [
            { type: 'basic-auth', config: { credentials: [`u:${cel("secrets.get('v', 'pw')")}`] } },
          ],
        },
        { actions: [{ type: 'custom-response' }] },
      ],
    };
    const auth = { headers: { authorization: [`Basic ${btoa('u:hunter22')}`] } };
    expect(run(secret, get(ENDPOINT, auth), { secrets: { 'v/pw': 'hunter22' } }).outcome).toBe(
      'answered 200',
    );
    expect(run(secret, get(ENDPOINT, auth)).outcome).toMatch(
      /^error: credentials: .*the case gives no such secret/,
    );
    const claims = {
      on_http_request: [
        { actions: [{ type: 'jwt-validation', config: {} }] },
        {
          expressions: [
            "actions.svc.jwt_validation.tokens[0].payload.role == 'admin' && actions.svc.jwt_validation.tokens[0].payload.level > 2",
          ],
          actions: [{ type: 'custom-response', config: { status_code: 204 } }],
        },
        { actions: [{ type: 'deny' }] },
      ],
    };
    expect(
      run(claims, get(ENDPOINT), { jwt: { valid: true, claims: { role: 'admin', level: 3 } } })
        .outcome,
    ).toBe('answered 204');
    expect(
      run(claims, get(ENDPOINT), { jwt: { valid: true, claims: { role: 'user', level: 3 } } })
        .outcome,
    ).toBe('refused by deny (403)');
  });

  it('evaluates headers as lists, query parameters, CIDR functions and set-vars', () => {
    const policy = {
      on_http_request: [
        {
          actions: [
            { type: 'set-vars', config: { vars: [{ team: cel("getReqHeader('x-team')") }] } },
          ],
        },
        {
          name: 'ops',
          expressions: [
            "'ops' in vars.team",
            "hasQueryParam('debug')",
            "inCidrRanges(conn.client_ip, ['10.0.0.0/8', '2001:db8::/32'])",
          ],
          actions: [
            { type: 'add-headers', config: { headers: { 'X-Team': cel('vars.team[0]') } } },
            { type: 'remove-headers', config: { headers: ['Cookie'] } },
            { type: 'forward-internal', config: { url: 'https://ops.internal' } },
          ],
        },
        { actions: [{ type: 'deny', config: { status_code: 404 } }] },
      ],
    };
    const ops = get(`${ENDPOINT}/?debug=1`, {
      clientIp: '2001:db8::5',
      headers: { 'x-team': ['ops', 'dev'] },
    });
    const r = run(policy, ops);
    expect(r.outcome).toBe('forwarded to https://ops.internal');
    expect(r.e.headersAdded).toEqual({ 'x-team': ['ops'] });
    expect(r.e.headersRemoved).toEqual(['cookie']);
    expect(r.e.applied).toEqual(['set-vars', 'add-headers', 'remove-headers']);
    // A header compared as a string when it is a list: never equal.
    const wrong = {
      on_http_request: [
        { expressions: ["req.headers['x-team'] == 'ops'"], actions: [{ type: 'custom-response' }] },
        { actions: [{ type: 'deny' }] },
      ],
    };
    expect(run(wrong, ops).outcome).toBe('refused by deny (403)');
    expect(
      run(
        policy,
        get(`${ENDPOINT}/?debug=1`, { clientIp: '192.0.2.1', headers: { 'x-team': ['ops'] } }),
      ).outcome,
    ).toBe('refused by deny (404)');
  });

  it('closes the connection for a refusal in on_tcp_connect, before the request phase', () => {
    const policy = {
      on_tcp_connect: [
        { actions: [{ type: 'restrict-ips', config: { deny: ['203.0.113.0/24'] } }] },
      ],
      on_http_request: [{ actions: [{ type: 'custom-response' }] }],
    };
    expect(run(policy, get(ENDPOINT, { clientIp: '203.0.113.200' })).outcome).toBe(
      'connection closed by restrict-ips',
    );
    expect(run(policy, get(ENDPOINT, { clientIp: '203.0.114.0' })).outcome).toBe('answered 200');
  });

  it('reports a CEL error at its rule, and a policy that ends nothing as not handled', () => {
    const bad = {
      on_http_request: [
        { name: 'typo', expressions: ['req.url.pathh == "/"'], actions: [{ type: 'deny' }] },
      ],
    };
    expect(run(bad, get(ENDPOINT))).toMatchObject({
      outcome: expect.stringMatching(/^error: req\.url\.pathh/),
      rule: 'on_http_request[0] "typo" expressions',
    });
    expect(
      run(
        {
          on_http_request: [
            { actions: [{ type: 'add-headers', config: { headers: { a: 'b' } } }] },
          ],
        },
        get(ENDPOINT),
      ).outcome,
    ).toBe('not handled (no terminating action ran)');
  });

  it('rewrites the URL for the rules after url-rewrite, and forward-internal on_error continue falls back', () => {
    const policy = {
      on_http_request: [
        { actions: [{ type: 'url-rewrite', config: { from: '/v1/', to: '/v2/' } }] },
        {
          expressions: ["req.url.path.startsWith('/v1/')"],
          actions: [
            {
              type: 'forward-internal',
              config: { url: 'https://v1.internal', on_error: 'continue' },
            },
          ],
        },
        { actions: [{ type: 'forward-internal', config: { url: 'https://fallback.internal' } }] },
      ],
    };
    const r = run(policy, get(`${ENDPOINT}/v1/x`));
    expect(r.e.url).toBe('https://app.example.com/v2/x');
    // The guard reads req.url, which the client keeps: the rewritten URL goes upstream.
    expect(r.outcome).toBe('forwarded to https://v1.internal');
    expect(
      run(policy, get(`${ENDPOINT}/v1/x`), { upstream_failed: ['https://v1.internal'] }).outcome,
    ).toBe('forwarded to https://fallback.internal');
  });

  // Each guard answers with a custom response of its own status, so the test reads which held.
  const guard = (expression: string) => ({
    on_http_request: [
      {
        expressions: [expression],
        actions: [{ type: 'custom-response', config: { status_code: 201 } }],
      },
      { actions: [{ type: 'custom-response', config: { status_code: 404 } }] },
    ],
  });

  it.each([
    // Values documented both as a string and as the parent of fields are both.
    ["req.url.startsWith('https://app.example.com/a') && req.url.path == '/a/b'", 'answered 201'],
    ["req.url == 'https://app.example.com/a/b?c=d'", 'answered 201'],
    ["conn.client_ip.isPrivateIp() && conn.client_ip == '10.1.2.3'", 'answered 201'],
    ["inCidrRange(conn.client_ip, '10.0.0.0/8')", 'answered 201'],
    [
      "req.user_agent.contains('curl') && req.content_type.parameters['charset'] == 'utf-8'",
      'answered 201',
    ],
    // Cookies are objects, in lists and from getReqCookie.
    ["req.cookies['sid'][0].value == 'abc' && getReqCookie('sid').value == 'abc'", 'answered 201'],
    // The service's own functions, namespaces included.
    [
      "base64.encode('hi') == 'aGk=' && 'Hi'.upper() == 'HI' && json.decode('[1]')[0] == 1",
      'answered 201',
    ],
    [
      "url.escape('a b') == 'a%20b' && 'ab'.reverse() == 'ba' && lists.range(3).size() == 3",
      'answered 201',
    ],
    ["matches(req.url.path, '^/a/[a-z]$')", 'answered 201'],
  ])('runs %s as the service does', (expression, outcome) => {
    const request = get(`${ENDPOINT}/a/b?c=d`, {
      clientIp: '10.1.2.3',
      headers: {
        cookie: ['sid=abc; theme=dark'],
        'user-agent': ['curl/8.0'],
        'content-type': ['text/plain; charset=utf-8'],
      },
    });
    expect(run(guard(expression), request).outcome).toBe(outcome);
  });

  it('writes a value that is also a string as that string, and names a function it cannot run', () => {
    const echo = {
      on_http_request: [
        {
          actions: [
            {
              type: 'add-headers',
              config: { headers: { 'x-url': cel('req.url'), 'x-ip': cel('conn.client_ip') } },
            },
            { type: 'forward-internal', config: { url: 'https://app.internal' } },
          ],
        },
      ],
    };
    const r = run(echo, get(`${ENDPOINT}/p?q=1`, { clientIp: '192.0.2.7' }));
    expect(r.e.headersAdded).toEqual({
      'x-url': ['https://app.example.com/p?q=1'],
      'x-ip': ['192.0.2.7'],
    });
    expect(run(guard("hash.sha256('x') == ''"), get(ENDPOINT)).outcome).toMatch(
      /^error: .*hash\.sha256\(string\): string is declared for checking and not implemented here/,
    );
  });

  it('stops a watched run where the watcher asks, hearing of the rules that fired before', () => {
    const fired: string[] = [];
    const watch = (stopAt: number) => ({
      fired: (key: string, rule: number) => void fired.push(`${key}/${rule}`),
      stop: (_phase: number, rule: number) => rule >= stopAt,
    });
    const request = get(`${ENDPOINT}/admin`, { clientIp: '10.1.2.3' });
    const evaluateWatched = (stopAt: number) =>
      evaluatePrepared(admin, prepareRequest(ENDPOINT, request, {}), {}, watch(stopAt));
    expect(evaluateWatched(1)).toBeUndefined();
    expect(fired).toEqual(['on_http_request/0']);
    expect(evaluateWatched(3)?.outcome).toEqual({
      kind: 'forward',
      url: 'https://admin.internal',
    });
  });
});

describe('requestTarget', () => {
  // Origins are kept by the text before the path: each URL's origin must be the parser's.
  const urls = [
    'https://app.example.com/x',
    'https://app.example.com/y?q=1',
    'HTTPS://APP.Example.com:443/z',
    'https://user:pw@app.example.com:8443/p?q#f',
    'https://app.example.com\\x/y',
    'https:///app.example.com/x',
    'http://app.example.com',
    'https:app.example.com/x',
    'https://app.example.com.other/x',
    'https://App.example.com/x',
    'https://app.example.com#f',
    'https://app.example.com?q=1#f',
    'https://app.example.com/a#b?c',
    'https://app.example.com/a?b#c/d',
  ];
  it('reads the scheme, host and user of each URL as the URL parser does, twice over', () => {
    for (const round of [1, 2]) {
      for (const text of urls) {
        const { url } = requestTarget(text);
        const parsed = new URL(text);
        for (const field of [
          'protocol',
          'host',
          'hostname',
          'port',
          'username',
          'password',
        ] as const)
          expect([round, text, field, url[field]]).toEqual([round, text, field, parsed[field]]);
      }
    }
  });

  it('writes each address as the parser writes the origin, the path and query as sent, no fragment', () => {
    for (const round of [1, 2]) {
      for (const text of urls) {
        const parsed = new URL(text);
        const rest = text.slice(text.indexOf('//') + 2);
        const at = rest.search(/[/?#]/);
        const target = at < 0 ? '' : rest.slice(at).replace(/#.*$/s, '');
        const q = target.indexOf('?');
        const path = (q < 0 ? target : target.slice(0, q)) || '/';
        const got = requestTarget(text);
        expect([round, text, got.href, got.path, got.query]).toEqual([
          round,
          text,
          `${parsed.protocol}//${parsed.host}${path}${q < 0 ? '' : target.slice(q)}`,
          path,
          q < 0 ? '' : target.slice(q + 1),
        ]);
      }
    }
  });
});
