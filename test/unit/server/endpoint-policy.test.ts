/**
 * Traffic policy validation (cloud-endpoints.md, section 3) from the specification's table:
 * every rule with its code and the path it names inside the document; CEL parsed by a real CEL
 * implementation (an expression a regular expression would pass is refused, one it would
 * refuse is accepted).
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compileFilter, FILTER_LIMITS, firstKept } from '../../../src/server/endpoints/cel.js';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import { checkTrafficPolicy, policyViolations } from '../../../src/server/endpoints/policy.js';
import { RequestError } from '../../../src/server/errors.js';

const FORWARD = { type: 'forward-internal', config: { url: 'https://web.internal' } };
const LAST = { actions: [FORWARD] };
const TCP_LAST = {
  actions: [{ type: 'forward-internal', config: { url: 'tls://app.internal:443' } }],
};
const http = (...rules: unknown[]) => ({ on_http_request: [...rules, LAST] });
const action = (type: string, config?: unknown) => ({
  actions: [config === undefined ? { type } : { type, config }],
});

/** `${expr}` in a config value (spelled out so it reads as the policy's syntax, not JS's). */
const interp = (expr: string) => `$${'{'}${expr}}`;

/** Ten levels of ten aliases each: 10^10 values once expanded. */
const ALIAS_BOMB = [
  'a: &a [x, x, x, x, x, x, x, x, x, x]',
  ...'bcdefghij'.split('').map((n, i) => {
    const prev = 'abcdefghij'[i];
    return `${n}: &${n} [${Array(10).fill(`*${prev}`).join(', ')}]`;
  }),
].join('\n');

type Case = [string, string, unknown, string | undefined, string?];

const OK: Case[] = [
  ['minimal http', 'https', http(), undefined],
  [
    'legacy inbound/outbound',
    'https',
    { inbound: [LAST], outbound: [action('compress-response')] },
    undefined,
  ],
  [
    'tls endpoint',
    'tls',
    { on_tcp_connect: [action('terminate-tls', { min_version: '1.3' }), TCP_LAST] },
    undefined,
  ],
  ['deny ends', 'https', { on_http_request: [action('deny', { status_code: 404 })] }, undefined],
  [
    'custom-response ends',
    'https',
    { on_http_request: [action('custom-response', { status_code: 404, body: 'no' })] },
    undefined,
  ],
  ['close-connection ends', 'tcp', { on_tcp_connect: [action('close-connection')] }, undefined],
  ['deny without config in tcp_connect', 'tcp', { on_tcp_connect: [action('deny')] }, undefined],
  [
    'guarded rules before',
    'https',
    http({
      expressions: ["req.url.path.startsWith('/a') && hasReqHeader('x')"],
      actions: [{ type: 'deny' }],
    }),
    undefined,
  ],
  [
    'macros and in',
    'https',
    http({
      expressions: [
        "getReqHeader('x').exists(h, h in ['a', 'b'])",
        "!(actions.svc.oauth.identity.email.endsWith('@ex.com'))",
      ],
      actions: [{ type: 'deny' }],
    }),
    undefined,
  ],
  [
    'interpolation',
    'https',
    http(
      action('add-headers', {
        headers: { 'x-ip': interp('conn.client_ip'), 'x-m': interp(' {"a": 1}["a"] ') },
      }),
    ),
    undefined,
  ],
  [
    'restrict-ips',
    'https',
    http(
      action('restrict-ips', {
        enforce: true,
        allow: ['10.0.0.0/8', '::1/128'],
        ip_policies: ['ipp_1'],
      }),
    ),
    undefined,
  ],
  [
    'circuit-breaker',
    'https',
    http(
      action('circuit-breaker', {
        error_threshold: 0.5,
        volume_threshold: 10,
        window_duration: '10s',
        tripped_duration: '2m',
      }),
    ),
    undefined,
  ],
  [
    'oauth managed',
    'https',
    http(action('oauth', { provider: 'google', idle_session_timeout: '15m' })),
    undefined,
  ],
  [
    'oauth own credentials',
    'https',
    http(
      action('oauth', {
        provider: 'amazon',
        client_id: 'i',
        client_secret: 's',
        scopes: ['profile'],
      }),
    ),
    undefined,
  ],
  [
    'openid-connect',
    'https',
    http(
      action('openid-connect', {
        issuer_url: 'https://id.example.com',
        client_id: 'i',
        client_secret: 's',
      }),
    ),
    undefined,
  ],
  [
    'verify-webhook linear',
    'https',
    http(action('verify-webhook', { provider: 'linear', secret: 's' })),
    undefined,
  ],
  ['set-vars', 'https', http(action('set-vars', { vars: [{ a: 1 }, { b: 'x' }] })), undefined],
  [
    'verify-webhook sns with its topic owner as secret',
    'https',
    http(action('verify-webhook', { provider: 'sns', secret: '123456789012' })),
    undefined,
  ],
  [
    'forward-internal continue then deny',
    'https',
    {
      on_http_request: [
        {
          actions: [
            {
              type: 'forward-internal',
              config: { url: 'https://a.internal', on_error: 'continue' },
            },
            { type: 'deny' },
          ],
        },
      ],
    },
    undefined,
  ],
];

