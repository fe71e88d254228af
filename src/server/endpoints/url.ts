/**
 * Endpoint URLs and bindings (cloud-endpoints.md, section 2): parsing with the WHATWG URL
 * parser (node's `URL`), the refusals (no scheme, unknown scheme, path, query, fragment, user
 * info), the normalised form the service stores and returns, the default binding and what each
 * binding allows. Pure.
 */
import { RequestError } from '../errors.js';
import {
  type Binding,
  ENDPOINT_ERROR_CODE as CODE,
  DROPPED_PORT_SCHEMES,
  type EndpointErrorCode,
  IMPLIED_PORTS,
  SCHEMES,
  type Scheme,
} from './codes.js';

export interface EndpointUrl {
  readonly scheme: Scheme;
  /** Lower-case. */
  readonly host: string;
  /** The effective port: the explicit one, else the scheme's (443 for https and tls, 80 for http). */
  readonly port: number;
  /** The normalised URL: lower-case scheme and host, no default port for https and http. */
  readonly url: string;
}

const SCHEME_SET: ReadonlySet<string> = new Set(SCHEMES);
const DNS_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** A DNS name, optionally a `*.` wildcard (URL syntax, not a parser: `URL` did the parsing). */
const HOST_NAME = new RegExp(`^(?:\\*\\.)?${DNS_LABEL}(?:\\.${DNS_LABEL})*$`);
const INTERNAL_SUFFIX = '.internal';

function bad(message: string, code: EndpointErrorCode = CODE.badUrl): RequestError {
  return new RequestError(400, code, `url: ${message}`);
}

/** Parses and normalises an endpoint URL, or throws the 400 the service answers. */
export function parseEndpointUrl(text: string): EndpointUrl {
  const shown = JSON.stringify(text.slice(0, 200));
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) {
    throw bad(
      `${shown} has no scheme (expected one of ${SCHEMES.join(', ')}, e.g. https://host)`,
      CODE.badScheme,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw bad(`${shown} is not a URL`);
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  if (!SCHEME_SET.has(scheme)) {
    throw bad(
      `scheme ${JSON.stringify(scheme)} is not one of ${SCHEMES.join(', ')}`,
      CODE.badScheme,
    );
  }
  if (parsed.username !== '' || parsed.password !== '') throw bad(`${shown} has user info`);
  if (parsed.pathname !== '' && parsed.pathname !== '/') throw bad(`${shown} has a path`);
  if (text.includes('?')) throw bad(`${shown} has a query`);
  if (text.includes('#')) throw bad(`${shown} has a fragment`);
  const host = parsed.hostname.toLowerCase();
  if (!HOST_NAME.test(host) || host.length > 253) {
    throw bad(`${shown}: the host must be a DNS name`);
  }
  let port = IMPLIED_PORTS[scheme];
  if (parsed.port !== '') {
    port = Number(parsed.port);
  } else if (scheme === 'tcp') {
    throw bad(`${shown}: a tcp URL needs an explicit port`, CODE.portRequired);
  }
  if (port === undefined || port < 1 || port > 65_535) {
    throw bad(`${shown}: the port must be 1..65535`);
  }
  const dropPort = DROPPED_PORT_SCHEMES.has(scheme) && port === IMPLIED_PORTS[scheme];
  return {
    scheme: scheme as Scheme,
    host,
    port,
    url: `${scheme}://${host}${dropPort ? '' : `:${port}`}`,
  };
}

export function isInternalHost(host: string): boolean {
  return host.endsWith(INTERNAL_SUFFIX);
}

/** The binding a URL gets when none is sent: internal for a `.internal` host, else public. */
export function defaultBinding(url: EndpointUrl): Binding {
  return isInternalHost(url.host) ? 'internal' : 'public';
}

/** What each binding allows (18023), with the port rules of public endpoints. */
export function checkBinding(url: EndpointUrl, binding: Binding): void {
  const mismatch = (why: string) =>
    new RequestError(400, CODE.bindingMismatch, `bindings: ${binding}: ${why} (url ${url.url})`);
  const internal = isInternalHost(url.host);
  if (binding === 'internal') {
    if (!internal) throw mismatch(`an internal endpoint's host must end in ${INTERNAL_SUFFIX}`);
    return;
  }
  if (internal) throw mismatch(`a ${INTERNAL_SUFFIX} host is always internal`);
  if (binding === 'kubernetes') {
    if (!['http', 'tcp'].includes(url.scheme)) {
      throw new RequestError(
        400,
        CODE.kubernetesScheme,
        `bindings: kubernetes: a kubernetes endpoint is http or tcp, not ${url.scheme} (url ${url.url})`,
      );
    }
    if (!/^[^.*]+\.[^.]+$/.test(url.host)) {
      throw mismatch('only http://name.namespace[:port] or tcp://name.namespace:port');
    }
    return;
  }
  const required = url.scheme === 'http' ? 80 : url.scheme === 'tcp' ? undefined : 443;
  if (required !== undefined && url.port !== required) {
    throw mismatch(`a public ${url.scheme} endpoint must use port ${required}`);
  }
}
