/**
 * Notifications over real loopback sockets: a redirect is never followed (the event is not
 * re-posted where a 307 points), every value is escaped for Slack's text, and the HTTP client
 * is the API client's (its proxy settings honoured).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonEvent } from '../../../src/daemon/events.js';
import { createNotifier, notificationBody } from '../../../src/daemon/notify.js';
import { createLogger } from '../../../src/log.js';
import { realSleep } from '../../../src/retry.js';
import { logCapture } from './helpers.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly body: string;
}

/** A loopback server answering `answer(req)`; every request it got, with its body. */
async function receiver(
  answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string> } = () => ({
    status: 200,
  }),
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, body });
      const { status, headers = {} } = answer(req);
      res.writeHead(status, headers).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, received };
}

const event = (overrides: Partial<DaemonEvent> = {}): DaemonEvent => ({
  time: '2026-01-01T00:00:00Z',
  type: 'drift',
  resource: 'https_edge.shop',
  message: 'metadata.team differs',
  revision: null,
  ...overrides,
});

describe('notifications', () => {
  it('never follow a redirect: a 307 does not re-post the event elsewhere', async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(() => ({
      status: 307,
      headers: { location: elsewhere.url },
    }));
    const capture = logCapture();
    const notifier = createNotifier({
      receivers: [{ url: redirecting.url, format: 'json' }],
      logger: createLogger({ level: 'warn', destination: capture.destination }),
      sleep: async () => {},
    });
    notifier.send(event());
    await notifier.idle();
    await notifier.close();
    expect(redirecting.received).toHaveLength(1);
    expect(elsewhere.received).toEqual([]);
    expect(capture.lines).toContainEqual(
      expect.objectContaining({ status: 307, msg: expect.stringMatching(/redirect.*never/) }),
    );
  });

  it("retry a 429 or 5xx after the receiver's Retry-After, else a doubling backoff", async () => {
    let answered = 0;
    const hook = await receiver(() => {
      answered += 1;
      if (answered === 1) return { status: 429, headers: { 'retry-after': '7' } };
      if (answered === 2) return { status: 503 };
      return { status: 204 };
    });
    const waits: number[] = [];
    const notifier = createNotifier({
      receivers: [{ url: hook.url, format: 'json' }],
      backoffMs: 1000,
      sleep: async (ms) => void waits.push(ms),
    });
    notifier.send(event());
    await notifier.idle();
    await notifier.close();
    expect(hook.received).toHaveLength(3);
    expect(waits).toEqual([7000, 2000]);
  });

  it('give up on a receiver asking to wait longer than a minute, and say so', async () => {
    const hook = await receiver(() => ({ status: 503, headers: { 'retry-after': '3600' } }));
    const capture = logCapture();
    const waits: number[] = [];
    const notifier = createNotifier({
      receivers: [{ url: hook.url, format: 'json' }],
      logger: createLogger({ level: 'warn', destination: capture.destination }),
      sleep: async (ms) => void waits.push(ms),
    });
    notifier.send(event());
    await notifier.idle();
    await notifier.close();
    expect(hook.received).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(capture.lines).toContainEqual(
      expect.objectContaining({ err: 'answered HTTP 503', msg: 'notification not delivered' }),
    );
  });

  it('end a retry wait when closed: shutdown does not wait out the backoff', async () => {
    const hook = await receiver(() => ({ status: 503 }));
    const capture = logCapture();
    let waiting: () => void = () => undefined;
    const entered = new Promise<void>((r) => {
      waiting = r;
    });
    const notifier = createNotifier({
      receivers: [{ url: hook.url, format: 'json' }],
      logger: createLogger({ level: 'warn', destination: capture.destination }),
      backoffMs: 600_000,
      // The real sleep (ten minutes), reporting when it starts.
      sleep: (ms, signal) => {
        waiting();
        return realSleep(ms, signal);
      },
    });
    notifier.send(event());
    await entered;
    await notifier.close();
    await notifier.idle();
    expect(hook.received).toHaveLength(1);
    expect(capture.lines).toContainEqual(
      expect.objectContaining({ err: 'answered HTTP 503', msg: 'notification not delivered' }),
    );
  });

  it('escape every value of a Slack text: no raw mention, no disguised link', async () => {
    const hook = await receiver();
    const notifier = createNotifier({ receivers: [{ url: hook.url, format: 'slack' }] });
    notifier.send(
      event({
        resource: 'https_edge.<!channel>',
        message: 'metadata.team: "<!channel> <http://evil.example|your bank> & <@U123>" differs',
        revision: '<!here>0123456789',
      }),
    );
    await notifier.idle();
    await notifier.close();
    const { text } = JSON.parse(hook.received[0]?.body ?? '{}') as { text: string };
    expect(text).not.toMatch(/[<>]/);
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).toContain('&lt;http://evil.example|your bank&gt; &amp; &lt;@U123&gt;');
    expect(text).toContain('(revision &lt;!here&gt;01234)');
    // JSON receivers get the values as they are: JSON's own escaping is theirs.
    expect(notificationBody(event({ message: '<!channel>' }), 'json')).toMatchObject({
      message: '<!channel>',
    });
  });

  it('go through the API client’s HTTP client: its proxy settings are honoured', async () => {
    // The receiver's name does not resolve: only the proxy can reach it (it tunnels every
    // CONNECT to the loopback receiver).
    const hook = await receiver();
    const tunnels: string[] = [];
    const proxy = createServer((_req, res) => res.writeHead(405).end());
    servers.push(proxy);
    proxy.on('connect', (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const upstream = connect(Number(new URL(hook.url).port), '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const saved = { ...process.env };
    // The lower-case forms win, as with curl: set both, and let nothing bypass the proxy.
    for (const name of ['HTTP_PROXY', 'http_proxy']) process.env[name] = proxyUrl;
    for (const name of ['NO_PROXY', 'no_proxy']) process.env[name] = '';
    let notifier: ReturnType<typeof createNotifier>;
    try {
      notifier = createNotifier({
        receivers: [{ url: 'http://receiver.invalid/services/T0/B0/X', format: 'json' }],
        attempts: 1,
        timeoutMs: 5000,
      });
    } finally {
      for (const name of ['HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    notifier.send(event());
    await notifier.idle();
    await notifier.close();
    expect(tunnels).toEqual(['receiver.invalid:80']);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]).toMatchObject({ method: 'POST', url: '/services/T0/B0/X' });
    expect(JSON.parse(hook.received[0]?.body ?? '{}')).toMatchObject({ source: 'edgesync' });
  });
});
