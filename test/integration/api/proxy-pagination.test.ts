/**
 * Behind a proxy (issue 10): a reverse proxy that serves the local server under a path prefix of
 * its own, on another port. The server's `next_page_uri` names the server's own origin and path
 * (it does not know the proxy), so the client follows each link on the configured base, and an
 * account with several pages of every kind is listed whole, then planned and applied to
 * convergence through the proxy. The key is never sent anywhere but the proxy.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, NO_CALLS, observe } from '../../../src/api/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, tempDir, writeManifests } from '../apply/helpers.js';
import { clientFor } from '../server/client.js';

const PREFIX = '/gateway/edge-api';

describe('pagination behind a reverse proxy with a path prefix', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let proxy: Server;
  let proxyUrl: string;
  const forwarded: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    const upstream = new URL(server.url);
    proxy = createServer((req, res) => {
      const url = req.url ?? '/';
      if (!url.startsWith(`${PREFIX}/`)) {
        res.writeHead(404).end();
        return;
      }
      forwarded.push(url);
      const up = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: url.slice(PREFIX.length),
          headers: req.headers,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${PREFIX}`;

    // 250 TLS edges, 130 HTTPS edges and 120 bot users: three pages, two and two.
    const call = clientFor(server, server.apiKey);
    for (let i = 0; i < 250; i++) await call('POST', '/edges/tls', { description: `t${i}` });
    for (let i = 0; i < 130; i++) await call('POST', '/edges/https', { description: `h${i}` });
    for (let i = 0; i < 120; i++) await call('POST', '/bot_users', { name: `bot-${i}` });
  }, 60_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await server.close();
  });

  it('lists every page of every kind through the proxy', async () => {
    const client = createApiClient({ baseUrl: proxyUrl, apiKey: server.apiKey });
    try {
      forwarded.length = 0;
      const live = await observe(client);
      expect([live.tlsEdges.length, live.httpsEdges.length, live.botUsers.length]).toEqual([
        250, 130, 120,
      ]);
      // max(1, ceil(n/100)) calls per kind (3 + 2 + 2 for the three seeded ones, one call for
      // every other kind), every one through the proxy's prefix.
      expect(live.cloudEndpoints).toEqual([]);
      expect(forwarded).toHaveLength(3 + 2 + 2 + (Object.keys(NO_CALLS).length - 3));
      expect(forwarded.filter((u) => u.includes('before_id='))).toHaveLength(4);
    } finally {
      await client.close();
    }
  });

  it('plans and applies to convergence through the proxy', async () => {
    const tmp = await tempDir();
    try {
      const dir = path.join(tmp.dir, 'edges');
      await writeManifests(dir, [
        { kind: 'TLSEdge', name: 'db', hostports: ['10.0.0.5:5432'] },
        { kind: 'BotUser', name: 'bot-7', active: false },
      ]);
      const env = apiEnv(proxyUrl, server.apiKey);
      const applied = await runCli(['apply', '--yes', dir], { env });
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toContain('converged');
      const plan = await runCli(['plan', '--detailed-exitcode', dir], { env });
      expect([plan.code, plan.stdout]).toEqual([
        0,
        'edgesync plan for owner "default":\n\nNo changes. Live state matches the manifests.\n',
      ]);
    } finally {
      await tmp.cleanup();
    }
  });
});
