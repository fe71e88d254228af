/**
 * The cloud endpoints specification (cloud-endpoints.md, sections 1 to 3) transcribed as ONE
 * data table, written from the specification's text and not from the server's code: the
 * EndpointCreate / EndpointUpdate fields, the URL and binding rows, the rules with their codes,
 * and the actions (phases, config fields with defaults and bounds, terminating or not).
 * test/integration/server/cloud-spec.test.ts derives its cases from it; the arbitraries in
 * ./arbitraries/ draw their values from it.
 *
 * Where the specification leaves a point open the row says so (`note`), with the choice the
 * local server implements.
 */
import { ERROR_CODE, WEBHOOK_PROVIDERS } from '../../src/hosted/edge-api.js';

export type Scheme = 'https' | 'http' | 'tls' | 'tcp';
export type Phase = 'on_tcp_connect' | 'on_http_request' | 'on_http_response';
export type Binding = 'public' | 'internal' | 'kubernetes';

/** One config field of an action: what the service takes, refuses and assumes. */
export interface FieldRow {
  readonly name: string;
  readonly required?: true;
  /** The default the specification states, when it states one. */
  readonly default?: unknown;
  /** Values of the field the service takes (for an enumeration: every member). */
  readonly valid: readonly unknown[];
  /** Values of the right type the service refuses (outside an enumeration, not a CIDR, ...). */
  readonly invalid?: readonly unknown[];
  /** The bounds: the value at the bound (taken) and one step beyond it (refused). */
  readonly min?: { readonly at: unknown; readonly beyond: unknown };
  readonly max?: { readonly at: unknown; readonly beyond: unknown };
  /** A value of another JSON type, refused. */
  readonly wrongType: unknown;
  /** Fields the tested field needs beside it (credentials come in pairs, ...). */
  readonly with?: Readonly<Record<string, unknown>>;
  /**
   * The codes of the refusals (policy-actions.md section 1.6), where they are not the usual
   * ones: an invalid value 2204, beyond a bound 2215, a wrong type 2203, absent 2234.
   */
  readonly codes?: {
    readonly invalid?: string;
    readonly min?: string;
    readonly max?: string;
    readonly wrongType?: string;
  };
  readonly note?: string;
}

export interface ActionRow {
  readonly type: string;
  readonly phases: readonly Phase[];
  /** Ends its phase: always, never, or unless its `on_error` is `continue`. */
  readonly terminating: boolean | 'unless on_error: continue';
  /** The smallest valid config in `phase` of an endpoint of `scheme` (undefined: none sent). */
  readonly minimal: (phase: Phase, scheme: Scheme) => Readonly<Record<string, unknown>> | undefined;
  readonly fields: readonly FieldRow[];
  readonly auth?: true;
  readonly note?: string;
}

/** forward-internal's target: an internal endpoint of the endpoint's own protocol. */
export const INTERNAL_TARGET: Readonly<Record<Scheme, string>> = {
  https: 'https://web.internal',
  http: 'http://web.internal:8080',
  tls: 'tls://app.internal:443',
  tcp: 'tcp://db.internal:5432',
};