const REFUSED: Case[] = [
  ['not YAML', 'https', 'on_http_request: [', CODE.badPolicy, '(document)'],
  ['not a mapping', 'https', '- 1', CODE.badPolicy, '(document)'],
  [
    'duplicate key',
    'https',
    'on_http_request: []\non_http_request: []',
    CODE.badPolicy,
    '(document): not a YAML or JSON document: duplicate key',
  ],
  ['unknown tag', 'https', 'on_http_request: !!js/function x', CODE.badPolicy, '(document)'],
  [
    'deep flow nesting',
    'https',
    '['.repeat(500_000),
    CODE.badPolicy,
    '(document): not a YAML or JSON document: nesting exceeded',
  ],
  [
    'deep compact nesting',
    'https',
    '- '.repeat(500_000),
    CODE.badPolicy,
    '(document): not a YAML or JSON document: nesting exceeded',
  ],
  [
    'alias bomb',
    'https',
    ALIAS_BOMB,
    CODE.badPolicy,
    '(document): the document expands to more than',
  ],
  [
    'constructor as a phase',
    'https',
    { constructor: [LAST] },
    CODE.badPolicy,
    'constructor: unknown phase',
  ],
  [
    'constructor as an action type',
    'https',
    http(action('constructor')),
    CODE.unknownAction,
    'on_http_request[0].actions[0].type',
  ],
  [
    '__proto__ as the last action',
    'https',
    'on_http_request: [{actions: [{type: __proto__}]}]',
    CODE.unknownAction,
    'on_http_request[0].actions[0].type',
  ],
  ['unknown phase', 'https', { on_request: [LAST] }, CODE.badPolicy, 'on_request'],
  [
    'phase twice (legacy name)',
    'https',
    { on_http_request: [LAST], inbound: [LAST] },
    CODE.badPolicy,
    'inbound',
  ],
  [
    'rule without actions',
    'https',
    http({ name: 'x' }),
    CODE.badPolicy,
    'on_http_request[0].actions',
  ],
  [
    'unknown rule field',
    'https',
    http({ actions: [{ type: 'deny' }], when: 'x' }),
    CODE.badPolicy,
    'on_http_request[0].when',
  ],
  [
    'expression not CEL',
    'https',
    http({ expressions: ["req.url.path == '/a' &&"], actions: [{ type: 'deny' }] }),
    CODE.badPolicy,
    'on_http_request[0].expressions[0]',
  ],
  [
    'expression not a string',
    'https',
    http({ expressions: [1], actions: [{ type: 'deny' }] }),
    CODE.badPolicy,
    'on_http_request[0].expressions[0]',
  ],
  [
    'interpolation not CEL',
    'https',
    http(action('add-headers', { headers: { 'x-a': interp('conn.client_ip +') } })),
    CODE.badTemplate,
    'on_http_request[0].actions[0].config.headers.x-a',
  ],
  [
    'unterminated interpolation',
    'https',
    http(action('custom-response', { body: `hi ${interp('req.host').slice(0, -1)}` })),
    CODE.badTemplate,
    'on_http_request[0].actions[0].config.body',
  ],
  [
    'unknown action',
    'https',
    http(action('rate-limiter')),
    CODE.unknownAction,
    'on_http_request[0].actions[0].type',
  ],
  [
    'a documented misname of an action',
    'https',
    http(action('oidc', { issuer_url: 'https://id.example.com' })),
    CODE.unknownAction,
    'on_http_request[0].actions[0].type: unknown action type "oidc" (did you mean openid-connect?)',
  ],
  [
    'action in a phase it lacks',
    'https',
    { on_http_request: [action('compress-response'), LAST] },
    CODE.actionPhase,
    'on_http_request[0].actions[0].type',
  ],
  [
    'terminate-tls in http_request',
    'https',
    http(action('terminate-tls')),
    CODE.actionPhase,
    'on_http_request[0].actions[0].type',
  ],
  [
    'http phase on tls',
    'tls',
    { on_tcp_connect: [TCP_LAST], on_http_request: [LAST] },
    CODE.phaseProtocol,
    'on_http_request',
  ],
  [
    'deny config in tcp_connect',
    'tcp',
    { on_tcp_connect: [action('deny', { status_code: 403 })] },
    CODE.configParse,
    'on_tcp_connect[0].actions[0].config',
  ],
  [
    'unreachable action',
    'https',
    { on_http_request: [{ actions: [{ type: 'deny' }, FORWARD] }] },
    CODE.unreachableAction,
    'on_http_request[0].actions[1]',
  ],
  [
    'two authentication actions',
    'https',
    http(action('oauth', { provider: 'google' }), action('saml', { idp_metadata: '<x/>' })),
    CODE.severalAuthActions,
    'on_http_request[1].actions[0]',
  ],
  [
    'no entry phase',
    'https',
    { on_http_response: [action('compress-response')] },
    CODE.notTerminated,
    'on_http_request',
  ],
  [
    'last rule guarded',
    'https',
    { on_http_request: [{ expressions: ['true'], actions: [{ type: 'deny' }] }] },
    CODE.notTerminated,
    'on_http_request[0]',
  ],
  [
    'last action not terminating',
    'https',
    { on_http_request: [action('add-headers', { headers: { a: 'b' } })] },
    CODE.notTerminated,
    'on_http_request[0]',
  ],
  [
    'forward-internal continue is not the end',
    'https',
    {
      on_http_request: [
        action('forward-internal', { url: 'https://a.internal', on_error: 'continue' }),
      ],
    },
    CODE.notTerminated,
    'on_http_request[0]',
  ],
  [
    'tls entry is tcp_connect',
    'tls',
    { on_tcp_connect: [action('terminate-tls')] },
    CODE.notTerminated,
    'on_tcp_connect[0]',
  ],
  [
    'unknown config field',
    'https',
    http(action('deny', { status: 403 })),
    CODE.configParse,
    'on_http_request[0].actions[0].config',
  ],
  [
    'forward-internal to a public URL',
    'https',
    { on_http_request: [action('forward-internal', { url: 'https://app.example.com' })] },
    CODE.notUrl,
    'on_http_request[0].actions[0].config.url',
  ],
  [
    'forward-internal of another protocol',
    'https',
    { on_http_request: [action('forward-internal', { url: 'tcp://db.internal:5432' })] },
    CODE.notUrl,
    'on_http_request[0].actions[0].config.url',
  ],
  [
    'forward-internal without url',
    'https',
    { on_http_request: [action('forward-internal', {})] },
    CODE.missingElement,
    'on_http_request[0].actions[0].config.url',
  ],
  [
    'add-headers without config',
    'https',
    http(action('add-headers')),
    CODE.missingElement,
    'on_http_request[0].actions[0].config.headers: is required',
  ],
  [
    'restrict-ips bad CIDR',
    'https',
    http(action('restrict-ips', { allow: ['10.0.0.0/33'] })),
    CODE.badCidr,
    'on_http_request[0].actions[0].config.allow[0]',
  ],
  [
    'restrict-ips bad policy ID',
    'https',
    http(action('restrict-ips', { ip_policies: ['ca_1'] })),
    CODE.ipPolicyRef,
    'on_http_request[0].actions[0].config.ip_policies[0]',
  ],
  [
    'restrict-ips empty',
    'https',
    http(action('restrict-ips', { enforce: true })),
    CODE.missingElement,
    'on_http_request[0].actions[0].config',
  ],
  [
    'terminate-tls half a key pair',
    'tls',
    {
      on_tcp_connect: [
        action('terminate-tls', { server_certificate: '-----BEGIN CERTIFICATE-----' }),
        TCP_LAST,
      ],
    },
    CODE.pairedField,
    'on_tcp_connect[0].actions[0].config.server_private_key',
  ],
  [
    'terminate-tls version 1.1',
    'tls',
    { on_tcp_connect: [action('terminate-tls', { min_version: '1.1' }), TCP_LAST] },
    CODE.notMember,
    'on_tcp_connect[0].actions[0].config.min_version',
  ],
  [
    'add-headers user-agent',
    'https',
    http(action('add-headers', { headers: { 'User-Agent': 'x' } })),
    CODE.headerName,
    'on_http_request[0].actions[0].config.headers.User-Agent',
  ],
  [
    'add-headers 11 headers',
    'https',
    http(
      action('add-headers', {
        headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`h${i}`, 'v'])),
      }),
    ),
    CODE.tooManyHeaders,
    'on_http_request[0].actions[0].config.headers',
  ],
  [
    'remove-headers none',
    'https',
    http(action('remove-headers', { headers: [] })),
    CODE.empty,
    'on_http_request[0].actions[0].config.headers',
  ],
  [
    'compress-response unknown algorithm',
    'https',
    { ...http(), on_http_response: [action('compress-response', { algorithms: ['zstd'] })] },
    CODE.compressAlgorithm,
    'on_http_response[0].actions[0].config.algorithms[0]',
  ],
  [
    'verify-webhook unknown provider',
    'https',
    http(action('verify-webhook', { provider: 'nope', secret: 's' })),
    CODE.notMember,
    'on_http_request[0].actions[0].config.provider',
  ],
  [
    'verify-webhook sns without secret',
    'https',
    http(action('verify-webhook', { provider: 'sns' })),
    CODE.missingElement,
    'on_http_request[0].actions[0].config.secret',
  ],
  [
    'verify-webhook without secret',
    'https',
    http(action('verify-webhook', { provider: 'github' })),
    CODE.missingElement,
    'on_http_request[0].actions[0].config.secret',
  ],
  [
    'circuit-breaker threshold > 1',
    'https',
    http(action('circuit-breaker', { error_threshold: 1.5 })),
    CODE.outOfRange,
    'on_http_request[0].actions[0].config.error_threshold',
  ],
  [
    'circuit-breaker window 3m',
    'https',
    http(action('circuit-breaker', { window_duration: '3m' })),
    CODE.durationTooLong,
    'on_http_request[0].actions[0].config.window_duration',
  ],
  [
    'circuit-breaker volume 0',
    'https',
    http(action('circuit-breaker', { volume_threshold: 0 })),
    CODE.outOfRange,
    'on_http_request[0].actions[0].config.volume_threshold',
  ],
  [
    'duration without unit',
    'https',
    http(action('oauth', { provider: 'google', idle_session_timeout: '30' })),
    CODE.configValue,
    'on_http_request[0].actions[0].config.idle_session_timeout',
  ],
  [
    'oauth amazon managed',
    'https',
    http(action('oauth', { provider: 'amazon' })),
    CODE.missingElement,
    'on_http_request[0].actions[0].config.client_id',
  ],
  [
    'oauth scopes without credentials',
    'https',
    http(action('oauth', { provider: 'google', scopes: ['x'] })),
    CODE.configValue,
    'on_http_request[0].actions[0].config.scopes',
  ],
  [
    'oauth unknown provider',
    'https',
    http(action('oauth', { provider: 'okta' })),
    CODE.notMember,
    'on_http_request[0].actions[0].config.provider',
  ],
  [
    'openid-connect without issuer',
    'https',
    http(action('openid-connect', { client_id: 'i', client_secret: 's' })),
    CODE.missingElement,
    'on_http_request[0].actions[0].config.issuer_url',
  ],
  [
    'saml without metadata',
    'https',
    http(action('saml', {})),
    CODE.missingElement,
    'on_http_request[0].actions[0].config.idp_metadata',
  ],
  [
    'custom-response status 700',
    'https',
    { on_http_request: [action('custom-response', { status_code: 700 })] },
    CODE.outOfRange,
    'on_http_request[0].actions[0].config.status_code',
  ],
  [
    'set-vars two keys',
    'https',
    http(action('set-vars', { vars: [{ a: 1, b: 2 }] })),
    CODE.varsFormat,
    'on_http_request[0].actions[0].config.vars[0]',
  ],
  [
    'deep path',
    'https',
    http(action('deny'), action('deny'), {
      actions: [
        { type: 'add-headers', config: { headers: { a: 'b' } } },
        { type: 'add-headers', config: { headers: { 'x y': 'v' } } },
      ],
    }),
    CODE.headerName,
    'on_http_request[2].actions[1].config.headers.x y',
  ],
];

