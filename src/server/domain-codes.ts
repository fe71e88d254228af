/**
 * The facts of the account resources this server adds beside edges and endpoints (reserved
 * domains, certificate authorities, service users; account-resources.md sections 1, 4 and 5),
 * as the local server states them: ID prefixes, the service's own domains, where CNAME records
 * must point, the host-name and PEM error codes, limits, and each kind's filterable fields.
 * The server keeps its own statement of these rules (it is the oracle the controller is tested
 * against), so nothing here is imported by the manifest side.
 */

export const DOMAIN_ID_PREFIX = 'rd_';
/** The reserved domains' collection, whose path a domain's Ref names. */
export const DOMAINS_PATH = '/reserved_domains';
export const CA_ID_PREFIX = 'ca_';
/** Uploaded certificates, and the certificates the service issues for managed domains. */
export const CERTIFICATE_ID_PREFIX = 'cert_';

/**
 * The service's own domains: a reserved name below one of them needs no certificate of its
 * own (the service's wildcard certificate covers it), has no CNAME target and takes no
 * certificate management policy (439). The names themselves belong to the service.
 */
export const SERVICE_DOMAINS = ['svc.app', 'svc.dev'] as const;

/** Where the CNAME records of custom domains point: `<random>.<account tag>.<this>`. */
export const CNAME_TARGET_DOMAIN = 'cname-target.svc.dev';

/**
 * Top-level names that never resolve publicly (RFC 6761, 6762, 7686, 8375, 9476 and the
 * `.internal` name private networks use): reserving a name under one is 411.
 */
export const SPECIAL_USE_TLDS: ReadonlySet<string> = new Set([
  'test',
  'example',
  'invalid',
  'localhost',
  'local',
  'onion',
  'alt',
  'internal',
  'arpa',
]);

/**
 * A few public suffixes of more than one label: a name equal to one is not fully qualified
 * (448), as a bare TLD is not. A small built-in notion, not the Public Suffix List: the local
 * server only needs to refuse what a user plausibly types by mistake.
 */
export const MULTI_LABEL_PUBLIC_SUFFIXES: ReadonlySet<string> = new Set([
  'co.uk',
  'org.uk',
  'ac.uk',
  'gov.uk',
  'com.au',
  'net.au',
  'org.au',
  'co.nz',
  'co.jp',
  'com.br',
  'com.cn',
  'co.in',
  'github.io',
]);

/** Where a domain may resolve to: `global` or a point-of-presence code. */
export const RESOLVES_TO = ['global', 'us', 'eu', 'ap', 'au', 'sa', 'jp', 'in'] as const;

export const CERTIFICATE_AUTHORITIES = ['letsencrypt'] as const;
export const PRIVATE_KEY_TYPES = ['ecdsa', 'rsa'] as const;
/** The only region a domain has: domains are served globally. */
export const DOMAIN_REGION = 'global';

export const ACCOUNT_RESOURCE_LIMITS = {
  descriptionBytes: 255,
  metadataBytes: 4096,
  domainNameMax: 253,
  domainLabelMax: 63,
  /** Default limits on reserved domains per account (415) and wildcard ones among them (418). */
  domainsPerAccount: 200,
  wildcardDomainsPerAccount: 20,
  /** How long an issued certificate lasts before renewal is due. */
  certificateRenewalDays: 60,
} as const;

/** Error codes of reserved domains and certificate authorities, `ERR_SVC_<n>` as elsewhere. */
export const DOMAIN_ERROR_CODE = {
  wildcardHostNotReserved: 'ERR_SVC_318',
  hostNotReserved: 'ERR_SVC_319',
  wildcardNotFirstLabel: 'ERR_SVC_402',
  wildcardPartialLabel: 'ERR_SVC_403',
  badCharacter: 'ERR_SVC_406',
  leadingDashOrDot: 'ERR_SVC_407',
  trailingDashOrDot: 'ERR_SVC_408',
  emptyLabel: 'ERR_SVC_409',
  doubleDash: 'ERR_SVC_410',
  tldNotPublic: 'ERR_SVC_411',
  alreadyReserved: 'ERR_SVC_413',
  otherAccount: 'ERR_SVC_414',
  tooManyDomains: 'ERR_SVC_415',
  wildcardOverlapsOtherAccount: 'ERR_SVC_417',
  tooManyWildcards: 'ERR_SVC_418',
  wildcardNeedsPlan: 'ERR_SVC_419',
  badPunycode: 'ERR_SVC_429',
  underscore: 'ERR_SVC_438',
  policyOnServiceDomain: 'ERR_SVC_439',
  stillReferenced: 'ERR_SVC_446',
  notFullyQualified: 'ERR_SVC_448',
  regionChange: 'ERR_SVC_451',
  labelTooLong: 'ERR_SVC_513',
  nameTooLong: 'ERR_SVC_514',
  badPemHeaders: 'ERR_SVC_1910',
  notCertificatePem: 'ERR_SVC_1911',
  severalPemBlocks: 'ERR_SVC_1912',
  notCa: 'ERR_SVC_1913',
  noPem: 'ERR_SVC_1919',
  unparseableCertificate: 'ERR_SVC_1920',
} as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODE)[keyof typeof DOMAIN_ERROR_CODE];

/**
 * The fields a list `filter` may name, per kind (`certificate.id`: that member only). A filter
 * naming another field is a 400.
 */
export const FILTERABLE_FIELDS = {
  reservedDomains: new Set([
    'id',
    'created_at',
    'description',
    'metadata',
    'domain',
    'region',
    'cname_target',
    'certificate.id',
    'acme_challenge_cname_target',
  ]),
  certificateAuthorities: new Set([
    'id',
    'created_at',
    'description',
    'metadata',
    'subject_common_name',
    'not_before',
    'not_after',
  ]),
} satisfies Record<string, ReadonlySet<string>>;