const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
const headers = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, `v${i}`]));
const names = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`);
const OWN_CREDENTIALS = { client_id: 'id', client_secret: 'secret' };
/** `${expr}` as a policy writes it (CEL interpolation, not a JavaScript template). */
export const interp = (expr: string) => `$${'{'}${expr}}`;

const ALL_PHASES: readonly Phase[] = ['on_tcp_connect', 'on_http_request', 'on_http_response'];
const durations = (field: string, dflt?: string): FieldRow => ({
  name: field,
  ...(dflt === undefined ? {} : { default: dflt }),
  valid: ['30s', '15m', '1h'],
  invalid: ['30', 'soon', '-1s'],
  wrongType: 30,
});
const sessionFields: readonly FieldRow[] = [
  { name: 'client_id', valid: ['id'], wrongType: 1, with: { client_secret: 'secret' } },
  { name: 'client_secret', valid: ['secret'], wrongType: 1, with: { client_id: 'id' } },
  { name: 'allow_cors_preflight', default: false, valid: [true, false], wrongType: 'yes' },
  durations('idle_session_timeout'),
  durations('max_session_duration'),
  durations('userinfo_refresh_interval'),
];

/** Section 3, "Actions", one row per action type. */
const ACTIONS: readonly ActionRow[] = [
  {
    type: 'forward-internal',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: 'unless on_error: continue',
    minimal: (_phase, scheme) => ({ url: INTERNAL_TARGET[scheme] }),
    fields: [
      {
        name: 'url',
        required: true,
        valid: ['https://web.internal', 'http://web.internal:8080', 'https://a.b.internal:8443'],
        invalid: ['https://app.example.com', 'tcp://db.internal:5432', 'web.internal'],
        wrongType: 443,
        codes: { invalid: 'ERR_SVC_2226' },
        note: 'on an https endpoint: http and https targets are its protocol',
      },
      {
        name: 'on_error',
        default: 'halt',
        valid: ['halt', 'continue'],
        invalid: ['retry'],
        wrongType: true,
        codes: { invalid: 'ERR_SVC_2222' },
      },
    ],
  },
  {
    type: 'restrict-ips',
    phases: ALL_PHASES,
    terminating: false,
    minimal: () => ({ enforce: true, allow: ['10.0.0.0/8'] }),
    fields: [
      { name: 'enforce', default: true, valid: [true, false], wrongType: 'true' },
      {
        name: 'allow',
        valid: [['10.0.0.0/8', '2001:db8::/32'], ['0.0.0.0/0']],
        invalid: [['10.0.0.0/33'], ['10.0.0.1'], ['::/129']],
        wrongType: '10.0.0.0/8',
        codes: { invalid: 'ERR_SVC_2217' },
      },
      {
        name: 'deny',
        valid: [['192.168.0.0/16'], ['::1/128']],
        invalid: [['300.0.0.0/8']],
        wrongType: { cidr: '10.0.0.0/8' },
        codes: { invalid: 'ERR_SVC_2217' },
      },
      {
        name: 'ip_policies',
        valid: [['ipp_2mvTXwSsGJ7Cl3pT4LMZ'], ['ipp_1', 'ipp_2']],
        invalid: [['ca_1'], ['ipp_']],
        wrongType: 'ipp_1',
        codes: { invalid: 'ERR_SVC_2216' },
      },
    ],
    note: 'at least one of allow, deny, ip_policies (a restriction that restricts nothing)',
  },
  {
    type: 'terminate-tls',
    phases: ['on_tcp_connect'],
    terminating: false,
    minimal: () => ({}),
    fields: [
      {
        name: 'min_version',
        default: '1.2',
        valid: ['1.2', '1.3'],
        invalid: ['1.1', '1.0'],
        wrongType: true,
        codes: { invalid: 'ERR_SVC_2222' },
      },
      {
        name: 'max_version',
        default: '1.3',
        valid: ['1.2', '1.3'],
        invalid: ['1.4'],
        wrongType: [],
        codes: { invalid: 'ERR_SVC_2222' },
      },
      {
        name: 'server_certificate',
        valid: [PEM_CERT],
        invalid: ['not a certificate'],
        wrongType: 1,
        with: { server_private_key: PEM_KEY },
      },
      {
        name: 'server_private_key',
        valid: [PEM_KEY],
        invalid: ['not a key'],
        wrongType: 1,
        with: { server_certificate: PEM_CERT },
      },
      {
        name: 'mutual_tls_certificate_authorities',
        valid: [[PEM_CERT], ['ca_2mvTXwSsGJ7Cl3pT4LMZ'], [PEM_CERT, 'ca_1']],
        invalid: [['ipp_1'], ['plain text']],
        wrongType: 'ca_1',
      },
      {
        name: 'mutual_tls_verification_strategy',
        valid: ['require-and-verify', 'require-any', 'request'],
        invalid: ['verify'],
        wrongType: 1,
        codes: { invalid: 'ERR_SVC_2222' },
      },
    ],
  },
  {
    type: 'add-headers',
    phases: ['on_http_request', 'on_http_response'],
    terminating: false,
    minimal: () => ({ headers: { 'x-a': 'b' } }),
    fields: [
      {
        name: 'headers',
        required: true,
        valid: [{ 'X-Team': 'web' }, { 'x-ip': interp('conn.client_ip') }],
        invalid: [{ 'user-agent': 'x' }, { 'User-Agent': 'x' }, { 'bad name': 'x' }],
        min: { at: headers(1), beyond: headers(0) },
        max: { at: headers(10), beyond: headers(11) },
        wrongType: ['x-a'],
        codes: { invalid: 'ERR_SVC_2210', min: 'ERR_SVC_2223', max: 'ERR_SVC_2212' },
      },
    ],
  },
  {
    type: 'remove-headers',
    phases: ['on_http_request', 'on_http_response'],
    terminating: false,
    minimal: () => ({ headers: ['x-debug'] }),
    fields: [
      {
        name: 'headers',
        required: true,
        valid: [['x-debug'], ['Server', 'X-Powered-By']],
        invalid: [['bad name'], ['User-Agent']],
        min: { at: names(1), beyond: names(0) },
        max: { at: names(10), beyond: names(11) },
        wrongType: 'x-debug',
        codes: { invalid: 'ERR_SVC_2210', min: 'ERR_SVC_2223', max: 'ERR_SVC_2212' },
      },
    ],
  },
  {
    type: 'compress-response',
    phases: ['on_http_response'],
    terminating: false,
    minimal: () => ({}),
    fields: [
      {
        name: 'algorithms',
        default: ['gzip', 'deflate', 'br', 'compress'],
        valid: [['gzip'], ['deflate'], ['br'], ['compress'], ['gzip', 'deflate', 'br', 'compress']],
        invalid: [['zstd']],
        wrongType: 'gzip',
        codes: { invalid: 'ERR_SVC_2214' },
      },
    ],
  },
  {
    type: 'verify-webhook',
    phases: ['on_http_request'],
    terminating: false,
    minimal: () => ({ provider: 'github', secret: 'whsec' }),
    fields: [
      {
        name: 'provider',
        required: true,
        valid: [...WEBHOOK_PROVIDERS, 'jira', 'linear', 'orb'],
        invalid: ['nope', 'hosted_hooks'],
        wrongType: 1,
        with: { secret: 'whsec' },
        codes: { invalid: 'ERR_SVC_2222' },
      },
      {
        name: 'secret',
        required: true,
        valid: ['whsec_1'],
        invalid: [''],
        wrongType: 1,
        with: { provider: 'sns' },
        codes: { invalid: 'ERR_SVC_2223' },
        note: 'sns too: its guide passes the topic owner (policy-actions.md section 0, 21)',
      },
      { name: 'enforce', default: true, valid: [true, false], wrongType: 0 },
    ],
    note: 'a secret for every provider, sns included',
  },
  {
    type: 'circuit-breaker',
    phases: ['on_http_request'],
    terminating: false,
    minimal: () => ({}),
    fields: [
      {
        name: 'error_threshold',
        default: 0.5,
        valid: [0.25],
        min: { at: 0, beyond: -0.001 },
        max: { at: 1, beyond: 1.001 },
        wrongType: '0.5',
      },
      {
        name: 'volume_threshold',
        default: 10,
        valid: [100],
        invalid: [1.5],
        min: { at: 1, beyond: 0 },
        max: { at: 2_000_000_000, beyond: 2_000_000_001 },
        wrongType: '10',
        codes: { invalid: 'ERR_SVC_2203' },
      },
      {
        name: 'window_duration',
        default: '10s',
        valid: ['30s', '1m'],
        invalid: ['ten seconds', '10'],
        min: { at: '1s', beyond: '999ms' },
        max: { at: '2m', beyond: '120001ms' },
        wrongType: 10,
        codes: { max: 'ERR_SVC_2225' },
      },
      {
        name: 'tripped_duration',
        default: '10s',
        valid: ['90s'],
        invalid: ['10'],
        min: { at: '1s', beyond: '999ms' },
        max: { at: '2m', beyond: '2m1s' },
        wrongType: 10,
        codes: { max: 'ERR_SVC_2225' },
      },
      { name: 'enforce', default: true, valid: [true, false], wrongType: 'false' },
    ],
    note: 'buckets are fixed at 10: no field for them',
  },
  {
    type: 'oauth',
    phases: ['on_http_request'],
    terminating: false,
    auth: true,
    minimal: () => ({ provider: 'google' }),
    fields: [
      {
        name: 'provider',
        required: true,
        valid: [
          'amazon',
          'facebook',
          'github',
          'gitlab',
          'google',
          'linkedin',
          'microsoft',
          'twitch',
        ],
        invalid: ['okta', 'Google'],
        wrongType: 1,
        with: OWN_CREDENTIALS,
        codes: { invalid: 'ERR_SVC_2222' },
      },
      ...sessionFields,
      { name: 'scopes', valid: [['openid', 'email']], wrongType: 'email', with: OWN_CREDENTIALS },
      { name: 'auth_id', valid: ['team-a'], wrongType: 1 },
    ],
    note: 'amazon and facebook need own credentials; scopes only with own credentials',
  },
  {
    type: 'openid-connect',
    phases: ['on_http_request'],
    terminating: false,
    auth: true,
    minimal: () => ({ issuer_url: 'https://id.example.com' }),
    fields: [
      {
        name: 'issuer_url',
        required: true,
        valid: ['https://id.example.com', 'https://login.example.com/tenant/v2.0'],
        invalid: ['id.example.com'],
        wrongType: 1,
        codes: { invalid: 'ERR_SVC_2226' },
      },
      ...sessionFields,
      { name: 'scopes', valid: [['openid', 'profile']], wrongType: 'openid' },
    ],
  },
  {
    type: 'saml',
    phases: ['on_http_request'],
    terminating: false,
    auth: true,
    minimal: () => ({ idp_metadata: '<EntityDescriptor/>' }),
    fields: [
      {
        name: 'idp_metadata',
        required: true,
        valid: ['<EntityDescriptor/>'],
        invalid: [''],
        wrongType: 1,
        codes: { invalid: 'ERR_SVC_2223' },
        note: 'early access: the only documented field, so it is required',
      },
    ],
  },
  {
    type: 'deny',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: true,
    minimal: () => undefined,
    fields: [
      {
        name: 'status_code',
        default: 403,
        valid: [404, 451],
        invalid: [403.5],
        min: { at: 100, beyond: 99 },
        max: { at: 599, beyond: 600 },
        wrongType: '403',
        codes: { invalid: 'ERR_SVC_2203' },
        note: 'an HTTP status (100..599); on_tcp_connect takes no config',
      },
    ],
  },
  {
    type: 'custom-response',
    phases: ['on_http_request', 'on_http_response'],
    terminating: true,
    minimal: () => ({}),
    fields: [
      {
        name: 'status_code',
        default: 200,
        valid: [404, 503],
        min: { at: 100, beyond: 99 },
        max: { at: 599, beyond: 600 },
        wrongType: '200',
      },
      { name: 'body', valid: ['not here', `from ${interp('req.host')}`], wrongType: { text: 'x' } },
      {
        name: 'headers',
        // Only add-headers forbids user-agent: a response's own headers are the policy's.
        valid: [{ 'content-type': 'text/plain' }, { 'user-agent': 'edge' }],
        invalid: [{ 'bad name': 'x' }],
        max: { at: headers(10), beyond: headers(11) },
        wrongType: 'content-type',
        codes: { invalid: 'ERR_SVC_2210', max: 'ERR_SVC_2212' },
      },
    ],
  },
  {
    type: 'close-connection',
    phases: ['on_tcp_connect', 'on_http_request'],
    terminating: true,
    minimal: () => undefined,
    fields: [],
    note: 'no config; on_tcp_connect and on_http_request (policy-actions.md 2.5)',
  },
  {
    type: 'set-vars',
    phases: ALL_PHASES,
    terminating: false,
    minimal: () => ({ vars: [{ tier: 'gold' }] }),
    fields: [
      {
        name: 'vars',
        required: true,
        valid: [[{ a: 1 }, { b: 'x' }], []],
        invalid: [[{ a: 1, b: 2 }], [{}]],
        wrongType: { a: 1 },
        codes: { invalid: 'ERR_SVC_2252', wrongType: 'ERR_SVC_2252' },
      },
    ],
  },
];

/** policy-actions.md section 2: some of the actions the endpoints table above lacks. */
const MORE_ACTIONS: readonly ActionRow[] = [
  {
    type: 'rate-limit',
    phases: ['on_http_request'],
    terminating: false,
    minimal: () => ({
      name: 'per-ip',
      algorithm: 'sliding_window',
      capacity: 10,
      rate: '60s',
      bucket_key: ['conn.client_ip'],
    }),
    fields: [
      {
        name: 'name',
        required: true,
        valid: ['per-ip', 'x'.repeat(1023)],
        invalid: ['x'.repeat(1024)],
        wrongType: 1,
        codes: { invalid: 'ERR_SVC_2221' },
      },
      { name: 'enforce', default: true, valid: [true, false], wrongType: 'true' },
      {
        name: 'algorithm',
        required: true,
        valid: ['sliding_window'],
        invalid: ['token_bucket'],
        wrongType: 1,
        codes: { invalid: 'ERR_SVC_2222' },
      },
      {
        name: 'capacity',
        required: true,
        valid: [100],
        min: { at: 1, beyond: 0 },
        max: { at: 2_000_000_000, beyond: 2_000_000_001 },
        wrongType: '10',
      },
      {
        name: 'rate',
        required: true,
        valid: ['60s', '1m', '90s', '1h'],
        invalid: ['65s', '95s'],
        min: { at: '60s', beyond: '50s' },
        max: { at: '24h', beyond: '24h10s' },
        wrongType: 60,
        codes: { invalid: 'ERR_SVC_2215', max: 'ERR_SVC_2225' },
        note: 'a multiple of 10 s',
      },
      {
        name: 'bucket_key',
        required: true,
        valid: [['conn.client_ip'], ['req.host', "getReqHeader('x-api-key')"]],
        invalid: [[]],
        max: { at: Array(10).fill('req.host'), beyond: Array(11).fill('req.host') },
        wrongType: 'req.host',
        codes: { invalid: 'ERR_SVC_2223', max: 'ERR_SVC_2218' },
      },
    ],
  },
  {
    type: 'redirect',
    phases: ['on_http_request'],
    terminating: false,
    minimal: () => ({ to: 'https://www.example.com' }),
    fields: [
      {
        name: 'from',
        valid: ['^http://(.*)$', '(?i)/old'],
        invalid: ['(?=x)', '('],
        wrongType: 1,
        codes: { invalid: 'ERR_SVC_2261' },
      },
      {
        name: 'to',
        required: true,
        valid: ['https://$1', interp('req.url')],
        wrongType: 1,
      },
      {
        name: 'status_code',
        default: 302,
        valid: [301, 302, 303, 307, 308],
        invalid: [200, 304],
        wrongType: '301',
        codes: { invalid: 'ERR_SVC_2222' },
      },
      {
        name: 'headers',
        valid: [{ 'x-a': interp('req.host') }],
        max: { at: headers(10), beyond: headers(11) },
        wrongType: 'x',
        codes: { max: 'ERR_SVC_2212' },
      },
    ],
    note: 'not terminating for 2207 and 2235 (section 0, decision 1)',
  },
  {
    type: 'url-rewrite',
    phases: ['on_http_request'],
    terminating: false,
    minimal: () => ({ to: '/new' }),
    fields: [
      {
        name: 'from',
        valid: ['^/old/(.*)'],
        invalid: ['(?<=a)b'],
        wrongType: [],
        codes: { invalid: 'ERR_SVC_2261' },
      },
      { name: 'to', required: true, valid: ['/$1', interp('req.url')], wrongType: 5 },
    ],
  },
  {
    type: 'log',
    phases: ALL_PHASES,
    terminating: false,
    minimal: () => ({ metadata: { route: 'api' } }),
    fields: [
      {
        name: 'metadata',
        required: true,
        valid: [{ ip: interp('conn.client_ip'), n: 1 }],
        invalid: [{ a: interp('conn.') }],
        wrongType: ['a'],
        codes: { invalid: 'ERR_SVC_2224' },
      },
    ],
  },
  {
    type: 'owasp-crs-request',
    phases: ['on_http_request'],
    terminating: false,
    minimal: () => ({}),
    fields: [
      {
        name: 'on_error',
        default: 'halt',
        valid: ['halt', 'continue'],
        invalid: ['retry'],
        wrongType: true,
        codes: { invalid: 'ERR_SVC_2222' },
        note: 'marked required yet defaulted: optional (section 0, decisions 4-6)',
      },
      { name: 'process_body', default: false, valid: [true, false], wrongType: 'yes' },
      {
        name: 'exclude_rule_ids',
        valid: [[942100]],
        min: { at: [900000], beyond: [899999] },
        max: { at: [999999], beyond: [1000000] },
        wrongType: 942100,
      },
    ],
  },
];

const EVERY_ACTION: readonly ActionRow[] = [...ACTIONS, ...MORE_ACTIONS];

/** A case of a rule: what is sent, and where the answer points. */
export type RuleCase =
  | {
      readonly name: string;
      /** A policy on an endpoint of `scheme`, as data (sent as YAML) or as text. */
      readonly scheme: Scheme;
      readonly policy: unknown;
      /** The path the message names inside the document. */
      readonly path: string;
      /** On an internal (`.internal`) host. */
      readonly internal?: true;
    }
  | {
      readonly name: string;
      /** Two creates of the same URL: the holder, then the newcomer. */
      readonly holderPools: boolean;
      readonly newcomerPools: boolean;
    }
  | {
      readonly name: string;
      /** An endpoint made with `create`, then `patch` sent to it. */
      readonly create: Readonly<Record<string, unknown>>;
      readonly patch: Readonly<Record<string, unknown>>;
      readonly path: string;
    }
  | {
      readonly name: string;
      /** An edge holding `hostport`, then an endpoint claiming `url`. */
      readonly edge: { readonly kind: 'https' | 'tls'; readonly hostport: string };
      readonly url: string;
    };

export interface RuleRow {
  readonly code: string;
  readonly rule: string;
  readonly cases: readonly RuleCase[];
}

const FORWARD = { type: 'forward-internal', config: { url: INTERNAL_TARGET.https } };
const LAST = { actions: [FORWARD] };
const GUARD = ["req.url.path.startsWith('/admin')"];

/** The rules of an action that tie its fields together, with their codes (policy-actions.md 1.6). */
function crossFieldRows(): RuleRow[] {
  const one = (name: string, type: string, config: Record<string, unknown>, field = '') => ({
    name,
    scheme: 'https' as const,
    policy: { on_http_request: [LAST, LAST, { actions: [{ type, config }] }, LAST] },
    path: `on_http_request[2].actions[0].config${field}`,
  });
  return [
    {
      code: 'ERR_SVC_2234',
      rule: 'a required element is missing (own credentials, a secret, something to restrict)',
      cases: [
        one('oauth amazon needs own credentials', 'oauth', { provider: 'amazon' }, '.client_id'),
        one(
          'oauth facebook needs own credentials',
          'oauth',
          { provider: 'facebook' },
          '.client_id',
        ),
        one('verify-webhook needs a secret', 'verify-webhook', { provider: 'github' }, '.secret'),
        one('verify-webhook sns needs a secret', 'verify-webhook', { provider: 'sns' }, '.secret'),
        one('restrict-ips restricting nothing', 'restrict-ips', { enforce: true }),
      ],
    },
    {
      code: 'ERR_SVC_2240',
      rule: 'one of a pair of fields without the other',
      cases: [
        one(
          'oauth client_id without client_secret',
          'oauth',
          { provider: 'github', client_id: 'id' },
          '.client_secret',
        ),
        one(
          'openid-connect client_secret without client_id',
          'openid-connect',
          { issuer_url: 'https://id.example.com', client_secret: 'secret' },
          '.client_id',
        ),
      ],
    },
    {
      code: 'ERR_SVC_2204',
      rule: 'an invalid value: scopes without own credentials, a template where none is taken',
      cases: [
        one(
          'oauth scopes only with own credentials',
          'oauth',
          { provider: 'google', scopes: ['email'] },
          '.scopes',
        ),
        one(
          'a template in oauth auth_id',
          'oauth',
          { provider: 'google', auth_id: interp('req.host') },
          '.auth_id',
        ),
      ],
    },
  ];
}

/** Section 2 and 3 rules with their codes (18002 and the 22xx: the policy's). */
const RULES: readonly RuleRow[] = [
  {
    code: 'ERR_SVC_2201',
    rule: 'an unknown action type',
    cases: [
      {
        name: 'rate-limiter is no action',
        scheme: 'https',
        policy: { on_http_request: [LAST, LAST, { actions: [{ type: 'rate-limiter' }] }, LAST] },
        path: 'on_http_request[2].actions[0].type',
      },
      {
        name: 'constructor is no action',
        scheme: 'tcp',
        policy: { on_tcp_connect: [{ actions: [{ type: 'constructor' }, { type: 'deny' }] }] },
        path: 'on_tcp_connect[0].actions[0].type',
      },
    ],
  },
  {
    code: 'ERR_SVC_2230',
    rule: 'an http phase on a tls/tcp endpoint (policy-actions.md 1.2)',
    cases: (['tls', 'tcp'] as const).flatMap((scheme) =>
      (['on_http_request', 'on_http_response', 'inbound', 'outbound'] as const).map((phase) => ({
        name: `${phase} on a ${scheme} endpoint`,
        scheme,
        policy: {
          on_tcp_connect: [{ actions: [{ type: 'deny' }] }],
          [phase]: [{ actions: [{ type: 'set-vars', config: { vars: [] } }] }],
        },
        path: phase,
      })),
    ),
  },
  {
    code: 'ERR_SVC_2207',
    rule: 'an action after a terminating one in the same rule is unreachable',
    cases: [
      {
        name: 'after deny',
        scheme: 'https',
        policy: { on_http_request: [{ actions: [{ type: 'deny' }, FORWARD] }] },
        path: 'on_http_request[0].actions[1]',
      },
      {
        name: 'after close-connection, in the request phase',
        scheme: 'https',
        policy: {
          on_http_request: [
            { expressions: GUARD, actions: [{ type: 'custom-response' }] },
            {
              actions: [
                { type: 'close-connection' },
                { type: 'remove-headers', config: { headers: ['server'] } },
              ],
            },
          ],
        },
        path: 'on_http_request[1].actions[1]',
      },
      {
        name: 'after close-connection on tcp',
        scheme: 'tcp',
        policy: {
          on_tcp_connect: [{ actions: [{ type: 'close-connection' }, { type: 'deny' }] }],
        },
        path: 'on_tcp_connect[0].actions[1]',
      },
    ],
  },
  {
    code: 'ERR_SVC_2235',
    rule: "the entry phase's last rule has no expressions and ends with a terminating action",
    cases: [
      {
        name: 'no entry phase',
        scheme: 'https',
        policy: { on_http_response: [{ actions: [{ type: 'compress-response' }] }] },
        path: 'on_http_request',
      },
      {
        name: 'an empty entry phase',
        scheme: 'tls',
        policy: { on_tcp_connect: [] },
        path: 'on_tcp_connect',
      },
      {
        name: 'last rule guarded',
        scheme: 'https',
        policy: { on_http_request: [{ expressions: GUARD, actions: [{ type: 'deny' }] }] },
        path: 'on_http_request[0]',
      },
      {
        name: 'last action does not terminate',
        scheme: 'http',
        policy: {
          on_http_request: [
            LAST,
            { actions: [{ type: 'add-headers', config: { headers: { a: 'b' } } }] },
          ],
        },
        path: 'on_http_request[1]',
      },
      {
        name: 'the response phase does not end an https endpoint',
        scheme: 'https',
        policy: {
          on_http_request: [{ actions: [{ type: 'set-vars', config: { vars: [] } }] }],
          on_http_response: [{ actions: [{ type: 'custom-response' }] }],
        },
        path: 'on_http_request[0]',
      },
      {
        name: 'tls ends in on_tcp_connect',
        scheme: 'tls',
        policy: { on_tcp_connect: [{ actions: [{ type: 'terminate-tls' }] }] },
        path: 'on_tcp_connect[0]',
      },
    ],
  },
  {
    code: 'ERR_SVC_2239',
    rule: 'at most one authentication action (oauth, openid-connect, saml) per endpoint',
    cases: (
      [
        ['oauth', 'saml'],
        ['openid-connect', 'oauth'],
        ['saml', 'saml'],
      ] as const
    ).map(([first, second]) => ({
      name: `${first} then ${second}`,
      scheme: 'https' as const,
      policy: {
        on_http_request: [
          {
            actions: [
              { type: first, config: actionRow(first).minimal('on_http_request', 'https') },
            ],
          },
          {
            expressions: GUARD,
            actions: [
              { type: second, config: actionRow(second).minimal('on_http_request', 'https') },
            ],
          },
          LAST,
        ],
      },
      path: 'on_http_request[1].actions[0]',
    })),
  },
  {
    code: 'ERR_SVC_18002',
    rule: 'a policy that is not a YAML or JSON document of phases to rules of actions',
    cases: [
      { name: 'not YAML', scheme: 'https', policy: 'on_http_request: [', path: '(document)' },
      { name: 'not a mapping', scheme: 'https', policy: '- on_http_request', path: '(document)' },
      {
        name: 'unknown phase',
        scheme: 'https',
        policy: { on_request: [LAST] },
        path: 'on_request',
      },
      {
        name: 'a phase under both names',
        scheme: 'https',
        policy: { on_http_request: [LAST], inbound: [LAST] },
        path: 'inbound',
      },
      {
        name: 'a rule without actions',
        scheme: 'https',
        policy: { on_http_request: [{ name: 'x', expressions: GUARD }, LAST] },
        path: 'on_http_request[0].actions',
      },
      {
        name: 'an expression that is not CEL',
        scheme: 'https',
        policy: {
          on_http_request: [
            { expressions: ["req.host == 'a' &&"], actions: [{ type: 'deny' }] },
            LAST,
          ],
        },
        path: 'on_http_request[0].expressions[0]',
      },
    ],
  },
  {
    code: 'ERR_SVC_2224',
    rule: 'a ${...} template that does not compile',
    cases: [
      {
        name: 'an interpolation that is not CEL',
        scheme: 'https',
        policy: {
          on_http_request: [LAST],
          on_http_response: [
            {
              actions: [
                { type: 'add-headers', config: { headers: { 'x-a': interp('conn.client_ip +') } } },
              ],
            },
          ],
        },
        path: 'on_http_response[0].actions[0].config.headers.x-a',
      },
    ],
  },
  {
    code: 'ERR_SVC_2203',
    rule: 'a config that does not parse: deny takes none in on_tcp_connect',
    cases: [
      {
        name: 'a config field deny has not in on_tcp_connect',
        scheme: 'tcp',
        policy: { on_tcp_connect: [{ actions: [{ type: 'deny', config: { status_code: 403 } }] }] },
        path: 'on_tcp_connect[0].actions[0].config',
      },
    ],
  },
  {
    code: 'ERR_SVC_2262',
    rule: 'on_tcp_connect on an internal http or https endpoint (policy-actions.md section 0, 16)',
    cases: [
      {
        name: 'an internal https endpoint',
        scheme: 'https',
        internal: true,
        policy: {
          on_tcp_connect: [{ actions: [{ type: 'set-vars', config: { vars: [] } }] }],
          on_http_request: [LAST],
        },
        path: 'on_tcp_connect',
      },
    ],
  },
  ...crossFieldRows(),
  {
    code: 'ERR_SVC_18004',
    rule: 'a PATCH with no field at all',
    cases: [{ name: 'empty PATCH', create: {}, patch: {}, path: 'the update has no field' }],
  },
  {
    code: 'ERR_SVC_18005',
    rule: "changing the URL's scheme in place",
    cases: (
      ['http://s.example.com', 'tls://s.example.com:443', 'tcp://s.example.com:1'] as const
    ).map((url) => ({
      name: `https to ${url}`,
      create: {},
      patch: { url },
      path: 'url: the scheme',
    })),
  },
  {
    code: 'ERR_SVC_18009',
    rule: 'a URL and binding held by an endpoint that does not pool',
    cases: [{ name: 'neither pools', holderPools: false, newcomerPools: false }],
  },
  {
    code: 'ERR_SVC_18016',
    rule: 'pooling mismatch: the newcomer pools, the holder does not',
    cases: [{ name: 'newcomer pools', holderPools: false, newcomerPools: true }],
  },
  {
    code: 'ERR_SVC_18017',
    rule: 'pooling mismatch: the holder pools, the newcomer does not',
    cases: [{ name: 'holder pools', holderPools: true, newcomerPools: false }],
  },
  {
    code: 'ERR_SVC_381',
    rule: 'a host and port still held by an edge',
    cases: [
      {
        name: 'https edge, https url',
        edge: { kind: 'https', hostport: '%h:443' },
        url: 'https://%H',
      },
      {
        name: 'https edge, tls url',
        edge: { kind: 'https', hostport: '%h:443' },
        url: 'tls://%h:443',
      },
      {
        name: 'tls edge, https url :443',
        edge: { kind: 'tls', hostport: '%h:443' },
        url: 'HTTPS://%h:443',
      },
    ],
  },
];

/** A URL row of section 2: what is stored, or the code of the refusal. */
export interface UrlRow {
  readonly url: string;
  /** Sent when present; else the service's default applies. */
  readonly bindings?: readonly Binding[];
  /** The normalised URL, binding and port answered. */
  readonly stored?: { readonly url: string; readonly binding: Binding; readonly port: number };
  readonly code?: string;
}

const ok = (url: string, binding: Binding, port: number) => ({ stored: { url, binding, port } });
const URLS: readonly UrlRow[] = [
  // normalisation: scheme and host lower-case, default port dropped for https and http only
  { url: 'https://App.Example.com:443', ...ok('https://app.example.com', 'public', 443) },
  { url: 'HTTPS://app2.example.com/', ...ok('https://app2.example.com', 'public', 443) },
  { url: 'http://Api.Example.com:80', ...ok('http://api.example.com', 'public', 80) },
  { url: 'tls://Mail.Example.COM:443', ...ok('tls://mail.example.com:443', 'public', 443) },
  { url: 'tls://mail2.example.com', ...ok('tls://mail2.example.com:443', 'public', 443) },
  { url: 'tcp://Game.Example.com:25565', ...ok('tcp://game.example.com:25565', 'public', 25565) },
  { url: 'https://*.w.example.com', ...ok('https://*.w.example.com', 'public', 443) },
  // public binding: https and tls on 443 only, http on 80 only, tcp with an explicit port
  {
    url: 'https://p1.example.com',
    bindings: ['public'],
    ...ok('https://p1.example.com', 'public', 443),
  },
  { url: 'https://p2.example.com:8443', code: 'ERR_SVC_18023' },
  { url: 'http://p3.example.com:8080', bindings: ['public'], code: 'ERR_SVC_18023' },
  { url: 'http://p4.example.com:443', code: 'ERR_SVC_18023' },
  { url: 'tls://p5.example.com:8443', code: 'ERR_SVC_18023' },
  { url: 'tcp://p6.example.com:1', ...ok('tcp://p6.example.com:1', 'public', 1) },
  { url: 'tcp://p7.example.com:65535', ...ok('tcp://p7.example.com:65535', 'public', 65535) },
  { url: 'tcp://p8.example.com', code: 'ERR_SVC_18003' },
  // internal binding: any scheme, any port 1..65535; a .internal host is always internal
  { url: 'HTTPS://Web.Internal:443', ...ok('https://web.internal', 'internal', 443) },
  {
    url: 'https://i1.internal:8443',
    bindings: ['internal'],
    ...ok('https://i1.internal:8443', 'internal', 8443),
  },
  { url: 'http://i2.internal:1', ...ok('http://i2.internal:1', 'internal', 1) },
  { url: 'tls://i3.internal:65535', ...ok('tls://i3.internal:65535', 'internal', 65535) },
  { url: 'tcp://i4.svc.internal:5432', ...ok('tcp://i4.svc.internal:5432', 'internal', 5432) },
  { url: 'tcp://i5.internal', bindings: ['internal'], code: 'ERR_SVC_18003' },
  { url: 'tcp://i6.internal:0', code: 'ERR_SVC_18001' },
  { url: 'tcp://i7.internal:65536', code: 'ERR_SVC_18001' },
  { url: 'https://i8.internal', bindings: ['public'], code: 'ERR_SVC_18023' },
  { url: 'https://i9.example.com', bindings: ['internal'], code: 'ERR_SVC_18023' },
  // kubernetes binding: http://name.namespace[:port] or tcp://name.namespace:port only
  { url: 'http://svc.ns', bindings: ['kubernetes'], ...ok('http://svc.ns', 'kubernetes', 80) },
  {
    url: 'http://svc2.ns:8080',
    bindings: ['kubernetes'],
    ...ok('http://svc2.ns:8080', 'kubernetes', 8080),
  },
  {
    url: 'tcp://db.ns:5432',
    bindings: ['kubernetes'],
    ...ok('tcp://db.ns:5432', 'kubernetes', 5432),
  },
  { url: 'tcp://db2.ns', bindings: ['kubernetes'], code: 'ERR_SVC_18003' },
  { url: 'https://svc3.ns', bindings: ['kubernetes'], code: 'ERR_SVC_18018' },
  { url: 'tls://svc4.ns:443', bindings: ['kubernetes'], code: 'ERR_SVC_18018' },
  { url: 'http://a.svc5.ns', bindings: ['kubernetes'], code: 'ERR_SVC_18023' },
  { url: 'http://svc6.internal', bindings: ['kubernetes'], code: 'ERR_SVC_18023' },
  // refusals of the URL itself
  { url: 'app.example.com', code: 'ERR_SVC_18022' },
  { url: 'app.example.com:443', code: 'ERR_SVC_18022' },
  { url: 'ftp://app.example.com', code: 'ERR_SVC_18022' },
  { url: 'wss://app.example.com', code: 'ERR_SVC_18022' },
  { url: 'https://app.example.com/path', code: 'ERR_SVC_18001' },
  { url: 'https://app.example.com?x=1', code: 'ERR_SVC_18001' },
  { url: 'https://app.example.com#frag', code: 'ERR_SVC_18001' },
  { url: 'https://user@app.example.com', code: 'ERR_SVC_18001' },
  { url: 'https://user:pw@app.example.com', code: 'ERR_SVC_18001' },
];

/** Section 1's EndpointCreate / EndpointUpdate table. */
export interface BodyFieldRow {
  readonly name: string;
  readonly create: 'required' | 'optional';
  readonly update: 'optional' | 'not accepted';
  /** The value answered when the field is not sent (none: absent from the answer). */
  readonly default?: unknown;
  readonly valid: readonly unknown[];
  readonly invalid: readonly unknown[];
  /** Byte bound: that many bytes taken, one more refused (with `tooLongCode`). */
  readonly maxBytes?: number;
  readonly tooLongCode?: string;
  readonly wrongType: unknown;
}

const BODY_FIELDS: readonly BodyFieldRow[] = [
  {
    name: 'url',
    create: 'required',
    update: 'optional',
    valid: [],
    // A string that is no URL is section 2's (18001), not the field's own type.
    invalid: [],
    wrongType: 443,
  },
  {
    name: 'type',
    create: 'optional',
    update: 'not accepted',
    default: 'cloud',
    valid: ['cloud'],
    invalid: ['agent', 'edge'],
    wrongType: 1,
  },
  {
    name: 'traffic_policy',
    create: 'required',
    update: 'optional',
    valid: [],
    invalid: [''],
    wrongType: { on_http_request: [] },
  },
  {
    name: 'description',
    create: 'optional',
    update: 'optional',
    valid: ['web'],
    invalid: [],
    maxBytes: 255,
    tooLongCode: 'ERR_SVC_18012',
    wrongType: 1,
  },
  {
    name: 'metadata',
    create: 'optional',
    update: 'optional',
    valid: ['{"team":"web"}', 'free text'],
    invalid: [],
    maxBytes: 4096,
    tooLongCode: 'ERR_SVC_18013',
    wrongType: { team: 'web' },
  },
  {
    name: 'bindings',
    create: 'optional',
    update: 'optional',
    default: ['public'],
    valid: [['public'], []],
    invalid: [['public', 'internal'], ['private'], ['public', 'public']],
    wrongType: 'public',
  },
  {
    name: 'pooling_enabled',
    create: 'optional',
    update: 'optional',
    default: false,
    valid: [true, false],
    invalid: [],
    wrongType: 'true',
  },
];

/**
 * Section 2, uniqueness: two creates of one URL that are both accepted. `%n` stands for a name
 * fresh per case; the URL is written as the holder sends it, upper-cased for the newcomer.
 */
export interface SharingCase {
  readonly name: string;
  readonly url: string;
  readonly holder: Readonly<Record<string, unknown>>;
  readonly newcomer: Readonly<Record<string, unknown>>;
}

const SHARING: readonly SharingCase[] = [
  {
    name: 'both pool',
    url: 'https://%n.example.com',
    holder: { pooling_enabled: true },
    newcomer: { pooling_enabled: true },
  },
  {
    name: 'same URL, different binding (neither pools)',
    url: 'http://%n.default',
    holder: { bindings: ['public'] },
    newcomer: { bindings: ['kubernetes'] },
  },
];

/** The whole specification table. */
export const CLOUD_SPEC = {
  /** Section 3: the phases each scheme has (the first is its entry phase). */
  phases: {
    https: ['on_http_request', 'on_http_response', 'on_tcp_connect'],
    http: ['on_http_request', 'on_http_response', 'on_tcp_connect'],
    tls: ['on_tcp_connect'],
    tcp: ['on_tcp_connect'],
  } satisfies Record<Scheme, readonly Phase[]>,
  legacyPhases: { inbound: 'on_http_request', outbound: 'on_http_response' } as const,
  actions: EVERY_ACTION,
  rules: RULES,
  sharing: SHARING,
  urls: URLS,
  body: BODY_FIELDS,
  /** The shared body codes of edge-api.md for a field's own value. */
  bodyCodes: { invalidValue: ERROR_CODE.invalidValue, unknownField: ERROR_CODE.unknownField },
  /** The policy code of a malformed rule or config (the 22xx have their own rows). */
  policyCode: 'ERR_SVC_18002',
} as const;

export function actionRow(type: string): ActionRow {
  const row = EVERY_ACTION.find((a) => a.type === type);
  if (row === undefined) throw new Error(`no action ${type} in the table`);
  return row;
}

/** The entry phase of a scheme: where the policy must end in a terminating action. */
export function entryPhase(scheme: Scheme): Phase {
  return CLOUD_SPEC.phases[scheme][0] as Phase;
}
