/**
 * The daemon with `kind: CloudEndpoint` manifests (in-process `edgesync run` against the local
 * server over HTTP, and a loopback notification receiver): observe mode reports an edited
 * policy as drift in `/status` (the field's path, never its value), `/events` and a
 * notification, with the credential header's value nowhere; suspend stops the endpoint's writes
 * and resume sends them; an edited policy, saved, converges in exactly three calls: GET, PATCH,
 * GET.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import type { RunningServer } from '../../../src/server/index.js';
import { type InProcessDaemon, startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { makeTempDir, removeDir, waitFor } from './helpers.js';

const LIVE_SECRET = 'Bearer live-secret-3a9c1e';
const SECRET_1 = 'Bearer manifest-secret-71d0b4';
const SECRET_2 = 'Bearer manifest-secret-rotated-c8e2';
const SECRETS = [LIVE_SECRET, SECRET_1, SECRET_2];
const HEADER_PATH = 'traffic_policy.on_http_request[0].actions[0].config.headers.authorization';

const manifest = (authorization: string, trace: string) => `kind: CloudEndpoint
name: api
url: https://api.example.com
traffic_policy:
  on_http_request:
    - actions:
        - type: add-headers
          config:
            headers:
              authorization: "${authorization}"
              x-trace: ${trace}
        - type: custom-response
          config: { status_code: 200 }
`;

let api: RunningServer & { apiKey: string };
let receiver: Server;
let received: string[];
let receiverUrl: string;
let tmp: string;
let dir: string;

beforeEach(async () => {
  api = await startTestServer();
  received = [];
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  tmp = await makeTempDir('daemon-endpoints');
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

function daemon(extra: string[]): Promise<InProcessDaemon> {
  return startDaemon({
    args: [dir, '--interval', '1h', '--debounce', '20ms', '--notify', receiverUrl, ...extra],
    cwd: tmp,
    env: { EDGESYNC_API_URL: api.url, EDGESYNC_API_KEY: api.apiKey, EDGESYNC_OWNER: 'default' },
  });
}

/** The status after the next cycle of `reason` whose time is after `since`. */
function cycleAfter(d: InProcessDaemon, since: string | undefined, reason?: string) {
  return waitFor('a cycle', async () => {
    const s = await d.status();
    const last = s.last_reconcile;
    if (last === null || (since !== undefined && last.at <= since)) return undefined;
    return reason === undefined || last.reason === reason ? s : undefined;
  });
}

function expectNoSecret(...outputs: string[]): void {
  for (const out of outputs) for (const secret of SECRETS) expect(out).not.toContain(secret);
}

