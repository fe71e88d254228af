/**
 * Configs of the documented actions (policy-actions.md, section 2, with section 0's decisions)
 * that the service takes, and configs it refuses with the code and the field it names. The local
 * server's unit test (test/unit/server/endpoint-actions.test.ts) checks the codes; the
 * manifest's (test/unit/manifest/policy-actions.test.ts) checks `validate` takes and refuses the
 * same configs.
 */
import { ENDPOINT_ERROR_CODE as CODE } from '../../src/server/endpoints/codes.js';

/** `${expr}` as a policy writes it (not a JavaScript template). */
const interp = (expr: string) => `$${'{'}${expr}}`;
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
const JWT = {
  issuer: { allow_list: [{ value: 'https://id.example.com/' }] },
  http: { tokens: [{ type: 'jwt', method: 'header', name: 'Authorization', prefix: 'Bearer ' }] },
  jws: {
    allowed_algorithms: ['RS256'],
    keys: { sources: { additional_jkus: ['https://id.example.com/.well-known/jwks.json'] } },
  },
};
const RATE = {
  name: 'per-ip',
  algorithm: 'sliding_window',
  capacity: 100,
  rate: '60s',
  bucket_key: ['conn.client_ip'],
};

export type Config = Record<string, unknown>;
export interface ActionCaseRow {
  readonly type: string;
  readonly phase: string;
  readonly valid: readonly Config[];
  /** A config, the code it is refused with and the path below `config` the message names. */
  readonly invalid: readonly (readonly [Config, string, string])[];
}

