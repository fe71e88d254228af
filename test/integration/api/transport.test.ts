/**
 * Transport oddities the local Edge API server never produces (a proxy's HTML 502, a server that
 * never answers, a refused connection), against tiny raw node:http fixtures on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { createApiClient } from '../../../src/api/client.js';
import { ApiError, isOutcomeUnknown, NetworkError, TimeoutError } from '../../../src/errors.js';

import { fixtureClient } from './fixture-client.js';

const KEY = 'sk_fixture_SECRET_77';
const servers: Server[] = [];
const clients: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

async function fixture(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port nobody listens on: bind, note it, close. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function client(baseUrl: string, extra: Partial<Parameters<typeof createApiClient>[0]> = {}) {
  const made = fixtureClient(baseUrl, KEY, extra);
  clients.push(made.c);
  return made;
}

describe('transport oddities', () => {
  it('reads a proxy HTML 502 as an ApiError with a short message, retried for GET', async () => {
    let hits = 0;
    const url = await fixture((_req, res) => {
      hits++;
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>\n');
    });
    const { c, sleeps } = client(url);
    const err = await c.getTlsEdge('edgtls_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).apiMessage).toBe(
      'Bad Gateway (non-JSON body: <html> <head><title>502 Bad Gateway</title></head> <body>nginx</body></html>)',
    );
    expect(hits).toBe(3);
    expect(sleeps).toEqual([10, 10]);
  });

  it('masks known secrets in what a server echoes, before an excerpt could cut one in two', async () => {
    const secret = 'Echoed-Secret-0f9e8d7c6b5a';
    // A proxy error page that quotes the request body, the secret across the excerpt's end.
    const page = `${'x'.repeat(100)} ${secret} trailer`;
    const url = await fixture((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/html' });
      res.end(page);
    });
    const { c } = client(url, { mask: (text) => text.replaceAll(secret, '(sensitive)') });
    const err = await c.getTlsEdge('edgtls_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).apiMessage).toContain('(sensitive)');
    expect((err as ApiError).message).not.toContain(secret.slice(0, 6));
  });

  it('times a silent server out: GET retried, POST flagged outcomeUnknown at once', async () => {
    let hits = 0;
    const url = await fixture(() => {
      hits++; // never answers
    });
    const { c, responses } = client(url, { timeoutMs: 100 });
    const get = await c.getBotUser('bot_1').catch((e: unknown) => e);
    expect(get).toBeInstanceOf(TimeoutError);
    expect(get).toMatchObject({ timeoutMs: 100, outcomeUnknown: false });
    expect(hits).toBe(3);
    const post = await c.createBotUser({ name: 'x' }).catch((e: unknown) => e);
    expect(post).toBeInstanceOf(TimeoutError);
    expect(isOutcomeUnknown(post)).toBe(true);
    expect(hits).toBe(4);
    expect(responses.map((r) => r.status)).toEqual([0, 0, 0, 0]);
  });

  it('re-sends a POST whose connection was refused (nothing was sent)', async () => {
    const url = await closedPort();
    const { c, responses, sleeps } = client(url);
    const err = await c
      .createTlsEdge({ hostports: ['a.example.test:443'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ method: 'POST', outcomeUnknown: false });
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect(responses.map((r) => r.status)).toEqual([0, 0, 0]);
    expect(sleeps).toEqual([10, 10]);
  });

  it('flags a POST whose connection was reset after sending as outcomeUnknown', async () => {
    let hits = 0;
    const url = await fixture((req) => {
      hits++;
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    const { c } = client(url);
    const err = await c.createHttpsEdge({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(isOutcomeUnknown(err)).toBe(true);
    expect(hits).toBe(1);
    expect((err as Error).message).not.toContain(KEY);
  });

  it('sends the documented headers over the wire', async () => {
    let seen: Record<string, string | string[] | undefined> = {};
    let body = '';
    const url = await fixture((req, res) => {
      seen = req.headers;
      req.setEncoding('utf8');
      req.on('data', (d: string) => {
        body += d;
      });
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'bot_1',
            uri: `${url}/bot_users/bot_1`,
            name: 'ci',
            active: true,
            created_at: '2025-01-01T00:00:00Z',
          }),
        );
      });
    });
    const { c } = client(url, { userAgent: 'edgesync-test/1' });
    await c.createBotUser({ name: 'ci' });
    expect(seen).toMatchObject({
      authorization: `Bearer ${KEY}`,
      'svc-version': '2',
      'content-type': 'application/json',
      'user-agent': 'edgesync-test/1',
    });
    expect(JSON.parse(body)).toEqual({ name: 'ci' });
  });
});
