/**
 * The cloud endpoints API's facts (cloud-endpoints.md, sections 1 and 2), beside the Edge API's
 * (./edge-api.ts) and the traffic policy's (./policy-actions.ts): the ID prefix, the schemes,
 * the bindings, the port a URL without one means and the limits of an endpoint's own fields.
 * Names and numbers only: how a URL or a binding is judged is stated by the client
 * (src/manifest/endpoint-url.ts) and by the local server (src/server/endpoints/url.ts), each on
 * its own (docs/decisions/0023). Pure.
 */

export const ENDPOINT_ID_PREFIX = 'ep_';

export const ENDPOINT_SCHEMES = ['https', 'http', 'tls', 'tcp'] as const;
export type EndpointScheme = (typeof ENDPOINT_SCHEMES)[number];

/** The bindings an endpoint may be given (at most one). */
export const ENDPOINT_BINDINGS = ['public', 'internal', 'kubernetes'] as const;
export type EndpointBinding = (typeof ENDPOINT_BINDINGS)[number];

/** The port a URL without one means; https and http drop it from the normalised URL. */
export const IMPLIED_PORTS: Readonly<Record<string, number>> = { https: 443, http: 80, tls: 443 };
export const DROPPED_PORT_SCHEMES: ReadonlySet<string> = new Set(['https', 'http']);

/** An endpoint's own fields (a traffic policy's bounds are ./policy-actions.ts'). */
export const ENDPOINT_LIMITS = {
  descriptionBytes: 255,
  metadataBytes: 4096,
} as const;
