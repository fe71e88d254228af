/**
 * The Edge Configuration API's facts, in one place: ID prefixes, enumerations, limits and which
 * modules each owner carries. Both the local server (src/server) and the manifest validator
 * (src/manifest) read them from here, so the two can never disagree. Sources:
 * shared/spec/edge-api.md, and shared/spec/api-notes.md where the specification is silent
 * (items marked unconfirmed there are decided here).
 */

export const API_VERSION = '2';

export const ID_PREFIX = {
  tlsEdge: 'edgtls_',
  httpsEdge: 'edghts_',
  route: 'edghtsrt_',
  botUser: 'bot_',
  operation: 'op_',
  ipPolicy: 'ipp_',
  certificateAuthority: 'ca_',
} as const;

/** Backends have several kinds (`bkdtg_`, `bkdhr_`, ...): any ID starting with `bkd` and an underscore. */
export const BACKEND_ID_PATTERN = /^bkd[a-z]*_[A-Za-z0-9]+$/;
/**
 * Backend ID prefix -> the collection under `{base_url}/backends/` its Ref URI points at. Other
 * `bkd*_` prefixes are accepted and point at `{base_url}/backends/{id}`.
 */
export const BACKEND_KINDS: Readonly<Record<string, string>> = {
  bkdtg_: 'tunnel_group',
  bkdhr_: 'http_response',
  bkdfo_: 'failover',
  bkdwb_: 'weighted',
  bkdsa_: 'static_address',
};
/** The opaque part of the IDs we mint: 27 base62 characters, time-ordered. */
export const ID_BODY_LENGTH = 27;

export const LIMITS = {
  descriptionBytes: 255,
  metadataBytes: 4096,
  numBucketsMax: 128,
  uint32Max: 4_294_967_295,
  pageLimitMax: 100,
  pageLimitDefault: 100,
  /** Request bodies larger than this are refused with 413. */
  bodyBytes: 1024 * 1024,
  portMin: 1,
  portMax: 65_535,
  /** Bot user names (our decision: non-empty, at most 255 bytes like descriptions). */
  botUserNameBytes: 255,
} as const;

export const MATCH_TYPES = ['exact_path', 'path_prefix'] as const;
export const TERMINATE_AT = ['edge', 'agent', 'upstream'] as const;
/** Accepted TLS versions (api-notes: exact set unconfirmed; this is our decision). */
export const TLS_VERSIONS = ['1.0', '1.1', '1.2', '1.3'] as const;
export const DEFAULT_TLS_MIN_VERSION = '1.2';
export const DEFAULT_COOKIE_PREFIX = 'svc.';
/**
 * What the local server fills in for circuit breaker fields a write leaves out (our decision,
 * Hystrix-like; the notes give no defaults). Session timers and `auth_check_interval` default
 * to 0, meaning "the service's default".
 */
export const CIRCUIT_BREAKER_DEFAULTS = {
  tripped_duration: 10,
  rolling_window: 10,
  num_buckets: 10,
  volume_threshold: 20,
  error_threshold_percentage: 0.5,
} as const;

export const NAMEID_FORMATS = [
  'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
] as const;
export const DEFAULT_NAMEID_FORMAT = NAMEID_FORMATS[0];

export const OAUTH_PROVIDERS = [
  'github',
  'facebook',
  'microsoft',
  'google',
  'linkedin',
  'gitlab',
  'twitch',
  'amazon',
] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

/**
 * Webhook providers we accept (matched case-insensitively). The hosted list has about 67; these
 * are the ones the notes name plus other well-known senders. `sns` must not carry a secret.
 */
export const WEBHOOK_PROVIDERS = [
  'aftership',
  'airship',
  'amazon_sns',
  'autodesk_forge',
  'bitbucket',
  'bolt',
  'box',
  'brevo',
  'buildkite',
  'calendly',
  'castle',
  'chargify',
  'circleci',
  'clearbit',
  'clerk',
  'coinbase',
  'contentful',
  'docusign',
  'dropbox',
  'facebook_graph_api',
  'facebook_messenger',
  'frameio',
  'github',
  'gitlab',
  'go_cardless',
  'hosted_hooks',
  'hubspot',
  'hygraph',
  'instagram',
  'intercom',
  'launch_darkly',
  'linear',
  'mailchimp',
  'mailgun',
  'mandrill',
  'modern_treasury',
  'mongodb',
  'mux',
  'orbit',
  'pagerduty',
  'pinwheel',
  'plivo',
  'pusher',
  'sanity',
  'sendgrid',
  'shopify',
  'signalwire',
  'slack',
  'sns',
  'sonatype',
  'square',
  'stripe',
  'svix',
  'terraform',
  'tiktok',
  'trendyol',
  'twilio',
  'twitter',
  'typeform',
  'vmware',
  'webex',
  'whatsapp',
  'workos',
  'xero',
  'yousign',
  'zendesk',
  'zoom',
] as const;
/** The one provider that must not have a secret. */
export const WEBHOOK_PROVIDER_WITHOUT_SECRET = 'sns';

