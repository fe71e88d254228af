/**
 * A reserved domain's readiness in the daemon's events and notifications (in-process
 * `edgesync run` against the local server over HTTP, with the service's domain rule on, and a
 * loopback notification receiver): a domain whose certificate waits for DNS is a `readiness`
 * event naming the CNAME record to create, and the endpoint on it a `waiting` event naming the
 * same record, each notified once; once the server's DNS has the record, the next resync brings
 * a `readiness` event `ready`, and the endpoint is created.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DaemonEvent } from '../../../src/daemon/events.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import { makeTempDir, removeDir, waitFor } from './helpers.js';

const DOMAIN = `kind: ReservedDomain
name: app
domain: app.example.com
`;
const ENDPOINT = `kind: CloudEndpoint
name: app
url: https://app.example.com
traffic_policy:
  on_http_request:
    - actions: [{ type: deny }]
`;

let api: RunningServer & { apiKey: string };
let receiver: Server;
let received: Record<string, unknown>[];
let receiverUrl: string;
let tmp: string;
let dir: string;

beforeEach(async () => {
  api = await startTestServer({ requireReservedDomains: true });
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
  tmp = await makeTempDir('daemon-domains');
  dir = path.join(tmp, 'manifests');
  await mkdir(dir);
});
afterEach(async () => {
  await stopDaemons();
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
  await api.close();
  await removeDir(tmp);
});

/** The account's reservations and endpoints, read over HTTP. */
async function live(): Promise<{ domains: Record<string, unknown>[]; endpoints: string[] }> {
  const get = async (p: string) =>
    (await (
      await fetch(`${api.url}${p}`, {
        headers: { authorization: `Bearer ${api.apiKey}`, 'svc-version': '2' },
      })
    ).json()) as Record<string, Record<string, unknown>[]>;
  const domains = (await get('/reserved_domains')).reserved_domains ?? [];
  const endpoints = ((await get('/endpoints')).endpoints ?? []).map((e) => String(e.url));
  return { domains, endpoints };
}

it('a domain waiting for DNS: events and notifications name the CNAME; the DNS there, the next resync creates the endpoint', async () => {
  // The domain is reserved (by an earlier apply) and waits for its CNAME.
  await writeFile(path.join(dir, 'app.yaml'), `${DOMAIN}---\n${ENDPOINT}`);
  const reserved = await fetch(`${api.url}/reserved_domains`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.apiKey}`,
      'svc-version': '2',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      domain: 'app.example.com',
      certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' },
    }),
  });
  expect(reserved.status).toBe(201);
  const [domain] = (await live()).domains;
  const target = String(domain?.cname_target);
  expect(target).not.toBe('undefined');
  const record = { name: 'app.example.com', type: 'CNAME', target };

  const d = await startDaemon({
    args: [dir, '--interval', '1s', '--debounce', '20ms', '--notify', receiverUrl],
    cwd: tmp,
    env: { EDGESYNC_API_URL: api.url, EDGESYNC_API_KEY: api.apiKey, EDGESYNC_OWNER: 'default' },
  });
  const events = async () =>
    ((await (await fetch(`${d.base}/events`)).json()) as { events: DaemonEvent[] }).events;
  const notified = (type: string) => received.filter((n) => n.type === type);

  // Not ready: the domain's state with the record to create, and the endpoint held back.
  const first = await waitFor('the readiness and waiting events', async () => {
    const all = await events();
    const waiting = all.find((e) => e.type === 'waiting');
    return waiting === undefined ? undefined : all;
  });
  const pending = first.find((e) => e.type === 'readiness');
  expect(pending).toMatchObject({
    resource: 'reserved_domain.app',
    message: expect.stringContaining(`pending: needs DNS: app.example.com CNAME ${target}`),
    readiness: { state: 'pending', records: [record] },
  });
  expect(first.find((e) => e.type === 'waiting')).toMatchObject({
    resource: 'cloud_endpoint.app',
    message: expect.stringContaining(`app.example.com CNAME ${target}`),
    waiting_for: [{ address: 'reserved_domain.app', state: 'pending', records: [record] }],
  });
  expect((await live()).endpoints).toEqual([]);
  await waitFor('both notifications', () => notified('waiting').length > 0);
  expect(notified('readiness')).toMatchObject([
    { source: 'edgesync', resource: 'reserved_domain.app', readiness: { records: [record] } },
  ]);
  expect(notified('waiting')).toMatchObject([
    { resource: 'cloud_endpoint.app', waiting_for: [{ records: [record] }] },
  ]);

  // Further resyncs while nothing changed say nothing new.
  const seen = (await d.status()).last_reconcile?.at ?? '';
  await waitFor('another resync', async () => {
    const last = (await d.status()).last_reconcile;
    return last !== null && last.at > seen && last.reason === 'resync';
  });
  expect(
    (await events()).filter((e) => e.type === 'readiness' || e.type === 'waiting'),
  ).toHaveLength(2);

  // The CNAME is created: the next resync finds the domain ready and creates the endpoint.
  api.knobs.dns = { cnamesCreated: ['app.example.com'] };
  await waitFor('the endpoint to be created', async () =>
    (await live()).endpoints.length > 0 ? true : undefined,
  );
  expect((await live()).endpoints).toEqual(['https://app.example.com']);
  // Nothing but the timer triggers a cycle here (no file changes, no request): a resync did it.
  expect((await d.status()).last_reconcile?.reason).toBe('resync');
  const after = await waitFor('the ready event', async () => {
    const all = await events();
    return all.some((e) => e.type === 'changed' && e.resource === 'cloud_endpoint.app')
      ? all
      : undefined;
  });
  const ready = after.filter((e) => e.type === 'readiness').at(-1);
  expect(ready).toMatchObject({
    resource: 'reserved_domain.app',
    message: expect.stringMatching(/^ready: /),
    readiness: { state: 'ready' },
  });
  expect(after.map((e) => `${e.type} ${e.resource}`)).toContain('recovered cloud_endpoint.app');
  await waitFor('the ready notification', () => notified('readiness').length === 2);
  expect(notified('readiness')[1]).toMatchObject({ readiness: { state: 'ready' } });
  // No key anywhere in what was sent.
  expect(JSON.stringify(received)).not.toContain(api.apiKey);
});
