/**
 * The production HTTP exchange (src/api/exchange.ts, undici) against raw node:http and
 * node:net fixtures on 127.0.0.1: what it reads and sends, keep-alive, abort, timeouts, and the
 * failures the transport's retry policy tells apart (refused, cut mid-body, connect timeout).
 * Every wait is for an event; nothing leaves the loopback interface.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { getEventListeners, once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createExchange, type Exchange, type HttpRequest } from '../../../src/api/exchange.js';
import type { ApiClientOptions } from '../../../src/api/types.js';
import { AbortedError, isOutcomeUnknown, NetworkError, TimeoutError } from '../../../src/errors.js';

import { fixtureClient } from './fixture-client.js';

const KEY = 'sk_exchange_SECRET_31';
const BOT = { id: 'bot_1', name: 'ci', active: true, created_at: '2025-01-01T00:00:00Z' };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Fixture {
  readonly url: string;
  readonly server: Server;
  /** TCP connections accepted so far. */
  connections: number;
}

async function fixture(handler: RequestListener): Promise<Fixture> {
  const server = createServer(handler);
  await listen(server);
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const fx: Fixture = { url: `http://127.0.0.1:${port(server)}`, server, connections: 0 };
  server.on('connection', () => {
    fx.connections += 1;
  });
  return fx;
}

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}

function port(server: Server | ReturnType<typeof createTcpServer>): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  return address.port;
}

/** A port nobody listens on: bind, note it, close. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await listen(server);
  const p = port(server);
  await new Promise((resolve) => server.close(resolve));
  return p;
}

function exchange(options: Parameters<typeof createExchange>[0] = {}): Exchange {
  const ex = createExchange(options);
  cleanups.push(() => ex.close());
  return ex;
}

function client(baseUrl: string, extra: Partial<ApiClientOptions> = {}) {
  const made = fixtureClient(baseUrl, KEY, extra);
  cleanups.push(() => made.c.close());
  return made;
}

function get(url: string, signal = new AbortController().signal): HttpRequest {
  return { method: 'GET', url, headers: { accept: 'application/json' }, body: null, signal };
}

function bot(url: string): string {
  return JSON.stringify({ ...BOT, uri: `${url}/bot_users/bot_1` });
}

/** Reads a request's body, then answers with `answer`. */
function readThen(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => answer(req, res, body));
  };
}

/** A promise of the next call of the returned function. */
function signalled<T = void>(): { promise: Promise<T>; fire: (value: T) => void } {
  let fire: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

/**
 * Resolves once the head of the answer to the first request to `path` has arrived at the
 * client (undici's `undici:request:headers` channel fires then, before the body).
 */
function responseHead(path: string): Promise<void> {
  const { promise, fire } = signalled();
  const onMessage = (message: unknown) => {
    const { request } = message as { request: { path: string } };
    if (request.path !== path) return;
    unsubscribe('undici:request:headers', onMessage);
    fire();
  };
  subscribe('undici:request:headers', onMessage);
  cleanups.push(async () => unsubscribe('undici:request:headers', onMessage));
  return promise;
}

/** Answers with the head and the first bytes of a longer body, then holds the rest. */
function partialBody(arrived: (res: ServerResponse) => void): RequestListener {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"id":"bot_1",', () => arrived(res));
  };
}