/** Module sub-resources per owner, in the order they appear in read shapes. */
export const TLS_EDGE_MODULES = [
  'backend',
  'ip_restriction',
  'mutual_tls',
  'tls_termination',
  'traffic_policy',
] as const;
export const HTTPS_EDGE_MODULES = ['mutual_tls', 'tls_termination'] as const;
export const ROUTE_MODULES = [
  'backend',
  'ip_restriction',
  'circuit_breaker',
  'compression',
  'request_headers',
  'response_headers',
  'webhook_verification',
  'oauth',
  'saml',
  'oidc',
  'websocket_tcp_converter',
  'user_agent_filter',
  'traffic_policy',
] as const;
/** At most one of these per route. */
export const AUTH_MODULES = ['oauth', 'oidc', 'saml'] as const;

export type TlsEdgeModule = (typeof TLS_EDGE_MODULES)[number];
export type HttpsEdgeModule = (typeof HTTPS_EDGE_MODULES)[number];
export type RouteModule = (typeof ROUTE_MODULES)[number];
export type AuthModule = (typeof AUTH_MODULES)[number];

/** Error codes of api-notes' table (`ERR_SVC_<n>`). */
export const ERROR_CODE = {
  contentType: 'ERR_SVC_210',
  notJson: 'ERR_SVC_213',
  unknownField: 'ERR_SVC_214',
  invalidValue: 'ERR_SVC_215',
  badVersion: 'ERR_SVC_217',
  missingVersion: 'ERR_SVC_218',
  rateLimited: 'ERR_SVC_226',
  wrongIdPrefix: 'ERR_SVC_227',
  unknownQueryParam: 'ERR_SVC_231',
  edgeNotFound: 'ERR_SVC_7000',
  authConflict: 'ERR_SVC_7079',
  hostportInUse: 'ERR_SVC_7122',
  routeNotFound: 'ERR_SVC_7124',
  matchInUse: 'ERR_SVC_7126',
  unauthorized: 'ERR_SVC_401',
  bodyTooLarge: 'ERR_SVC_413',
  unavailable: 'ERR_SVC_503',
  notFound: 'ERR_SVC_404',
  methodNotAllowed: 'ERR_SVC_405',
} as const;

/** `host:port` with a port in 1..65535; host is a DNS name (optionally wildcard) or IP literal. */
export const HOSTPORT_PATTERN =
  /^(?:\*\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*:(\d{1,5})$/;

export function isValidHostport(value: string): boolean {
  const m = HOSTPORT_PATTERN.exec(value);
  if (m === null || value.length > 260) return false;
  const port = Number(m[1]);
  return port >= LIMITS.portMin && port <= LIMITS.portMax;
}

const encoder = new TextEncoder();

/** Byte length in UTF-8 (the spec's limits count bytes, not characters). No node:* import: pure. */
export function utf8Bytes(value: string): number {
  // Fast path: ASCII-only strings are as long in bytes as in UTF-16 units.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: range check for ASCII
  if (/^[\x00-\x7f]*$/.test(value)) return value.length;
  return encoder.encode(value).length;
}

/**
 * User-agent filter entries are regular expressions in the hosted service's syntax (Go's RE2),
 * where case-insensitivity is written inline as a leading `(?i)`. JavaScript has no inline
 * flags, so a leading RE2 flag group is turned into RegExp flags before the pattern is checked.
 * Server and validator both use this, so a pattern the validator accepts is one the server takes.
 */
const RE2_LEADING_FLAGS = /^\(\?([imsU]+)\)/;

export function isValidUserAgentPattern(pattern: string): boolean {
  if (pattern.length === 0) return false;
  let source = pattern;
  let flags = '';
  const m = RE2_LEADING_FLAGS.exec(pattern);
  if (m !== null) {
    source = pattern.slice(m[0].length);
    // `U` (ungreedy) has no JavaScript equivalent; it does not change validity.
    flags = [...new Set((m[1] ?? '').replace('U', ''))].join('');
  }
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false;
  }
}
