/**
 * Proxies from the environment: a small forward proxy on 127.0.0.1 (absolute-URI requests and
 * CONNECT tunnels, to loopback targets only) in front of the local server. `HTTP_PROXY` /
 * `http_proxy` send the client's requests through it, `NO_PROXY` bypasses it, `HTTPS_PROXY`
 * carries `https:` URLs; the compiled CLI does the same. Nothing leaves the loopback interface.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BIN } from '../../../bench/harness.js';
import { createApiClient } from '../../../src/api/index.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir, writeManifests } from '../../integration/apply/helpers.js';

const run = promisify(execFile);

interface ForwardProxy {
  readonly url: string;
  /** `GET http://127.0.0.1:p/path` for a forwarded request, `CONNECT 127.0.0.1:p` for a tunnel. */
  readonly seen: string[];
  close(): Promise<void>;
}

const isLoopback = (host: string) => host === '127.0.0.1' || host === 'localhost';

/** Forwards absolute-URI requests and opens CONNECT tunnels, to loopback targets only. */
async function startForwardProxy(): Promise<ForwardProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const target = URL.canParse(req.url ?? '') ? new URL(req.url ?? '') : undefined;
    if (target === undefined || !isLoopback(target.hostname)) {
      res.writeHead(403).end();
      return;
    }
    const up = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    const [host = '', port = ''] = (req.url ?? '').split(':');
    if (!isLoopback(host)) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const PROXY_VARS = [
  'HTTP_PROXY',
  'http_proxy',
  'HTTPS_PROXY',
  'https_proxy',
  'NO_PROXY',
  'no_proxy',
];

/** The environment with every proxy variable cleared, then `vars` set. */
function proxyEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of PROXY_VARS) delete env[name];
  return { ...env, ...vars };
}

describe('proxies from the environment', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let proxy: ForwardProxy;

  beforeAll(async () => {
    server = await startTestServer();
    proxy = await startForwardProxy();
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    proxy.seen.length = 0;
  });

  /** Clears every proxy variable of this process, then sets `vars`. */
  function stub(vars: Record<string, string>): void {
    for (const name of PROXY_VARS) vi.stubEnv(name, undefined);
    for (const [name, value] of Object.entries(vars)) vi.stubEnv(name, value);
  }

  async function listBots(): Promise<number> {
    const client = createApiClient({ baseUrl: server.url, apiKey: server.apiKey });
    try {
      return (await client.listBotUsers()).calls;
    } finally {
      await client.close();
    }
  }

  const target = () => new URL(server.url).host;

  it.each(['HTTP_PROXY', 'http_proxy'])(
    '%s sends http: requests through the proxy',
    async (name) => {
      stub({ [name]: proxy.url });
      expect(await listBots()).toBe(1);
      expect(proxy.seen.length).toBeGreaterThan(0);
      for (const line of proxy.seen) expect(line).toMatch(new RegExp(`${target()}(/|$)`));
    },
  );

  it.each([
    ['the host', '127.0.0.1'],
    ['the host and port', () => target()],
    ['a list with the host', '.example.test, 127.0.0.1'],
    ['*', '*'],
  ])('NO_PROXY naming %s bypasses the proxy', async (_n, noProxy) => {
    stub({ HTTP_PROXY: proxy.url, NO_PROXY: typeof noProxy === 'string' ? noProxy : noProxy() });
    expect(await listBots()).toBe(1);
    expect(proxy.seen).toEqual([]);
  });

  it('NO_PROXY naming another host does not bypass it', async () => {
    stub({ HTTP_PROXY: proxy.url, NO_PROXY: 'api.example.test' });
    expect(await listBots()).toBe(1);
    expect(proxy.seen.length).toBeGreaterThan(0);
  });

  it('without proxy variables, requests go straight to the server', async () => {
    stub({});
    expect(await listBots()).toBe(1);
    expect(proxy.seen).toEqual([]);
  });

  it('HTTPS_PROXY tunnels https: URLs with CONNECT (and HTTP_PROXY is not used for them)', async () => {
    // The local server speaks plain HTTP, so the TLS handshake through the tunnel fails: what
    // matters is that the connection was asked of the proxy, by CONNECT, for the target.
    stub({ HTTPS_PROXY: proxy.url, HTTP_PROXY: 'http://127.0.0.1:9' });
    const client = createApiClient({
      baseUrl: server.url.replace('http:', 'https:'),
      apiKey: server.apiKey,
      retry: false,
    });
    try {
      await expect(client.listBotUsers()).rejects.toThrow(/network error/);
    } finally {
      await client.close();
    }
    expect(proxy.seen).toEqual([`CONNECT ${target()}`]);
  });

  it('the compiled CLI honours HTTP_PROXY and NO_PROXY', async () => {
    assertFreshBuild();
    const tmp = await tempDir();
    try {
      const dir = path.join(tmp.dir, 'edges');
      await writeManifests(dir, [{ kind: 'BotUser', name: 'bot-p', active: true }]);
      const base = {
        EDGESYNC_API_URL: server.url,
        EDGESYNC_API_KEY: server.apiKey,
        EDGESYNC_RATE_LIMIT: 'none',
      };
      const proxied = await run(process.execPath, [BIN, 'plan', dir], {
        env: proxyEnv({ ...base, HTTPS_PROXY: 'http://127.0.0.1:9', http_proxy: proxy.url }),
      });
      expect(proxied.stdout).toContain('bot-p');
      expect(proxy.seen.length).toBeGreaterThan(0);
      proxy.seen.length = 0;
      const direct = await run(process.execPath, [BIN, 'plan', dir], {
        env: proxyEnv({ ...base, http_proxy: proxy.url, no_proxy: '127.0.0.1' }),
      });
      expect(direct.stdout).toContain('bot-p');
      expect(proxy.seen).toEqual([]);
    } finally {
      await tmp.cleanup();
    }
  });
});