describe('exchange: what it reads and sends', () => {
  it('reads status, headers and a UTF-8 body split inside a character', async () => {
    const text = JSON.stringify({ msg: 'déjà vu 🚀', n: 1 });
    const bytes = Buffer.from(text, 'utf8');
    const cut = bytes.indexOf(0xf0) + 2; // inside the 4-byte emoji
    const fx = await fixture((_req, res) => {
      res.writeHead(201, {
        'content-type': 'application/json',
        'svc-operation-id': 'op_1',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.write(bytes.subarray(0, cut), () => res.end(bytes.subarray(cut)));
    });
    const res = await exchange().exchange(get(`${fx.url}/x`));
    expect(res.status).toBe(201);
    expect(res.headers['svc-operation-id']).toBe('op_1');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.text).toBe(text);
    expect(JSON.parse(res.text)).toEqual({ msg: 'déjà vu 🚀', n: 1 });
  });

  it('drops a leading byte order mark', async () => {
    const fx = await fixture((_req, res) => {
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]));
    });
    expect((await exchange().exchange(get(fx.url))).text).toBe('{"a":1}');
  });

  it('sends the body with its content-length in bytes, and no length without a body', async () => {
    const seen: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];
    const fx = await fixture(
      readThen((req, res, body) => {
        seen.push({ method: req.method ?? '', headers: req.headers, body });
        res.writeHead(req.method === 'DELETE' ? 204 : 200);
        res.end();
      }),
    );
    const ex = exchange();
    const body = JSON.stringify({ description: 'café ✓' });
    const signal = new AbortController().signal;
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };
    await ex.exchange({ method: 'PATCH', url: `${fx.url}/e`, headers, body, signal });
    await ex.exchange({ method: 'DELETE', url: `${fx.url}/e`, headers: {}, body: null, signal });
    expect(seen[0]?.headers).toMatchObject({
      'content-length': String(Buffer.byteLength(body)),
      'content-type': 'application/json',
      authorization: `Bearer ${KEY}`,
    });
    expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
    expect(seen[0]?.body).toBe(body);
    expect(seen[1]?.method).toBe('DELETE');
    expect(seen[1]?.headers['content-length']).toBeUndefined();
    expect(seen[1]?.headers['transfer-encoding']).toBeUndefined();
  });

  it('round-trips a JSON record through the client', async () => {
    const fx = await fixture((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/bot_users/bot_1' ? bot(fx.url) : '{}');
    });
    const { c, responses } = client(fx.url);
    await expect(c.getBotUser('bot_1')).resolves.toMatchObject(BOT);
    expect(responses.map((r) => r.status)).toEqual([200]);
  });

  it('keeps connections alive: sequential calls reuse the pool', async () => {
    const ports = new Set<number>();
    const fx = await fixture((req, res) => {
      ports.add(req.socket.remotePort ?? 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(bot(fx.url));
    });
    const { c } = client(fx.url);
    for (let i = 0; i < 8; i++) await c.getBotUser('bot_1');
    // undici hands a connection back to its pool a tick after the body ends: the next call may
    // open a second one, never more while calls are sequential.
    expect(fx.connections).toBeLessThanOrEqual(2);
    expect(ports.size).toBe(fx.connections);
  });

  it('removes its abort listener whatever the outcome', async () => {
    const fx = await fixture((req, res) => {
      if (req.url === '/cut') res.socket?.destroy();
      else res.end('ok');
    });
    const ex = exchange();
    const { signal } = new AbortController();
    await ex.exchange(get(`${fx.url}/ok`, signal));
    await expect(ex.exchange(get(`${fx.url}/cut`, signal))).rejects.toThrow();
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('exchange: abort and timeouts', () => {
  it('rejects with AbortedError when aborted before the answer', async () => {
    const arrived = signalled<IncomingMessage>();
    const fx = await fixture((req) => arrived.fire(req)); // never answers
    const { c, responses } = client(fx.url);
    const controller = new AbortController();
    const pending = c.getBotUser('bot_1', { signal: controller.signal });
    const req = await arrived.promise;
    const cut = once(req.socket, 'close'); // the request's connection is cut, not left hanging
    controller.abort(new Error('shutdown'));
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(responses.map((r) => r.status)).toEqual([0]);
    await cut;
  });

  it('rejects with AbortedError when aborted during the body', async () => {
    const serverSocket = signalled<Socket>();
    const fx = await fixture(partialBody((res) => serverSocket.fire(res.socket as Socket)));
    const head = responseHead('/bot_users/bot_1');
    const { c } = client(fx.url);
    const controller = new AbortController();
    const pending = c.getBotUser('bot_1', { signal: controller.signal });
    await head;
    // The cut response's connection is closed, not handed back to the pool.
    const cut = once(await serverSocket.promise, 'close');
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    await cut;
  });

  it('rejects an exchange whose signal already fired without sending it', async () => {
    const fx = await fixture((_req, res) => res.end());
    const reason = new Error('stop');
    await expect(exchange().exchange(get(fx.url, AbortSignal.abort(reason)))).rejects.toBe(reason);
    expect(fx.connections).toBe(0);
  });

  it('times out a body that stops coming (TimeoutError), GET retried', async () => {
    let hits = 0;
    const fx = await fixture(
      partialBody(() => {
        hits += 1;
      }),
    );
    const { c, responses } = client(fx.url, { timeoutMs: 250 });
    const err = await c.getBotUser('bot_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ timeoutMs: 250, outcomeUnknown: false });
    expect(hits).toBe(3);
    expect(responses.map((r) => r.status)).toEqual([0, 0, 0]);
  });
});

describe('exchange: failures the retry policy tells apart', () => {
  it('rejects a refused connection with its code; the client re-sends a POST (not sent)', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    await expect(exchange().exchange(get(url))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const { c, responses, sleeps } = client(url);
    const err = await c.createBotUser({ name: 'ci' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ method: 'POST', outcomeUnknown: false });
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect(responses.map((r) => r.status)).toEqual([0, 0, 0]);
    expect(sleeps).toEqual([10, 10]);
  });

  it.each([
    ['with a content-length', { 'content-length': '1000' }],
    ['chunked', {}],
  ])('rejects a body cut mid-way (%s): never a whole answer', async (_n, lengthHeader) => {
    const fx = await fixture((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...lengthHeader });
      res.write('{"id":"bot_1"}', () => res.socket?.destroy());
    });
    await expect(exchange().exchange(get(fx.url))).rejects.toMatchObject({
      code: 'UND_ERR_SOCKET',
    });
  });

  it('a socket destroyed mid-body: GET retried to success, POST flagged outcomeUnknown', async () => {
    let hits = 0;
    const fx = await fixture(
      readThen((_req, res) => {
        hits += 1;
        res.writeHead(hits === 2 ? 200 : 201, { 'content-type': 'application/json' });
        if (hits === 2) {
          res.end(bot(fx.url));
          return;
        }
        res.write(bot(fx.url).slice(0, 20), () => res.socket?.destroy());
      }),
    );
    const { c, responses } = client(fx.url);
    await expect(c.getBotUser('bot_1')).resolves.toMatchObject(BOT);
    expect(responses.map((r) => r.status)).toEqual([0, 200]);

    const err = await c.createBotUser({ name: 'ci' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(isOutcomeUnknown(err)).toBe(true);
    expect(hits).toBe(3); // the POST was not re-sent
    expect((err as Error).message).not.toContain(KEY);
  });

  it('uses TLS for an https: URL (a plain-HTTP server fails the handshake)', async () => {
    const fx = await fixture((_req, res) => res.end('plain'));
    const firstBytes = signalled<Buffer>();
    fx.server.on('clientError', (err: Error & { rawPacket?: Buffer }, socket: Socket) => {
      firstBytes.fire(err.rawPacket ?? Buffer.alloc(0));
      socket.destroy();
    });
    const { c } = client(fx.url.replace('http:', 'https:'), { retry: false });
    const err = await c.getBotUser('bot_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toMatch(/^GET \/bot_users\/bot_1: network error: /);
    // A TLS handshake record (0x16), version 3.x: the ClientHello, not an HTTP request line.
    expect([...(await firstBytes.promise).subarray(0, 2)]).toEqual([0x16, 0x03]);
  });

  it('a TLS handshake that never completes is a connect timeout: a POST is re-sent', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket)); // never speaks TLS
    await listen(silent);
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const url = `https://127.0.0.1:${port(silent)}`;
    const http = exchange({ connectTimeoutMs: 50 });
    await expect(http.exchange(get(url))).rejects.toMatchObject({
      code: 'UND_ERR_CONNECT_TIMEOUT',
    });
    const { c, responses } = client(url, { http: http.exchange, timeoutMs: 10_000 });
    const err = await c.createBotUser({ name: 'ci' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ method: 'POST', outcomeUnknown: false });
    expect((err as Error).message).toMatch(/UND_ERR_CONNECT_TIMEOUT: Connect Timeout Error/);
    expect(responses.map((r) => r.status)).toEqual([0, 0, 0]);
  });

  it('a connected server that answers late is not a connect timeout', async () => {
    const fx = await fixture((_req, res) => {
      setTimeout(() => res.end('late'), 500);
    });
    const res = await exchange({ connectTimeoutMs: 250 }).exchange(get(fx.url));
    expect(res.text).toBe('late');
  });
});

describe('exchange: close', () => {
  it('destroys in-flight and idle sockets; later exchanges reject', async () => {
    const arrived = signalled();
    const fx = await fixture((req, res) => {
      if (req.url === '/hang') arrived.fire();
      else res.end('ok');
    });
    const serverSockets: Socket[] = [];
    fx.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    const ex = exchange();
    const hanging = ex.exchange(get(`${fx.url}/hang`)).catch((e: unknown) => e);
    await arrived.promise;
    await ex.exchange(get(`${fx.url}/ok`)); // a second socket, idle afterwards
    expect(serverSockets).toHaveLength(2);
    const allClosed = Promise.all(serverSockets.map((socket) => once(socket, 'close')));
    await ex.close();
    expect(await hanging).toMatchObject({ code: 'UND_ERR_DESTROYED' });
    await allClosed;
    await expect(ex.exchange(get(`${fx.url}/ok`))).rejects.toThrow(/destroyed/);
    expect(fx.connections).toBe(2);
  });
});
