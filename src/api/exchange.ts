/**
 * The client's HTTP port: one exchange, a request in and the whole answer (status, headers, body
 * text) out. The transport (./transport.ts) builds retries, timeouts and errors on it.
 *
 * The exchange is undici's: a keep-alive connection pool per origin, connect / headers / body
 * timeouts, abort through an AbortSignal, and errors whose `code` tells a connection that was
 * never made (`ECONNREFUSED`, `UND_ERR_CONNECT_TIMEOUT`: nothing was sent) from one lost after
 * the request left (`UND_ERR_SOCKET`, `ECONNRESET`: the outcome is unknown). Its dispatcher is
 * undici's `EnvHttpProxyAgent`, so `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (and their
 * lower-case forms, which win) are honoured as curl honours them. Why undici:
 * docs/decisions/0038-the-client-on-undici-behind-one-exchange-port.md.
 */
import { EnvHttpProxyAgent, request } from 'undici';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface HttpRequest {
  readonly method: HttpMethod;
  /** Absolute `http:` or `https:` URL, query included. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent whole, with its `content-length`; null sends no body. */
  readonly body: string | null;
  /** Aborting rejects the exchange at once, before the answer or during its body. */
  readonly signal: AbortSignal;
}

export interface HttpResponse {
  readonly status: number;
  /** Lower-case names; a repeated header may be an array. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The whole body, decoded as UTF-8 (a leading byte order mark dropped). */
  readonly text: string;
}

/**
 * One HTTP exchange. Resolves only with a complete answer; rejects with the underlying error
 * (its `code` kept) otherwise, and with the signal's reason when it is aborted.
 */
export type HttpExchange = (request: HttpRequest) => Promise<HttpResponse>;

export interface Exchange {
  readonly exchange: HttpExchange;
  /** Destroys every connection, idle or in use (their exchanges reject); later ones reject. */
  close(): Promise<void>;
}

export interface ExchangeOptions {
  /** How long an idle keep-alive connection is kept; a server's shorter `Keep-Alive` hint wins. */
  readonly keepAliveMs?: number | undefined;
  /** How long setting up a new connection (DNS, TCP, TLS, a proxy's tunnel) may take. */
  readonly connectTimeoutMs?: number | undefined;
  /** How long the answer's head, then each gap in its body, may take. */
  readonly readTimeoutMs?: number | undefined;
}

const DEFAULT_KEEP_ALIVE_MS = 30_000;
/** A connection that hangs fails early, as "not sent" (safe to re-send, even a POST). */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** The transport's own per-attempt timeout normally fires first; this is the floor under it. */
const DEFAULT_READ_TIMEOUT_MS = 60_000;

/** The default exchange: undici over an environment-configured proxy agent. */
export function createExchange(options: ExchangeOptions = {}): Exchange {
  const readTimeoutMs = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  const dispatcher = new EnvHttpProxyAgent({
    keepAliveTimeout: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: readTimeoutMs,
    bodyTimeout: readTimeoutMs,
    connect: { timeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS },
  });

  const exchange: HttpExchange = async ({ method, url, headers, body, signal }) => {
    // undici would open (or pick) a connection before it looks at the signal.
    signal.throwIfAborted();
    const res = await request(url, { dispatcher, method, headers, body, signal });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };

  return { exchange, close: () => dispatcher.destroy() };
}