function check(scheme: string, doc: unknown, asJson = false): RequestError | undefined {
  const text = typeof doc === 'string' ? doc : asJson ? JSON.stringify(doc) : stringify(doc);
  try {
    checkTrafficPolicy(text, { scheme, internal: false });
    return undefined;
  } catch (err) {
    if (err instanceof RequestError) return err;
    throw err;
  }
}

describe('accepted policies', () => {
  it.each<Case>(OK)('%s (%s)', (_name, scheme, doc) => {
    expect(check(scheme, doc)?.message).toBeUndefined();
    expect(check(scheme, doc, true)?.message).toBeUndefined();
  });
});

describe('refused policies: code and the path inside the document', () => {
  it.each<Case>(REFUSED)('%s (%s)', (_name, scheme, doc, code, path = '') => {
    const err = check(scheme, doc);
    expect(err?.errorCode).toBe(code);
    expect(err?.status).toBe(400);
    expect(err?.message).toContain(`traffic_policy: ${path}${path.includes(':') ? '' : ':'}`);
  });
});

describe('one document', () => {
  it('refuses a policy text of two YAML documents instead of keeping the first', () => {
    const first = stringify({ on_http_request: [action('deny')] });
    const second = stringify(
      http(action('restrict-ips', { enforce: true, allow: ['10.0.0.0/8'] })),
    );
    expect(check('https', first)).toBeUndefined();
    const err = check('https', `${first}---\n${second}`);
    expect(err?.status).toBe(400);
    expect(err?.errorCode).toBe(CODE.badPolicy);
    expect(err?.message).toContain('more than one YAML document');
  });
});

