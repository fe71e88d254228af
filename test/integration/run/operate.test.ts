/**
 * Operating the daemon (in-process `edgesync run` against the local server over HTTP, and a
 * real local notification receiver): observe mode, suspend and resume, per-resource status,
 * events, notifications.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { main } from '../../../src/cli/main.js';
import type { DaemonStatus, ResourcePage } from '../../../src/daemon/types.js';
import type { RunningServer } from '../../../src/server/index.js';
import { Capture } from '../../helpers/capture.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { tempDir, tlsEdge, writeYaml } from './helpers.js';

let api: RunningServer & { apiKey: string };
let receiver: Server;
let received: Array<Record<string, unknown>>;
let receiverUrl: string;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  api = await startTestServer();
  received = [];
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      received.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
  await api.close();
  await cleanup();
});

function start(extra: string[]) {
  const stdout = new Capture();
  const controller = new AbortController();
  const exited = main({
    argv: [
      'run',
      'edges',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
      '--debounce',
      '20ms',
      ...extra,
    ],
    stdout,
    stderr: new Capture(),
    env: {
      EDGESYNC_API_URL: api.url,
      EDGESYNC_API_KEY: api.apiKey,
      EDGESYNC_OWNER: 'default',
      EDGESYNC_RATE_LIMIT: 'none',
    },
    cwd: dir,
    signal: controller.signal,
  });
  const base = async () => {
    const line = await waitFor('the daemon to start', () =>
      stdout.lines().find((l) => l.msg === 'daemon started'),
    );
    return `http://${String(line.listen)}`;
  };
  return { stdout, controller, exited, base };
}

const status = async (base: string) =>
  (await (await fetch(`${base}/status`)).json()) as DaemonStatus;
const resources = async (base: string) =>
  ((await (await fetch(`${base}/status/resources`)).json()) as ResourcePage).resources;

it('observe mode writes nothing, shows each resource out of sync, and notifies a drift once', async () => {
  await writeYaml(path.join(dir, 'edges', 'db.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
  const d = start(['--mode', 'observe', '--notify', receiverUrl]);
  const base = await d.base();
  const s = await waitFor('a cycle', async () => {
    const st = await status(base);
    return st.last_reconcile !== null ? st : undefined;
  });
  expect(s).toMatchObject({ mode: 'observe', last_reconcile: { result: 'drift', writes: 0 } });
  expect((await resources(base)).map((r) => [r.address, r.state])).toEqual([
    ['tls_edge.cache', 'out_of_sync'],
    ['tls_edge.db', 'out_of_sync'],
  ]);
  expect(writesAt(api)).toBe(0);
  // A second cycle sees the same drift: no new event, no new notification.
  await fetch(`${base}/-/reconcile`, { method: 'POST' });
  await waitFor(
    'a second cycle',
    async () => (await status(base)).last_reconcile?.reason === 'webhook',
  );
  await waitFor('two drift notifications', () => received.length >= 2);
  const events = (await (await fetch(`${base}/events`)).json()) as {
    events: Array<{ type: string }>;
  };
  expect(events.events.map((e) => e.type)).toEqual(['drift', 'drift']);
  expect(received.map((r) => [r.type, r.resource])).toEqual([
    ['drift', 'tls_edge.cache'],
    ['drift', 'tls_edge.db'],
  ]);
  expect(JSON.stringify(received)).not.toContain(api.apiKey);
  expect(await (await fetch(`${base}/metrics`)).text()).toMatch(
    /^edgesync_resources\{kind="tls_edge",state="out_of_sync"\} 2$/m,
  );
  d.controller.abort();
  expect(await d.exited).toBe(0);
});

it('suspend stops writes at once and resume applies what changed meanwhile (slack format)', async () => {
  await writeYaml(path.join(dir, 'edges', 'db.yaml'), [tlsEdge('db')]);
  const d = start(['--notify', receiverUrl, '--notify-format', 'slack']);
  const base = await d.base();
  await waitFor(
    'the first apply',
    async () => (await status(base)).last_reconcile?.result === 'changed',
  );
  expect(writesAt(api)).toBe(1);
  expect((await fetch(`${base}/-/suspend`, { method: 'POST' })).status).toBe(200);
  expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^edgesync_suspended 1$/m);
  await writeYaml(path.join(dir, 'edges', 'db.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
  await waitFor('an observing cycle with the new edge', async () => {
    const listed = await resources(base);
    return listed.some((r) => r.address === 'tls_edge.cache' && r.state === 'suspended');
  });
  expect(writesAt(api)).toBe(1);
  expect((await status(base)).suspended).toBe(true);
  await fetch(`${base}/-/resume`, { method: 'POST' });
  await waitFor('the edge created after resume', () => writesAt(api) === 2);
  await waitFor('the notifications', () =>
    received.some((r) => String(r.text).startsWith('edgesync resumed')),
  );
  const texts = received.map((r) => String(r.text));
  expect(texts.some((t) => t.startsWith('edgesync changed tls_edge.db: create'))).toBe(true);
  expect(texts.some((t) => t.startsWith('edgesync suspended'))).toBe(true);
  d.controller.abort();
  expect(await d.exited).toBe(0);
});

it('a dead receiver is logged, never fatal', async () => {
  await writeYaml(path.join(dir, 'edges', 'db.yaml'), [tlsEdge('db')]);
  const d = start(['--notify', 'http://127.0.0.1:9/unreachable']);
  const base = await d.base();
  await waitFor(
    'the first apply',
    async () => (await status(base)).last_reconcile?.result === 'changed',
  );
  d.controller.abort();
  expect(await d.exited).toBe(0);
});

it('/status shows the live id of a resource right after the cycle that created it', async () => {
  await writeYaml(path.join(dir, 'edges', 'db.yaml'), [tlsEdge('db')]);
  const d = start([]);
  const base = await d.base();
  const s = await waitFor('the first cycle', async () => {
    const st = await status(base);
    return st.last_reconcile !== null ? st : undefined;
  });
  expect(s.last_reconcile).toMatchObject({ result: 'changed' });
  const listed = (await (
    await fetch(`${api.url}/edges/tls`, {
      headers: { authorization: `Bearer ${api.apiKey}`, 'svc-version': '2' },
    })
  ).json()) as { tls_edges: { id: string }[] };
  const id = listed.tls_edges[0]?.id;
  expect(id).toMatch(/^edgtls_/);
  expect(await resources(base)).toEqual([
    expect.objectContaining({ address: 'tls_edge.db', state: 'in_sync', id }),
  ]);
  d.controller.abort();
  expect(await d.exited).toBe(0);
});
