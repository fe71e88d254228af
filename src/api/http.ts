/**
 * The client's HTTP port: one exchange, a request in and the whole answer (status, headers, body
 * text) out. The transport (./transport.ts) builds retries, timeouts and errors on it; tests
 * drive the client through other implementations (undici's MockAgent, test/unit/api).
 *
 * The default is Node's own `http`/`https` with keep-alive agents: undici cost a 10,000-edge
 * `edgesync plan` 0.1-0.15 s more CPU (its import, and its llhttp parser, WebAssembly that V8
 * compiles on helper threads). See ARCHITECTURE.md, "Edge API client".
 */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { ConnectTimeoutError } from '../errors.js';
import type { HttpMethod } from './client.js';

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
  /** The whole body, decoded as UTF-8. */
  readonly text: string;
}

/**
 * One HTTP exchange. Resolves only with a complete answer; rejects with the underlying error
 * (Node's `code` kept: ECONNREFUSED, ECONNRESET...) otherwise, and with the signal's reason when
 * it is aborted.
 */
export type HttpExchange = (request: HttpRequest) => Promise<HttpResponse>;

export interface NodeExchange {
  readonly exchange: HttpExchange;
  /** Destroys every socket, idle or in use (their exchanges reject); later exchanges reject. */
  close(): Promise<void>;
}

export interface NodeExchangeOptions {
  /** How long an idle keep-alive socket is kept; a server's shorter `Keep-Alive` hint wins. */
  readonly keepAliveMs?: number | undefined;
  /** How long setting up a new connection (DNS, TCP, TLS) may take. */
  readonly connectTimeoutMs?: number | undefined;
}

/** As undici's `keepAliveTimeout` was. */
const DEFAULT_KEEP_ALIVE_MS = 30_000;
/** As undici's connect timeout was: a connection that hangs fails early, as "not sent". */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** The default exchange on `node:http` and `node:https`, chosen by the URL's protocol. */
export function createNodeExchange(options: NodeExchangeOptions = {}): NodeExchange {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  // The agent's `timeout` is what ends idle sockets (Node lowers it to a server's Keep-Alive
  // hint minus a second); a socket in use only emits 'timeout', which nothing listens to:
  // the transport times exchanges itself.
  const agentOptions = { keepAlive: true, timeout: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);
  let closed = false;

  const exchange: HttpExchange = async (request) => {
    if (closed) throw new Error('the HTTP client is closed');
    // Parsed once: given a URL object, Node does not parse the string again.
    const url = new URL(request.url);
    const secure = url.protocol === 'https:';
    const send = (init: RequestOptions) =>
      secure
        ? httpsRequest(url, { ...init, agent: https })
        : httpRequest(url, { ...init, agent: http });
    return exchangeOnce(request, send, secure, connectTimeoutMs);
  };

  return {
    exchange,
    close: async () => {
      closed = true;
      http.destroy();
      https.destroy();
    },
  };
}

type Send = (init: RequestOptions) => ClientRequest;

function exchangeOnce(
  request: HttpRequest,
  send: Send,
  secure: boolean,
  connectTimeoutMs: number,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const { signal } = request;
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const body = request.body === null ? undefined : Buffer.from(request.body, 'utf8');
    const headers =
      body === undefined
        ? request.headers
        : { ...request.headers, 'content-length': String(body.byteLength) };
    const req = send({ method: request.method, headers });
    let res: IncomingMessage | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const settle = () => {
      settled = true;
      clearTimeout(connectTimer);
      signal.removeEventListener('abort', onAbort);
    };
    /** The first failure wins; both streams are destroyed so their socket is not reused. */
    const fail = (err: unknown) => {
      if (settled) return;
      settle();
      res?.destroy();
      req.destroy();
      reject(err);
    };
    const onAbort = () => fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });

    // Listeners stay for the request's life: an 'error' after the first failure is ignored,
    // never unhandled.
    req.on('error', fail);
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already; one handed over after a failure is not ours.
      if (settled || req.reusedSocket) return;
      connectTimer = setTimeout(
        () => fail(new ConnectTimeoutError(new URL(request.url).host, connectTimeoutMs)),
        connectTimeoutMs,
      );
      whenConnected(socket, secure, () => clearTimeout(connectTimer));
    });
    req.on('response', (response) => {
      res = response;
      // Decoded as it arrives (a character split between chunks is kept whole): collecting the
      // raw Buffers, memory outside V8's heap until a collection frees them, raised a
      // 10,000-edge plan's peak RSS by 14 MiB (21 MB of list answers).
      const chunks: string[] = [];
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => chunks.push(chunk));
      // A socket that dies mid-body destroys the response with ECONNRESET ('aborted').
      response.on('error', fail);
      response.on('end', () => {
        if (settled) return;
        if (!response.complete) {
          fail(truncated());
          return;
        }
        settle();
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: withoutBom(chunks.join('')),
        });
      });
      // Closed with neither 'end' nor 'error': a truncated body is never taken for a whole one.
      // 'close' follows every answer: the error (and its stack) is made only when it is one.
      response.on('close', () => {
        if (!settled) fail(truncated());
      });
    });
    req.end(body);
  });
}

function truncated(): Error {
  return new Error('the connection closed before the response was complete');
}

/**
 * Calls `connected` once a new socket can carry the request: TCP connected, and for `https:`
 * the TLS handshake done. Until then no byte of the request has left.
 */
function whenConnected(socket: Socket, secure: boolean, connected: () => void): void {
  if (secure) socket.once('secureConnect', connected);
  else if (socket.connecting) socket.once('connect', connected);
  else connected();
}

/** The text without a leading byte order mark, as undici's `body.text()` decoded it. */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
