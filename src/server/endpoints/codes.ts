/**
 * The cloud endpoints API's own facts as the local server states them: ID prefix, limits,
 * bindings, schemes and error codes. The server keeps its own statement of these rules (it is
 * the oracle the controller's validation is tested against), so nothing here is imported by the
 * manifest side.
 */

export const ENDPOINT_ID_PREFIX = 'ep_';
/** The ID of an account's principal (the owner of its API key), as Refs show it. */
export const PRINCIPAL_ID_PREFIX = 'usr_';

export const SCHEMES = ['https', 'http', 'tls', 'tcp'] as const;
export type Scheme = (typeof SCHEMES)[number];
export const BINDINGS = ['public', 'internal', 'kubernetes'] as const;
export type Binding = (typeof BINDINGS)[number];
export const ENDPOINT_TYPES = ['cloud', 'agent'] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

/** The port a URL without one means; https and http drop it from the normalised URL. */
export const IMPLIED_PORTS: Readonly<Record<string, number>> = { https: 443, http: 80, tls: 443 };
export const DROPPED_PORT_SCHEMES: ReadonlySet<string> = new Set(['https', 'http']);

export const ENDPOINT_LIMITS = {
  descriptionBytes: 255,
  metadataBytes: 4096,
  headersPerAction: 10,
  volumeThresholdMax: 2_000_000_000,
  /** circuit-breaker windows: 1 s .. 2 min. */
  breakerWindowMinMs: 1_000,
  breakerWindowMaxMs: 120_000,
} as const;

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
  /** The holder pools, the newcomer does not. */
  poolingNotEnabled: 'ERR_SVC_18016',
  /** The newcomer pools, the holder does not. */
  poolingNotEnabledOnHolder: 'ERR_SVC_18017',
  badScheme: 'ERR_SVC_18022',
  bindingMismatch: 'ERR_SVC_18023',
  heldByEdge: 'ERR_SVC_381',
  unknownAction: 'ERR_SVC_2201',
  actionPhase: 'ERR_SVC_2202',
  unreachableAction: 'ERR_SVC_2207',
  notTerminated: 'ERR_SVC_2235',
  severalAuthActions: 'ERR_SVC_2239',
  /** Not in the `ERR_SVC_<n>` form: the service's own code for a filter that does not parse. */
  invalidCel: 'invalid_cel_expression',
} as const;

export type EndpointErrorCode = (typeof ENDPOINT_ERROR_CODE)[keyof typeof ENDPOINT_ERROR_CODE];
