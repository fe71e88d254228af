/**
 * The mutating endpoints (POST /-/suspend, /-/resume, /-/reconcile) over real loopback sockets:
 * a bearer token, the loopback-only admin listener, off on a non-loopback listener, requested
 * cycles paced by the resync budget, and suspend/resume without repeats.
 */
import fs from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { controlPolicy } from '../../../src/daemon/control.js';
import { createDaemon, type Daemon, type DaemonOptions } from '../../../src/daemon/daemon.js';
import { createDaemonHttpHandler } from '../../../src/daemon/http.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import type { ReconcileReport } from '../../../src/daemon/types.js';
import { ConfigError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { flush, ManualClock } from '../../unit/daemon/manual-clock.js';
import { CONVERGED, logCapture, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

const TOKEN = 'test-control-token-0123456789';
const POSTS = ['/-/suspend', '/-/resume', '/-/reconcile'] as const;
const READS = ['/healthz', '/status', '/metrics', '/events'] as const;

let daemon: Daemon | undefined;
let tmp: string | undefined;
let extra: Server | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (extra !== undefined) {
    const s = extra;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  extra = undefined;
  await removeDir(tmp);
  tmp = undefined;
});

async function startDaemon(
  options: Partial<DaemonOptions> = {},
  respond: () => ReconcileReport = () => CONVERGED,
) {
  tmp ??= await makeTempDir('daemon-control');
  const dir = path.join(tmp, 'manifests');
  await fs.mkdir(dir, { recursive: true });
  const rec = recorder(respond);
  const capture = logCapture();
  daemon = createDaemon({
    dir,
    reconcile: rec.reconcile,
    listen: { host: '127.0.0.1', port: 0 },
    watch: false,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    logger: createLogger({ level: 'debug', destination: capture.destination }),
    ...options,
  });
  await daemon.start();
  const port = daemon.address?.port;
  if (!port) throw new Error('daemon did not bind');
  return { d: daemon, calls: rec.calls, lines: capture.lines, base: `http://127.0.0.1:${port}` };
}

const post = (url: string, authorization?: string) =>
  fetch(url, {
    method: 'POST',
    ...(authorization === undefined ? {} : { headers: { authorization } }),
  });

describe('a control token', () => {
  it('refuses the POSTs without it or with a wrong one, and accepts the right one', async () => {
    const { d, calls, base } = await startDaemon({ controlToken: TOKEN });
    await waitFor('the startup cycle', () => d.ready);
    for (const p of POSTS) {
      const none = await post(`${base}${p}`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await none.text()).not.toContain(TOKEN);
      expect((await post(`${base}${p}`, 'Bearer not-the-right-token-at-all')).status).toBe(401);
      expect((await post(`${base}${p}`, TOKEN)).status).toBe(401);
    }
    // Nothing refused took effect.
    expect(d.status().suspended).toBe(false);
    expect(calls).toHaveLength(1);
    expect(d.events.list()).toEqual([]);
    // Read-only endpoints need nothing.
    for (const p of READS) expect((await fetch(`${base}${p}`)).status).toBe(200);

    const suspended = await post(`${base}/-/suspend`, `Bearer ${TOKEN}`);
    expect(suspended.status).toBe(200);
    expect(d.status().suspended).toBe(true);
    expect((await post(`${base}/-/resume`, `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await post(`${base}/-/reconcile`, `Bearer ${TOKEN}`)).status).toBe(202);
    await waitFor('the requested cycles', () => calls.length >= 2);
  });
});

/** A raw POST (fetch may not set Host): status and body. */
function rawPost(
  base: string,
  pathname: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; text: string }> {
  const url = new URL(pathname, base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('a web page on the default loopback listener', () => {
  it('cannot suspend the daemon: a foreign Origin, a rebound Host and a text/plain body are refused', async () => {
    const { d, base } = await startDaemon();
    const host = new URL(base).host;
    const attempts = [
      { headers: { host, origin: 'https://evil.example' }, status: 403 },
      { headers: { host: `evil.example:${new URL(base).port}` }, status: 403 },
      {
        headers: { host, 'content-type': 'text/plain', 'content-length': '2' },
        status: 415,
        body: '{}',
      },
      // The recipe: all three at once.
      {
        headers: {
          host: `evil.example:${new URL(base).port}`,
          origin: 'https://evil.example',
          'content-type': 'text/plain',
          'content-length': '2',
        },
        status: 403,
        body: '{}',
      },
    ];
    for (const p of POSTS) {
      for (const a of attempts) {
        const res = await rawPost(base, p, a.headers, a.body);
        expect(res.status, `${p} ${JSON.stringify(a.headers)}`).toBe(a.status);
        expect(JSON.parse(res.text)).toHaveProperty('error', expect.stringMatching(/^refused: /));
      }
    }
    expect(d.status().suspended).toBe(false);
    // What curl, git-sync and the CLI send still works: no Origin, an empty or JSON body.
    expect((await rawPost(base, '/-/suspend', { host })).status).toBe(200);
    expect(d.status().suspended).toBe(true);
    const json = { host, 'content-type': 'application/json', 'content-length': '2' };
    expect((await rawPost(base, '/-/resume', json, '{}')).status).toBe(200);
    expect(d.status().suspended).toBe(false);
  });
});

describe('the admin listener', () => {
  it('serves the POSTs on loopback without a token; the main listener refuses them', async () => {
    const { d, base } = await startDaemon({ adminListen: { host: '127.0.0.1', port: 0 } });
    const admin = `http://127.0.0.1:${d.adminAddress?.port}`;
    const refused = await post(`${base}/-/suspend`);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/served on the admin listener \(127\.0\.0\.1:0\) only/);
    expect(d.status().suspended).toBe(false);
    expect((await post(`${admin}/-/suspend`)).status).toBe(200);
    expect(d.status().suspended).toBe(true);
    expect((await fetch(`${base}/status`)).status).toBe(200);
    expect((await fetch(`${admin}/status`)).status).toBe(200);
    await d.stop();
    // Both listeners are closed on stop.
    await expect(fetch(`${admin}/healthz`)).rejects.toThrow();
  });

  it('must be a loopback address', () => {
    tmp = undefined;
    expect(() =>
      createDaemon({
        dir: '.',
        reconcile: recorder().reconcile,
        adminListen: { host: '0.0.0.0', port: 0 },
      }),
    ).toThrow(ConfigError);
  });
});

describe('a listener beyond loopback without a token', () => {
  it('answers 403 to every POST, naming the remedies, and serves the reads', async () => {
    const access = controlPolicy({ host: '0.0.0.0', port: 9090 }, undefined, undefined).main;
    let suspends = 0;
    let reconciles = 0;
    const handler = createDaemonHttpHandler({
      control: access,
      status: () => ({}) as ReturnType<Daemon['status']>,
      resources: () => ({ format_version: 1, total: 0, offset: 0, limit: 100, resources: [] }),
      ready: () => true,
      metrics: { contentType: 'text/plain', render: async () => '' },
      requestReconcile: () => {
        reconciles += 1;
        return true;
      },
      suspend: () => {
        suspends += 1;
        return true;
      },
      resume: () => true,
    });
    const server = createServer(handler);
    extra = server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const p of POSTS) {
      const res = await post(`${base}${p}`, `Bearer ${TOKEN}`);
      expect(res.status).toBe(403);
      expect(await res.text()).toMatch(/are off: .*--control-token-file/);
    }
    expect([suspends, reconciles]).toEqual([0, 0]);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('is said at start, in a log line', async () => {
    // The test never listens beyond loopback: the wildcard bind is made to fail on a port this
    // test already holds on 127.0.0.1 (Linux refuses the overlap), after the start-up line.
    const holder = createServer();
    extra = holder;
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as AddressInfo).port;
    const capture = logCapture();
    tmp = await makeTempDir('daemon-control');
    daemon = createDaemon({
      dir: tmp,
      reconcile: recorder().reconcile,
      listen: { host: '0.0.0.0', port },
      watch: false,
      metrics: createDaemonMetrics({ defaultMetrics: false }),
      logger: createLogger({ level: 'info', destination: capture.destination }),
    });
    await expect(daemon.start()).rejects.toThrow(ConfigError);
    expect(capture.lines.find((l) => l.control === 'off')).toMatchObject({
      level: 40,
      msg: expect.stringMatching(/are off: the listener 0\.0\.0\.0:\d+ is not loopback-only/),
    });
  });
});

describe('requested cycles', () => {
  it('a flood of 200 POST /-/reconcile runs a bounded number of cycles (the resync budget)', async () => {
    const clock = new ManualClock();
    const { d, calls, base } = await startDaemon(
      {
        timers: clock,
        now: clock.now,
        // 3 list calls per full observation, 25% of 120/min: one full cycle per 6 s.
        resyncBudget: { share: 0.25, budget: { limit: 120, windowMs: 60_000 } },
        resyncJitter: 0,
      },
      () => ({ ...CONVERGED, listCalls: 3 }),
    );
    const url = `${base}/-/reconcile`;
    await waitFor('the startup cycle', () => d.ready);
    for (let i = 0; i < 200; i++) {
      expect((await post(url)).status).toBe(202);
      // Each request after the previous cycle ended: unpaced, every one would run a cycle.
      await clock.advance(10);
      await flush();
    }
    // 2 s of requests: the startup cycle, and one requested cycle deferred to 6 s.
    expect(calls.map((c) => c.reason)).toEqual(['startup']);
    await clock.advance(4000);
    await waitFor('the deferred cycle', () => d.status().last_reconcile?.reason === 'webhook');
    await clock.advance(60_000);
    await waitFor('the resync', () => calls.length === 3);
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'webhook', 'resync']);
  });
});

describe('suspend and resume', () => {
  it('are idempotent: a repeat changes nothing and emits no event or log line', async () => {
    const { d, base, lines } = await startDaemon();
    const seen: string[] = [];
    d.events.subscribe((e) => seen.push(e.type));
    const bodies: unknown[] = [];
    for (const p of ['/-/suspend', '/-/suspend', '/-/suspend', '/-/resume', '/-/resume']) {
      const res = await post(`${base}${p}`);
      expect(res.status).toBe(200);
      bodies.push(await res.json());
    }
    expect(bodies).toEqual([
      { suspended: true, changed: true },
      { suspended: true, changed: false },
      { suspended: true, changed: false },
      { suspended: false, changed: true },
      { suspended: false, changed: false },
    ]);
    expect(seen).toEqual(['suspended', 'resumed']);
    expect(d.events.list().map((e) => e.type)).toEqual(['suspended', 'resumed']);
    const stateLines = lines.filter((l) => /^(suspended|resumed)/.test(String(l.msg)));
    expect(stateLines).toHaveLength(2);
  });
});
