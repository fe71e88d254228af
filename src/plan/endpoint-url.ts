/**
 * What the planner needs of a cloud endpoint's URL (the service's normalised form: lower-case
 * scheme and host, no default port for https and http): the same form for comparing, the host
 * and port it claims (which an edge may still hold), and the binding the service gives it when
 * none is sent. Pure.
 */

/** The port a URL without one means (tcp URLs always carry theirs). */
const IMPLIED_PORTS: Readonly<Record<string, number>> = { https: 443, http: 80, tls: 443 };
/** Schemes whose default port the normalised form drops. */
const DROPPED_PORTS: ReadonlySet<string> = new Set(['https', 'http']);

interface UrlParts {
  readonly scheme: string;
  readonly host: string;
  readonly port: number | undefined;
}

function partsOf(url: string): UrlParts | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/:?#]+)(?::(\d+))?\/?$/.exec(url.trim());
  if (m === null) return undefined;
  const scheme = (m[1] as string).toLowerCase();
  const port = m[3] === undefined ? IMPLIED_PORTS[scheme] : Number(m[3]);
  return { scheme, host: (m[2] as string).toLowerCase(), port };
}

/** The normalised form of an endpoint URL (the text itself when it is not one). */
export function normalizeEndpointUrl(url: string): string {
  const p = partsOf(url);
  if (p === undefined) return url;
  const drop =
    p.port === undefined || (DROPPED_PORTS.has(p.scheme) && p.port === IMPLIED_PORTS[p.scheme]);
  return `${p.scheme}://${p.host}${drop ? '' : `:${p.port}`}`;
}

/**
 * The `host:port` an endpoint URL claims, as an edge's hostport is written (lower-case):
 * `https://h` -> `h:443`, `tls://h:443` -> `h:443`, `http://h` -> `h:80`.
 */
export function endpointHostport(url: string): string | undefined {
  const p = partsOf(url);
  return p?.port === undefined ? undefined : `${p.host}:${p.port}`;
}

/** The binding the service stores when none is sent: internal for a `.internal` host. */
export function defaultEndpointBinding(url: string): string {
  return (partsOf(url)?.host ?? '').endsWith('.internal') ? 'internal' : 'public';
}