it('observe mode: the drift of an endpoint in /status, /events and a notification, no secret', async () => {
  await fetch(`${api.url}/endpoints`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.apiKey}`,
      'svc-version': '2',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      url: 'https://api.example.com',
      traffic_policy: manifest(LIVE_SECRET, 'live').split('traffic_policy:\n')[1],
      metadata: storedMetadata({}, { owner: 'default', name: 'api', protect: false }),
    }),
  });
  await writeFile(path.join(dir, 'api.yaml'), manifest(SECRET_1, 'one'));
  const before = writesAt(api);
  const d = await daemon(['--mode', 'observe']);
  const s = await cycleAfter(d, undefined);
  expect(s.last_reconcile).toMatchObject({ result: 'drift', writes: 0 });
  const resource = (await d.resources()).find((r) => r.address === 'cloud_endpoint.api');
  expect(resource).toMatchObject({ state: 'out_of_sync' });
  expect(resource?.fields).toContain(HEADER_PATH);
  expect(resource?.fields).toContain(
    'traffic_policy.on_http_request[0].actions[0].config.headers["x-trace"]',
  );
  const events = await (await fetch(`${d.base}/events`)).text();
  expect(JSON.parse(events)).toMatchObject({
    events: [{ type: 'drift', resource: 'cloud_endpoint.api' }],
  });
  await waitFor('the drift notification', () => received.length > 0);
  expect(JSON.parse(received[0] ?? '{}')).toMatchObject({
    type: 'drift',
    resource: 'cloud_endpoint.api',
  });
  expect(writesAt(api)).toBe(before);
  expectNoSecret(JSON.stringify(s), events, ...received, d.stdout(), d.stderr());
});

it('enforce: suspend stops an endpoint write, resume sends it, a saved edit costs GET, PATCH, GET', async () => {
  await writeFile(path.join(dir, 'api.yaml'), manifest(SECRET_1, 'one'));
  const d = await daemon([]);
  const first = await cycleAfter(d, undefined);
  expect(first.last_reconcile).toMatchObject({ result: 'changed', writes: 1 });

  // Suspended: the edit is seen, nothing is written.
  expect((await fetch(`${d.base}/-/suspend`, { method: 'POST' })).status).toBe(200);
  const writes = writesAt(api);
  await writeFile(path.join(dir, 'api.yaml'), manifest(SECRET_2, 'two'));
  const held = await waitFor('the suspended cycle to see the edit', async () => {
    const r = (await d.resources()).find((x) => x.address === 'cloud_endpoint.api');
    return r?.state === 'suspended' ? r : undefined;
  });
  expect(held.fields).toContain(HEADER_PATH);
  expect(writesAt(api)).toBe(writes);

  // Resumed: the edit is written.
  await fetch(`${d.base}/-/resume`, { method: 'POST' });
  await waitFor('the PATCH after resume', () => writesAt(api) === writes + 1);
  const resumed = await waitFor('in sync after resume', async () => {
    const st = await d.status();
    const counts = st.resource_counts;
    return counts.by_state.in_sync === counts.total && !st.in_flight ? st : undefined;
  });

  // A saved edit of the policy: GET by ID, PATCH, GET to check; nothing else.
  const requests = { ...api.requests };
  await writeFile(path.join(dir, 'api.yaml'), manifest(SECRET_2, 'three'));
  const saved = await cycleAfter(d, resumed.last_reconcile?.at, 'file');
  expect(saved.last_reconcile).toMatchObject({ result: 'changed', writes: 1 });
  const delta = Object.fromEntries(
    Object.entries(api.requests)
      .map(([method, n]) => [method, n - (requests[method] ?? 0)])
      .filter(([, n]) => n !== 0),
  );
  expect(delta).toEqual({ GET: 2, PATCH: 1 });
  expectNoSecret(JSON.stringify(saved), ...received, d.stdout(), d.stderr());
});

it('a refusal that quotes the request body: /status, /events and the notification mask the header', async () => {
  api.knobs.echoBody = true;
  await writeFile(path.join(dir, 'api.yaml'), manifest(SECRET_1, 'one'));
  const d = await daemon([]);
  const s = await cycleAfter(d, undefined);
  expect(s.last_reconcile).toMatchObject({ result: 'error' });
  // The server did quote the body (the message is there), with the value masked.
  expect(s.last_error?.message).toContain('(sensitive)');
  const events = await (await fetch(`${d.base}/events`)).text();
  expect(JSON.parse(events)).toMatchObject({ events: [{ type: 'error' }] });
  await waitFor('the error notification', () => received.length > 0);
  expectNoSecret(JSON.stringify(s), events, ...received, d.stdout(), d.stderr());
});

it('ten unclosed (-(-(- expressions in a 7 KB manifest: located errors, and /healthz answers throughout', async () => {
  await writeFile(path.join(dir, 'api.yaml'), manifest(SECRET_1, 'one'));
  const d = await daemon([]);
  const first = await cycleAfter(d, undefined);
  const bad = `${'(-'.repeat(340)}1`;
  const expressions = Array.from({ length: 10 }, () => `        - "${bad}"`).join('\n');
  const text = `kind: CloudEndpoint
name: deep
url: https://deep.example.com
traffic_policy:
  on_http_request:
    - expressions:
${expressions}
      actions:
        - type: deny
    - actions:
        - type: deny
`;
  expect(text.length).toBeGreaterThan(7000);
  let worst = 0;
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      expect((await fetch(`${d.base}/healthz`)).status).toBe(200);
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  await writeFile(path.join(dir, 'deep.yaml'), text);
  const s = await cycleAfter(d, first.last_reconcile?.at);
  probing = false;
  await probe;
  expect(s.last_reconcile?.result).toBe('invalid');
  const errors = s.diagnostics_by_file['deep.yaml'] ?? [];
  expect(errors).toHaveLength(10);
  expect(errors[0]).toMatchObject({
    line: 7,
    column: 76,
    path: 'traffic_policy.on_http_request[0].expressions[0]',
    message: 'CEL: expression nests deeper than 32 levels',
  });
  // The parser alone took 10 to 40 seconds over these; now they are refused unread.
  expect(worst).toBeLessThan(1000);
});
