/**
 * Cloud endpoint URLs and bindings as the client checks them: parsing with the WHATWG URL
 * parser (node's `URL`), the refusals (no scheme, unknown scheme, path, query, fragment, user
 * info, a host that is no DNS name), the normalised form the service stores (lower-case scheme
 * and host, no default port for https and http), the default binding and what each binding
 * allows. Pure. The schemes, bindings and implied ports are the API's facts
 * (src/hosted/cloud-endpoints.ts); how a URL is judged is stated here.
 */

import {
  type EndpointBinding as Binding,
  DROPPED_PORT_SCHEMES as DROPPED_PORT,
  ENDPOINT_SCHEMES,
  type EndpointScheme,
  IMPLIED_PORTS as IMPLIED_PORT,
} from '../hosted/cloud-endpoints.js';

export interface EndpointUrl {
  readonly scheme: EndpointScheme;
  /** Lower-case. */
  readonly host: string;
  /** The effective port: the explicit one, else the scheme's (443 for https and tls, 80 for http). */
  readonly port: number;
  /** The normalised URL. */
  readonly url: string;
}

const DNS_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** A DNS name, optionally a `*.` wildcard (checked on what `URL` parsed, not a parser). */
const HOST_NAME = new RegExp(`^(?:\\*\\.)?${DNS_LABEL}(?:\\.${DNS_LABEL})*$`);
const INTERNAL_SUFFIX = '.internal';

/** The URL parsed and normalised, or why the service would refuse it. */
export function parseEndpointUrl(text: string): EndpointUrl | { readonly problem: string } {
  const bad = (problem: string) => ({ problem });
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) {
    return bad(`has no scheme (expected one of ${ENDPOINT_SCHEMES.join(', ')}, e.g. https://host)`);
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return bad('is not a URL');
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  if (!(ENDPOINT_SCHEMES as readonly string[]).includes(scheme)) {
    return bad(`scheme "${scheme}" is not one of ${ENDPOINT_SCHEMES.join(', ')}`);
  }
  if (parsed.username !== '' || parsed.password !== '') return bad('must not carry user info');
  if (parsed.pathname !== '' && parsed.pathname !== '/') return bad('must not have a path');
  if (text.includes('?')) return bad('must not have a query');
  if (text.includes('#')) return bad('must not have a fragment');
  const host = parsed.hostname.toLowerCase();
  if (!HOST_NAME.test(host) || host.length > 253) return bad('the host must be a DNS name');
  let port = IMPLIED_PORT[scheme];
  if (parsed.port !== '') port = Number(parsed.port);
  else if (scheme === 'tcp') return bad('a tcp URL needs an explicit port');
  if (port === undefined || port < 1 || port > 65_535) return bad('the port must be 1..65535');
  const dropPort = DROPPED_PORT.has(scheme) && port === IMPLIED_PORT[scheme];
  return {
    scheme: scheme as EndpointScheme,
    host,
    port,
    url: `${scheme}://${host}${dropPort ? '' : `:${port}`}`,
  };
}

export function isInternalHost(host: string): boolean {
  return host.endsWith(INTERNAL_SUFFIX);
}

/** The binding a URL gets when none is given: internal for a `.internal` host, else public. */
export function defaultBinding(url: EndpointUrl): Binding {
  return isInternalHost(url.host) ? 'internal' : 'public';
}

/** Why `binding` does not suit `url`, if it does not (public ports, internal hosts, kubernetes form). */
export function bindingProblem(url: EndpointUrl, binding: Binding): string | undefined {
  const internal = isInternalHost(url.host);
  if (binding === 'internal') {
    return internal ? undefined : `an internal endpoint's host must end in ${INTERNAL_SUFFIX}`;
  }
  if (internal) return `a ${INTERNAL_SUFFIX} host is always internal`;
  if (binding === 'kubernetes') {
    const form = ['http', 'tcp'].includes(url.scheme) && /^[^.*]+\.[^.]+$/.test(url.host);
    return form
      ? undefined
      : 'kubernetes takes only http://name.namespace[:port] or tcp://name.namespace:port';
  }
  const required = url.scheme === 'http' ? 80 : url.scheme === 'tcp' ? undefined : 443;
  if (required !== undefined && url.port !== required) {
    return `a public ${url.scheme} endpoint must use port ${required}`;
  }
  return undefined;
}

/** Why `text` cannot be forward-internal's target from an endpoint of `scheme`, if it cannot. */
export function forwardTargetProblem(text: string, scheme: string): string | undefined {
  const target = parseEndpointUrl(text);
  if ('problem' in target) return `${JSON.stringify(text)} ${target.problem}`;
  if (!isInternalHost(target.host))
    return `${target.url} is not an internal endpoint (a .internal host)`;
  const family = (s: string) => (s === 'https' ? 'http' : s);
  if (family(target.scheme) !== family(scheme)) {
    return `${target.url} is not of the endpoint's protocol (${scheme})`;
  }
  return undefined;
}

/**
 * The normalised form of a URL (live records carry the service's own; the planner compares
 * only this form), or the text itself when it is not an endpoint URL.
 */
export function normalizeEndpointUrl(text: string): string {
  const parsed = parseEndpointUrl(text);
  return 'problem' in parsed ? text : parsed.url;
}

/**
 * The `host:port` an endpoint URL claims, as an edge's hostport is written (lower-case):
 * `https://h` -> `h:443`, `tls://h:443` -> `h:443`, `http://h` -> `h:80`.
 */
export function endpointHostport(text: string): string | undefined {
  const parsed = parseEndpointUrl(text);
  return 'problem' in parsed ? undefined : `${parsed.host}:${parsed.port}`;
}

/** The binding the service stores for a URL sent without one. */
export function defaultEndpointBinding(text: string): Binding {
  const parsed = parseEndpointUrl(text);
  return 'problem' in parsed ? 'public' : defaultBinding(parsed);
}
