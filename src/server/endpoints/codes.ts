/**
 * The cloud endpoints API's facts as the local server uses them: the ID prefix, limits, bindings
 * and schemes (imported from src/hosted/cloud-endpoints.ts: names and numbers, stated once,
 * docs/decisions/0023), the endpoint types and the error codes, which are the server's own.
 */

// The names and numbers are the API's facts, imported (docs/decisions/0023).
export {
  DROPPED_PORT_SCHEMES,
  ENDPOINT_BINDINGS as BINDINGS,
  ENDPOINT_ID_PREFIX,
  ENDPOINT_LIMITS,
  ENDPOINT_SCHEMES as SCHEMES,
  type EndpointBinding as Binding,
  type EndpointScheme as Scheme,
  IMPLIED_PORTS,
} from '../../hosted/cloud-endpoints.js';

/** The ID of an account's principal (the owner of its API key), as Refs show it. */
export const PRINCIPAL_ID_PREFIX = 'usr_';
export const ENDPOINT_TYPES = ['cloud', 'agent'] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

/**
 * Error codes of the endpoints API in this project's `ERR_SVC_<n>` form. The service reports a
 * policy error as 18002 with the 22xx detail in its message; this server answers the 22xx code
 * itself (the specification allows it), and 18002 for a policy error without a 22xx code (a
 * document that does not parse, a malformed rule, a bad config field).
 */
export const ENDPOINT_ERROR_CODE = {
  badUrl: 'ERR_SVC_18001',
  badPolicy: 'ERR_SVC_18002',
  portRequired: 'ERR_SVC_18003',
  emptyUpdate: 'ERR_SVC_18004',
  schemeChange: 'ERR_SVC_18005',
  urlInUse: 'ERR_SVC_18009',
  descriptionTooLong: 'ERR_SVC_18012',
  metadataTooLong: 'ERR_SVC_18013',
  /** The newcomer pools, the holder does not ("pooling was set to enabled when ..."). */
  poolingNotEnabledOnHolder: 'ERR_SVC_18016',
  /** The holder pools, the newcomer does not ("pooling was set to disabled when ..."). */
  poolingNotEnabled: 'ERR_SVC_18017',
  /** A kubernetes binding on a scheme it does not take. */
  kubernetesScheme: 'ERR_SVC_18018',
  /** No scheme, or one that is not https, http, tls or tcp. */
  badScheme: 'ERR_SVC_18022',
  bindingMismatch: 'ERR_SVC_18023',
  heldByEdge: 'ERR_SVC_381',
  /** The traffic policy's codes (policy-actions.md section 1.6). */
  badExpression: 'ERR_SVC_2200',
  unknownAction: 'ERR_SVC_2201',
  actionPhase: 'ERR_SVC_2202',
  configParse: 'ERR_SVC_2203',
  configValue: 'ERR_SVC_2204',
  unreachableAction: 'ERR_SVC_2207',
  headerName: 'ERR_SVC_2210',
  headerValue: 'ERR_SVC_2211',
  tooManyHeaders: 'ERR_SVC_2212',
  compressAlgorithm: 'ERR_SVC_2214',
  outOfRange: 'ERR_SVC_2215',
  ipPolicyRef: 'ERR_SVC_2216',
  badCidr: 'ERR_SVC_2217',
  tooManyEntries: 'ERR_SVC_2218',
  tooLong: 'ERR_SVC_2221',
  notMember: 'ERR_SVC_2222',
  empty: 'ERR_SVC_2223',
  badTemplate: 'ERR_SVC_2224',
  durationTooLong: 'ERR_SVC_2225',
  notUrl: 'ERR_SVC_2226',
  phaseProtocol: 'ERR_SVC_2230',
  duplicates: 'ERR_SVC_2231',
  missingElement: 'ERR_SVC_2234',
  notTerminated: 'ERR_SVC_2235',
  tooShort: 'ERR_SVC_2237',
  severalAuthActions: 'ERR_SVC_2239',
  pairedField: 'ERR_SVC_2240',
  tooManyQueryParams: 'ERR_SVC_2244',
  queryKeyTooLong: 'ERR_SVC_2245',
  queryValueTooLong: 'ERR_SVC_2246',
  varsFromVars: 'ERR_SVC_2251',
  varsFormat: 'ERR_SVC_2252',
  basicAuthUser: 'ERR_SVC_2257',
  basicAuthPassword: 'ERR_SVC_2258',
  badRegex: 'ERR_SVC_2261',
  internalTcpConnect: 'ERR_SVC_2262',
  severalGateways: 'ERR_SVC_2266',
  /** Not in the `ERR_SVC_<n>` form: the service's own code for a filter that does not parse. */
  invalidCel: 'invalid_cel_expression',
} as const;

export type EndpointErrorCode = (typeof ENDPOINT_ERROR_CODE)[keyof typeof ENDPOINT_ERROR_CODE];