describe('CEL through a real parser', () => {
  it('accepts what a naive pattern would refuse and refuses what it would accept', () => {
    const withBraces = http({
      expressions: ["{'a': [1, 2]}['a'].size() == 2"],
      actions: [{ type: 'deny' }],
    });
    expect(check('https', withBraces)).toBeUndefined();
    const unbalanced = http({ expressions: ['req.host == "a" )'], actions: [{ type: 'deny' }] });
    expect(check('https', unbalanced)?.errorCode).toBe(CODE.badPolicy);
  });

  it.each([
    [
      "req.url.pathh == '/'",
      'on_http_request[0].expressions[0]: invalid CEL at character 9: No such key: pathh',
    ],
    [
      "request.path == '/'",
      'on_http_request[0].expressions[0]: invalid CEL at character 1: Unknown variable: request',
    ],
    [
      "1 + 'a' == 2",
      'on_http_request[0].expressions[0]: invalid CEL at character 1: no such overload: int + string',
    ],
    [
      'nosuch(1)',
      "on_http_request[0].expressions[0]: invalid CEL at character 1: found no matching overload for 'nosuch(int)'",
    ],
    [
      `${'(-'.repeat(400)}1`,
      'on_http_request[0].expressions[0]: invalid CEL at character 65: expression nests deeper than 32 levels',
    ],
  ])('type-checks %s against the service variables and functions (a 400)', (expr, message) => {
    const err = check('https', http({ expressions: [expr], actions: [{ type: 'deny' }] }));
    expect(err?.status).toBe(400);
    expect(err?.errorCode).toBe(CODE.badPolicy);
    expect(err?.message).toContain(message);
  });

  it('type-checks interpolations, each at its character in the value', () => {
    const doc = http({
      actions: [
        {
          type: 'add-headers',
          config: { headers: { 'x-a': `${interp('req.host')}-${interp('req.hostt')}` } },
        },
      ],
    });
    expect(check('https', doc)?.message).toContain(
      'config.headers.x-a: invalid CEL at character 19: No such key: hostt',
    );
  });

  it('lists every violation, the first one giving the code', () => {
    const doc = { on_http_request: [action('nope'), action('compress-response')] };
    const all = policyViolations(stringify(doc), { scheme: 'https', internal: false });
    expect(all.map((v) => v.code)).toEqual([
      CODE.unknownAction,
      CODE.actionPhase,
      CODE.notTerminated,
    ]);
  });
});

