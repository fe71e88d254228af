/**
 * The Edge Configuration API's facts, in one place: ID prefixes, enumerations, limits and the
 * rules of the hosted service (which modules each owner carries is the module definitions',
 * ./modules/index.ts). Both the local server (src/server) and the manifest validator
 * (src/manifest) read them from here, so the two can never disagree. Sources:
 * shared/spec/edge-api.md, and shared/spec/api-notes.md where the specification is silent
 * (items marked unconfirmed there are decided here).
 */

import { createRequire } from 'node:module';
import type { RE2JS as RE2 } from 're2js';

/** re2js is loaded on first use (user-agent patterns are rare): a plan needs no RE2 otherwise. */
let re2: typeof RE2 | undefined;
function re2js(): typeof RE2 {
  re2 ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2 }).RE2JS;
  return re2;
}

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
const _DEFAULT_COOKIE_PREFIX = 'svc.';
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
 * Webhook verification providers: exactly the 66 identifiers the hosted service accepts (api-notes,
 * "Rules of the hosted service"), matched case-insensitively. `sns` must not carry a secret.
 */
export const WEBHOOK_PROVIDERS = [
  'aftership',
  'airship',
  'alchemy',
  'autodesk',
  'bitbucket',
  'bolt',
  'box',
  'brex',
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
  'go1',
  'graphcms',
  'heroku',
  'hostedhooks',
  'hubspot',
  'instagram',
  'intercom',
  'launch_darkly',
  'mailchimp',
  'mailgun',
  'microsoft_teams',
  'modern_treasury',
  'mongodb',
  'mux',
  'orbit',
  'pagerduty',
  'pinwheel',
  'plivo',
  'pusher',
  'sendgrid',
  'sentry',
  'shopify',
  'signal_sciences',
  'slack',
  'sns',
  'sonatype',
  'square',
  'stripe',
  'svix',
  'terraform',
  'tiktok',
  'trendmicro_conformity',
  'twilio',
  'twitter',
  'typeform',
  'vmware',
  'webex',
  'whatsapp',
  'worldline',
  'xero',
  'zendesk',
  'zoom',
] as const;
/** The one provider that must not have a secret. */
export const WEBHOOK_PROVIDER_WITHOUT_SECRET = 'sns';

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
  // Account states (api-notes: "a 4xx naming that state"; the codes are this project's).
  edgesReadOnly: 'ERR_SVC_7301',
  noEdgeAccess: 'ERR_SVC_7302',
  // Rules of the hosted service (api-notes' last section).
  hostportForm: 'ERR_SVC_7104',
  portRange: 'ERR_SVC_7112',
  domainPort: 'ERR_SVC_7116',
  mutualTlsNotTerminated: 'ERR_SVC_7062',
  authOnSeveralRoutes: 'ERR_SVC_7155',
  cookiePrefix: 'ERR_SVC_7042',
  circuitBreakerTrippedDuration: 'ERR_SVC_7016',
  circuitBreakerRollingWindow: 'ERR_SVC_7017',
  circuitBreakerBuckets: 'ERR_SVC_7018',
  notFound: 'ERR_SVC_404',
  methodNotAllowed: 'ERR_SVC_405',
} as const;

// ---- rules of the hosted service ---------------------------------------------------------------
//
// Each rule is one pure check, used by the local server (a 400 with the rule's code) and by the
// manifest validator (a located diagnostic), so that a manifest that validates is one the
// service accepts. A check returns undefined when the value is fine, else the violation.

export type ErrorCode = (typeof ERROR_CODE)[keyof typeof ERROR_CODE];

export interface RuleViolation {
  readonly code: ErrorCode;
  readonly message: string;
}

const DNS_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** `host:port`: a DNS name (optionally `*.` wildcard) or an IPv4 literal, then a port number. */
export const HOSTPORT_PATTERN = new RegExp(
  `^((?:\\*\\.)?${DNS_LABEL}(?:\\.${DNS_LABEL})*):(0|[1-9]\\d{0,4})$`,
);
/** A DNS name is at most 253 characters in its text form (RFC 1035's 255 octets on the wire). */
const HOSTNAME_MAX = 253;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** A host that is a domain name rather than an IP address literal (which may use any port). */
export function isDomainHost(host: string): boolean {
  return !IPV4.test(host);
}

/**
 * Hostports: the form `hostname:portnumber` (7104), a port in 1..65535 (7112), and port 443 for
 * a domain name (7116: "the domain is unsupported because it does not use port 443").
 */
