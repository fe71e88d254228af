/**
 * A loopback HTTP proxy in front of the local server that answers a share of requests with 429
 * (`Retry-After: 0`, not forwarded): the server's own rate-limit knob only produces waits of a
 * second or more, too slow for a test that wants many 429s.
 */
import {
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** Sends `req` on to `upstream` (its body: `body` if read already, else piped) and its answer back. */
function forward(upstream: URL, req: IncomingMessage, res: ServerResponse, body?: Buffer): void {
  const out = request(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
    },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  // The server resets some connections on purpose: pass the reset on.
  out.on('error', () => res.destroy());
  if (body === undefined) req.pipe(out);
  else out.end(body);
}

/** Listens on a loopback port of the system's choosing: the proxy's URL and how to close it. */
async function listenLoopback(
  server: Server,
): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startThrottlingProxy(
  target: string,
  rate: number,
  /** Seeded by the caller: which requests are refused is part of the test's input. */
  random: () => number,
): Promise<{ url: string; throttled: () => number; close: () => Promise<void> }> {
  const upstream = new URL(target);
  let throttled = 0;
  const server = createServer((req, res) => {
    if (random() < rate) {
      throttled += 1;
      req.resume();
      const body = JSON.stringify({
        error_code: 'ERR_SVC_226',
        status_code: 429,
        msg: 'injected: rate limited',
        details: { operation_id: 'op_proxy' },
      });
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(body);
      return;
    }
    forward(upstream, req, res);
  });
  return { ...(await listenLoopback(server)), throttled: () => throttled };
}

/**
 * A loopback HTTP proxy in front of the local server that lets another actor act first: before
 * each request is forwarded, `before(method, path, body)` runs (and may itself call the server),
 * so a write can race the one in flight. Every answer is the server's own.
 */
export async function startRacingProxy(
  target: string,
  before: (method: string, path: string, body: string) => Promise<void>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      before(req.method ?? 'GET', req.url ?? '/', body.toString('utf8')).then(
        () => forward(upstream, req, res, body),
        () => res.destroy(),
      );
    });
  });
  return listenLoopback(server);
}