describe('list filters', () => {
  it.each([
    ['obj.type == "cloud"', true],
    ['obj.bindings.exists(b, b == "public")', true],
    ['obj.bindings.exists(b, obj.bindings.all(c, c == b))', 'nests macros'],
    [`${'('.repeat(20_000)}true${')'.repeat(20_000)}`, 'characters long'],
    [`${'(-'.repeat(40)}1`, 'nests deeper than 32 levels'],
    [
      `[${Array.from({ length: FILTER_LIMITS.maxLiteralElements + 1 }, (_, i) => i).join(',')}].exists(x, x == 1)`,
      `at most ${FILTER_LIMITS.maxLiteralElements} are allowed`,
    ],
    ['obj.type ==', 'not a CEL expression'],
  ])('%s', (filter, expected) => {
    const run = () => compileFilter(filter)({ type: 'cloud', bindings: ['public'] });
    if (expected === true) {
      expect(run()).toBe(true);
      return;
    }
    expect(run).toThrow(expected as string);
    try {
      run();
    } catch (err) {
      expect((err as RequestError).errorCode).toBe(CODE.invalidCel);
    }
  });
});

describe('firstKept', () => {
  it('yields to the event loop between slices, so other work runs during a long scan', async () => {
    let now = 0;
    // Each record costs 3 ms of the injected clock: a slice holds two records.
    const keep = (n: number) => {
      now += 3;
      return n % 2 === 0;
    };
    const scan = firstKept(
      Array.from({ length: 40 }, (_, i) => i),
      keep,
      5,
      () => now,
    );
    let otherRan = false;
    setImmediate(() => {
      otherRan = true;
    });
    const found = await scan;
    expect(found).toEqual([0, 2, 4, 6, 8]);
    expect(otherRan).toBe(true);
    expect(now).toBe(27); // stopped after the fifth kept record (index 8)
  });
});