export function checkHostport(value: string): RuleViolation | undefined {
  // Bounded before the pattern runs: a name's 253 characters, `:`, a 5-digit port.
  const m = value.length > HOSTNAME_MAX + 6 ? null : HOSTPORT_PATTERN.exec(value);
  if (m === null || (m[1] as string).length > HOSTNAME_MAX) {
    return {
      code: ERROR_CODE.hostportForm,
      message: `${JSON.stringify(value)} is not of the form hostname:portnumber${formHint(value)}`,
    };
  }
  const host = m[1] as string;
  const port = Number(m[2]);
  if (port < LIMITS.portMin || port > LIMITS.portMax) {
    return {
      code: ERROR_CODE.portRange,
      message: `port ${port} is out of range ${LIMITS.portMin}..${LIMITS.portMax}`,
    };
  }
  if (isDomainHost(host) && port !== 443) {
    return {
      code: ERROR_CODE.domainPort,
      message: `the domain ${host} is unsupported because it does not use port 443 (only IP addresses may use other ports)`,
    };
  }
  return undefined;
}

/** Why a hostport of an otherwise plausible shape is refused, for the message. */
function formHint(value: string): string {
  const colon = value.lastIndexOf(':');
  if (colon > HOSTNAME_MAX) return ` (a host name has at most ${HOSTNAME_MAX} characters)`;
  // `:0443` would be one more spelling of `:443`: uniqueness, compared by text, would let two
  // edges serve one address.
  if (/^0\d+$/.test(value.slice(colon + 1))) return ' (a port number has no leading zeros)';
  return '';
}

/** @internal */
export function isValidHostport(value: string): boolean {
  return checkHostport(value) === undefined;
}

/** `mutual_tls` needs TLS terminated at the edge: refused under `terminate_at: upstream` (7062). */
export function checkMutualTlsTermination(
  terminateAt: string | null | undefined,
  hasMutualTls: boolean,
): RuleViolation | undefined {
  if (!hasMutualTls || terminateAt !== 'upstream') return undefined;
  return {
    code: ERROR_CODE.mutualTlsNotTerminated,
    message:
      'mutual_tls may not be enabled when TLS is not terminated at the edge (terminate_at: upstream)',
  };
}

/** At most one route of an HTTPS edge may carry oauth, oidc or saml (7155). */
export function checkAuthRoutes(routesWithAuth: number): RuleViolation | undefined {
  if (routesWithAuth <= 1) return undefined;
  return {
    code: ERROR_CODE.authOnSeveralRoutes,
    message: `enabling OAuth, OIDC, or SAML on more than one route is not supported (${routesWithAuth} routes of this edge have one)`,
  };
}

export const COOKIE_PREFIX_PATTERN = /^[A-Za-z0-9.]*$/;

/** `cookie_prefix` of oauth, oidc and saml: letters, digits and periods only (7042). */
export function checkCookiePrefix(value: string): RuleViolation | undefined {
  if (COOKIE_PREFIX_PATTERN.test(value)) return undefined;
  return {
    code: ERROR_CODE.cookiePrefix,
    message: `cookie_prefix ${JSON.stringify(value)} may contain only letters, digits and periods`,
  };
}

/** HTTP header names (request and response headers modules): a token starting with a letter or digit. */
export const HEADER_NAME_PATTERN = /^[A-Za-z0-9][!#$%&'*+.^_`|~0-9A-Za-z-]*$/;

/** Whether `text` holds a control character (C0, including CR, LF and tab, or DEL). */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Header names and values: no CR, LF or other control characters (215). */
export function checkHeaderName(name: string): RuleViolation | undefined {
  if (HEADER_NAME_PATTERN.test(name)) return undefined;
  return {
    code: ERROR_CODE.invalidValue,
    message: `invalid header name ${JSON.stringify(name)}: must be an HTTP token (no spaces or control characters)`,
  };
}

export function checkHeaderValue(value: string): RuleViolation | undefined {
  if (!hasControlCharacter(value)) return undefined;
  return {
    code: ERROR_CODE.invalidValue,
    message: 'header values may not contain CR, LF or other control characters',
  };
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
 * User-agent filter entries are regular expressions in the hosted service's syntax, RE2 (no
 * lookaround, no backreferences, no possessive quantifiers; inline flags such as `(?i)` allowed).
 * Checked with re2js, a maintained port of RE2's parser, rather than JavaScript's RegExp, which
 * accepts much that RE2 refuses. Server and validator both use this.
 */
export function checkUserAgentPattern(pattern: string): RuleViolation | undefined {
  if (pattern.length === 0) return { code: ERROR_CODE.invalidValue, message: 'must not be empty' };
  const why = re2Problem(pattern);
  if (why === undefined) return undefined;
  return { code: ERROR_CODE.invalidValue, message: `not an RE2 regular expression: ${why}` };
}

/**
 * Why `pattern` is not an RE2 regular expression (the syntax of the traffic policy's `from`
 * fields as well), or undefined when it is one.
 */
export function re2Problem(pattern: string): string | undefined {
  try {
    re2js().compile(pattern);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
  }
}

/** @internal */
export function isValidUserAgentPattern(pattern: string): boolean {
  return checkUserAgentPattern(pattern) === undefined;
}
