/**
 * A full disk never loses an acknowledged write, for real: the server's data directory is on a
 * small tmpfs that the test fills. Writes are answered 503 with the usual error body and change
 * nothing (readers included), the log stays clean (a restart needs no salvage), space coming
 * back heals the server without a restart, and `apply` through it never reports converged
 * while its writes are being lost.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { decodeLine } from '../../../src/server/journal.js';
import { scanLog } from '../../../src/server/journal-scan.js';
import { startTestServer } from '../../helpers/server.js';
import { mountTmpfs, type Tmpfs } from '../../helpers/tmpfs.js';
import { runCli, tempDir, writeManifests } from '../apply/helpers.js';
import { clientFor, snapshot } from './client.js';

const KEY = 'full-disk-key';
let disk: Tmpfs;
let data: string;
let manifests: Awaited<ReturnType<typeof tempDir>>;
const servers: RunningServer[] = [];

beforeEach(async () => {
  disk = await mountTmpfs(1024 * 1024);
  data = join(disk.dir, 'data');
  manifests = await tempDir('edgesync-full-disk-');
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await disk.unmount();
  await manifests.cleanup();
});

async function start(): Promise<RunningServer> {
  const server = await startTestServer({ dataDir: data, apiKeys: [KEY] });
  servers.push(server);
  return server;
}

async function stop(server: RunningServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

/** The log on disk holds only whole records: what a start right now (kill -9) would read. */
async function expectCleanLog(): Promise<void> {
  const name = (await readdir(data)).find((n) => /^log-\d+\.jsonl$/.test(n)) as string;
  const bytes = await readFile(join(data, name));
  const scan = scanLog(bytes, 0, decodeLine);
  expect(scan.damage).toBeUndefined();
  expect(scan.validBytes).toBe(bytes.length);
}

/** A TLS edge whose log record is larger than a page: it never fits in a file's slack. */
const bigEdge = (i: number) => ({
  description: `big-${i}`,
  metadata: 'm'.repeat(4096),
  hostports: [`big-${i}.example.com:443`],
});

it('a full disk: writes answer 503 and change nothing; space coming back heals it without a restart; a restart needs no salvage', async () => {
  const server = await start();
  const call = clientFor(server, KEY);
  for (const name of ['a', 'b', 'c'])
    expect((await call('POST', '/bot_users', { name })).status).toBe(201);
  const before = await snapshot(call);
  await disk.fill();

  // Writes at once (updates and deletes: journal-faults.test.ts), with readers in between.
  const bot = (await call('GET', '/bot_users')).json.bot_users[0];
  const writes = Array.from({ length: 8 }, (_, i) => call('POST', '/edges/tls', bigEdge(i)));
  const reads = Array.from({ length: 8 }, () => call('GET', '/edges/tls'));
  for (const r of await Promise.all(writes)) {
    expect(r.status, r.text).toBe(503);
    expect(r.json).toMatchObject({ error_code: 'ERR_SVC_503', status_code: 503 });
    expect(r.json.details.operation_id).toEqual(expect.any(String));
  }
  for (const r of await Promise.all(reads)) {
    expect(r.status).toBe(200);
    expect(r.json.tls_edges).toEqual([]);
  }
  expect(await snapshot(call)).toEqual(before);
  await expectCleanLog();

  // Still full: a restart (no --salvage) starts and serves exactly the acknowledged writes.
  await stop(server);
  const second = await start();
  const call2 = clientFor(second, KEY);
  const norm = (v: unknown, url: string) => JSON.parse(JSON.stringify(v).replaceAll(url, 'BASE'));
  expect(norm(await snapshot(call2), second.url)).toEqual(norm(before, server.url));
  expect((await call2('POST', '/edges/tls', bigEdge(0))).status).toBe(503);

  // Space comes back: the same server takes writes again.
  await disk.free();
  const created = await call2('POST', '/edges/tls', bigEdge(1));
  expect(created.status, created.text).toBe(201);
  expect((await call2('PATCH', `/bot_users/${bot.id}`, { active: false })).status).toBe(200);
  const healed = await snapshot(call2);
  await expectCleanLog();
  await stop(second);
  const third = await start();
  expect(norm(await snapshot(clientFor(third, KEY)), third.url)).toEqual(norm(healed, second.url));
});

const edges = (n: number, version: string) =>
  Array.from({ length: n }, (_, i) => ({
    kind: 'TLSEdge',
    name: `edge-${i}`,
    description: `${version} ${'d'.repeat(200)}`,
    hostports: [`edge-${i}.example.com:443`],
  }));

it('apply through a server whose disk fills up never reports converged; once space is back it converges, and a restart keeps it', async () => {
  const server = await start();
  const env = {
    EDGESYNC_API_URL: server.url,
    EDGESYNC_API_KEY: KEY,
    EDGESYNC_RATE_LIMIT: 'none',
    EDGESYNC_OWNER: 'default',
  };
  const apply = async (url: string) => {
    const run = await runCli(['apply', manifests.dir, '--yes', '-o', 'json'], {
      env: { ...env, EDGESYNC_API_URL: url },
    });
    return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) };
  };
  await writeManifests(manifests.dir, edges(4, 'v1'));
  expect((await apply(server.url)).report).toMatchObject({ converged: true });
  await disk.fill();
  // Updates (some of which fit in the log's last, partly used page) and creates (which do not).
  await writeManifests(manifests.dir, edges(8, 'v2'));
  const lossy = await apply(server.url);
  expect(lossy.code, lossy.stderr).not.toBe(0);
  expect(lossy.report).toMatchObject({ converged: false });
  expect(lossy.report.operations.failed).toBeGreaterThan(0);
  const seen = (await snapshot(clientFor(server, KEY))) as { tls: unknown[] };
  expect(seen.tls.length).toBeLessThan(8);

  // What the server showed is what it had made durable: a restart shows the same.
  await stop(server);
  const second = await start();
  const norm = (v: unknown, url: string) => JSON.parse(JSON.stringify(v).replaceAll(url, 'BASE'));
  expect(norm(await snapshot(clientFor(second, KEY)), second.url)).toEqual(norm(seen, server.url));

  await disk.free();
  const healed = await apply(second.url);
  expect(healed.code, healed.stderr).toBe(0);
  expect(healed.report).toMatchObject({ converged: true });
  await stop(second);
  const third = await start();
  const after = (await snapshot(clientFor(third, KEY))) as { tls: { description: string }[] };
  expect(after.tls).toHaveLength(8);
  for (const e of after.tls) expect(e.description.startsWith('v2 ')).toBe(true);
}, 120_000);