export const ACTION_CASES: readonly ActionCaseRow[] = [
  {
    type: 'rate-limit',
    phase: 'on_http_request',
    valid: [RATE, { ...RATE, rate: '24h', capacity: 2_000_000_000, enforce: false }],
    invalid: [
      [{ ...RATE, capacity: 0 }, CODE.outOfRange, '.capacity'],
      [{ ...RATE, rate: '30s' }, CODE.outOfRange, '.rate'],
      [{ ...RATE, rate: '65s' }, CODE.outOfRange, '.rate'],
      [{ ...RATE, rate: '25h' }, CODE.durationTooLong, '.rate'],
      [{ ...RATE, algorithm: 'token_bucket' }, CODE.notMember, '.algorithm'],
      [{ ...RATE, name: 'x'.repeat(1024) }, CODE.tooLong, '.name'],
      [{ ...RATE, bucket_key: [] }, CODE.empty, '.bucket_key'],
      [{ ...RATE, bucket_key: Array(11).fill('req.host') }, CODE.tooManyEntries, '.bucket_key'],
      [{ ...RATE, bucket_key: ['req.host +'] }, CODE.badExpression, '.bucket_key[0]'],
      [{ ...RATE, name: interp('req.host') }, CODE.configValue, '.name'],
      [
        { name: 'x', algorithm: 'sliding_window', capacity: 1, rate: '60s' },
        CODE.missingElement,
        '.bucket_key',
      ],
    ],
  },
  {
    type: 'redirect',
    phase: 'on_http_request',
    valid: [
      { to: 'https://example.com' },
      {
        from: '(?i)^http://(.*)$',
        to: 'https://$1',
        status_code: 301,
        headers: { 'x-a': interp('req.host') },
      },
      { from: interp("'/' + req.host"), to: interp('req.url') },
    ],
    invalid: [
      [{}, CODE.missingElement, '.to'],
      [{ to: '/x', status_code: 200 }, CODE.notMember, '.status_code'],
      [{ from: '(?=x)', to: '/x' }, CODE.badRegex, '.from'],
      [{ location: '/x', to: '/y' }, CODE.configParse, ''],
    ],
  },
  {
    type: 'url-rewrite',
    phase: 'on_http_request',
    valid: [{ from: '/old/(.*)', to: '/new/$1' }, { to: interp('req.url') }],
    invalid: [
      [{ from: '/x' }, CODE.missingElement, '.to'],
      [{ from: '(a', to: '/' }, CODE.badRegex, '.from'],
    ],
  },
  {
    type: 'jwt-validation',
    phase: 'on_http_request',
    valid: [
      JWT,
      { ...JWT, audience: { allow_list: [{ value: 'api' }] } },
      {
        ...JWT,
        jws: {
          allowed_algorithms: ['ES256'],
          keys: [
            {
              sources: [{ additional_jkus: [interp("secrets.get('v', 'jwks')")] }],
              identification: [{ token_claims: ['kid'] }],
            },
          ],
        },
      },
    ],
    invalid: [
      [{ ...JWT, issuer: { allow_list: [] } }, CODE.empty, '.issuer.allow_list'],
      [
        { ...JWT, http: { tokens: [{ type: 'saml', method: 'header', name: 'a' }] } },
        CODE.notMember,
        '.http.tokens[0].type',
      ],
      [
        { ...JWT, http: { tokens: [{ type: 'jwt', method: 'query', name: 'a' }] } },
        CODE.notMember,
        '.http.tokens[0].method',
      ],
      [
        { ...JWT, jws: { ...JWT.jws, allowed_algorithms: ['none'] } },
        CODE.configValue,
        '.jws.allowed_algorithms[0]',
      ],
      [{ issuer: JWT.issuer, http: JWT.http }, CODE.missingElement, '.jws'],
      [
        { ...JWT, audience: { allow_list: [{ value: interp('req.host') }] } },
        CODE.configValue,
        '.audience.allow_list[0].value',
      ],
    ],
  },
  {
    type: 'basic-auth',
    phase: 'on_http_request',
    valid: [
      { credentials: ['alice:correct-horse'] },
      { credentials: [`alice:${interp("secrets.get('v', 'pw')")}`], realm: 'ops', enforce: false },
      { credentials: [interp("secrets.get('v', 'cred')")] },
      { credentials: [`${interp('vars.u')}:${interp('vars.p')}`] },
    ],
    invalid: [
      [{ credentials: ['alice:short'] }, CODE.basicAuthPassword, '.credentials[0]'],
      [{ credentials: ['alicepassword'] }, CODE.basicAuthUser, '.credentials[0]'],
      [{ credentials: [`${interp('vars.u')}password`] }, CODE.basicAuthUser, '.credentials[0]'],
      [{ credentials: [':nouser-password'] }, CODE.basicAuthUser, '.credentials[0]'],
      [{ credentials: [] }, CODE.empty, '.credentials'],
      [{ credentials: Array(11).fill('a:abcdefgh') }, CODE.tooManyEntries, '.credentials'],
      [{ credentials: ['a:abcdefgh'], realm: 'x'.repeat(129) }, CODE.tooLong, '.realm'],
    ],
  },
  {
    type: 'log',
    phase: 'on_http_response',
    valid: [
      {
        metadata: {
          path: interp('req.url.path'),
          n: 1,
          nested: { a: [interp('res.status_code')] },
        },
      },
    ],
    invalid: [
      [{}, CODE.missingElement, '.metadata'],
      [{ metadata: { a: interp('req.') } }, CODE.badTemplate, '.metadata.a'],
    ],
  },
  {
    type: 'http-request',
    phase: 'on_http_request',
    valid: [
      { url: 'https://auth.internal/check' },
      {
        url: interp("'https://a.internal/' + req.host"),
        method: 'POST',
        query_params: [{ key: interp('vars.k'), value: interp('req.host') }],
        headers: { 'x-a': interp('conn.client_ip') },
        body: interp('req.url'),
        max_redirects: 100,
        timeout: '30s',
        retry_condition: 'attempts < 3 && last_attempt.res.status_code >= 500',
        on_error: 'halt',
      },
    ],
    invalid: [
      [{ url: 'not a url' }, CODE.notUrl, '.url'],
      [{ url: 'https://a', method: 'HEAD' }, CODE.notMember, '.method'],
      [{ url: 'https://a', max_redirects: 101 }, CODE.outOfRange, '.max_redirects'],
      [{ url: 'https://a', timeout: '31s' }, CODE.durationTooLong, '.timeout'],
      [{ url: 'https://a', timeout: '500ms' }, CODE.outOfRange, '.timeout'],
      [
        { url: 'https://a', query_params: Array(33).fill({ key: 'k', value: 'v' }) },
        CODE.tooManyQueryParams,
        '.query_params',
      ],
      [
        { url: 'https://a', query_params: [{ key: 'k'.repeat(129), value: 'v' }] },
        CODE.queryKeyTooLong,
        '.query_params[0].key',
      ],
      [
        { url: 'https://a', query_params: [{ key: 'k', value: 'v'.repeat(8193) }] },
        CODE.queryValueTooLong,
        '.query_params[0].value',
      ],
      [{ url: 'https://a', retry_condition: 'attempts <' }, CODE.badExpression, '.retry_condition'],
      [{ url: 'https://a', method: interp('req.method') }, CODE.notMember, '.method'],
    ],
  },
  ...(['owasp-crs-request', 'owasp-crs-response'] as const).map((type) => ({
    type,
    phase: type === 'owasp-crs-request' ? 'on_http_request' : 'on_http_response',
    valid: [{}, { on_error: 'continue', process_body: true, exclude_rule_ids: [900000, 999999] }],
    invalid: [
      [{ exclude_rule_ids: [899999] }, CODE.outOfRange, '.exclude_rule_ids[0]'],
      [{ on_error: 'retry' }, CODE.notMember, '.on_error'],
      [{ process_body: 'yes' }, CODE.configParse, '.process_body'],
    ] as const,
  })),
  ...(
    [
      ['request-body-find-replace', 'on_http_request'],
      ['response-body-find-replace', 'on_http_response'],
    ] as const
  ).map(([type, phase]) => ({
    type,
    phase,
    valid: [
      { replacements: [{ from: 'foo', to: 'bar' }, { from: '(\\d+)' }] },
      { replacements: [{ from: interp('vars.re'), to: interp('req.host') }] },
    ],
    invalid: [
      [{ replacements: [] }, CODE.empty, '.replacements'],
      [{ replacements: [{ to: 'x' }] }, CODE.missingElement, '.replacements[0].from'],
      [{ replacements: [{ from: '[' }] }, CODE.badRegex, '.replacements[0].from'],
    ] as const,
  })),
  {
    type: 'sse-find-replace',
    phase: 'on_event_stream_message',
    valid: [{ replacements: [{ field: 'retry', from: '\\d+', to: '1000' }, { from: 'a' }] }],
    invalid: [
      [{ replacements: [{ field: 'id', from: 'a' }] }, CODE.notMember, '.replacements[0].field'],
    ],
  },
  {
    type: 'ai-gateway',
    phase: 'on_http_request',
    valid: [
      {
        on_error: 'continue',
        per_request_timeout: '10s',
        total_timeout: '1m',
        providers: [{ id: 'openai', api_keys: [{ value: interp("secrets.get('ai', 'k')") }] }],
      },
    ],
    invalid: [[{ providers: [{ id: interp('vars.p') }] }, CODE.configValue, '.providers[0].id']],
  },
  {
    type: 'restrict-ips',
    phase: 'on_http_request',
    valid: [{ allow: [interp("secrets.get('v', 'office')")], deny: [interp('vars.bad')] }],
    invalid: [
      [
        { allow: ['10.0.0.0/8'], ip_policies: [interp('vars.p')] },
        CODE.ipPolicyRef,
        '.ip_policies[0]',
      ],
    ],
  },
  {
    type: 'terminate-tls',
    phase: 'on_tcp_connect',
    valid: [
      {
        server_certificate: interp("secrets.get('tls', 'cert')"),
        server_private_key: interp("secrets.get('tls', 'key')"),
        mutual_tls_certificate_authorities: [PEM, 'ca_1', interp("secrets.get('tls', 'ca')")],
      },
    ],
    invalid: [[{ min_version: interp('vars.v') }, CODE.notMember, '.min_version']],
  },
  {
    type: 'forward-internal',
    phase: 'on_http_request',
    valid: [{ url: interp("'https://' + req.host.split('.')[0] + '.internal'") }],
    invalid: [[{ url: 'https://a.internal', binding: 'internal' }, CODE.configParse, '']],
  },
  {
    type: 'verify-webhook',
    phase: 'on_http_request',
    valid: [
      { provider: 'sns', secret: '123456789012' },
      { provider: 'github', secret: interp("secrets.get('v', 'gh')") },
    ],
    invalid: [
      [{ provider: 'sns' }, CODE.missingElement, '.secret'],
      [{ provider: interp('vars.p'), secret: 'x' }, CODE.notMember, '.provider'],
    ],
  },
  {
    type: 'set-vars',
    phase: 'on_http_request',
    valid: [{ vars: [{ host: interp('req.host') }, { n: 1 }] }],
    invalid: [
      [{ vars: [{ a: 'x' }, { b: interp("vars.a + 'y'") }] }, CODE.varsFromVars, '.vars[1].b'],
      [{ vars: { a: 1 } }, CODE.varsFormat, '.vars'],
    ],
  },
  {
    type: 'custom-response',
    phase: 'on_http_request',
    valid: [{ content: 'not found', status_code: 404 }],
    invalid: [[{ content: 'a', body: 'b' }, CODE.configValue, '.content']],
  },
  {
    type: 'circuit-breaker',
    phase: 'on_http_request',
    valid: [{ num_buckets: 10, error_threshold: 0.5 }],
    invalid: [[{ num_buckets: 0 }, CODE.outOfRange, '.num_buckets']],
  },
  {
    type: 'openid-connect',
    phase: 'on_http_request',
    valid: [
      { issuer_url: 'https://id.example.com', idle_session_duration: '1h', auth_id: 'a' },
      { issuer_url: 'https://id.example.com', idle_session_timeout: '1h' },
    ],
    invalid: [
      [
        {
          issuer_url: 'https://id.example.com',
          idle_session_duration: '1h',
          idle_session_timeout: '1h',
        },
        CODE.configValue,
        '.idle_session_timeout',
      ],
    ],
  },
];
