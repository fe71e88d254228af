/**
 * The journal's appends under injected faults (the journal's file operations are swapped, the
 * API is real): a short write is continued, a write that fails midway or makes no progress and
 * a failed fsync are answered 503 with everything they touched undone and the log cut back, the
 * next write succeeds without a restart, and a reader never sees a write that is then lost.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { JournalIo, RunningServer } from '../../../src/server/index.js';
import { decodeLine, nodeJournalIo } from '../../../src/server/journal.js';
import { scanLog } from '../../../src/server/journal-scan.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor, snapshot } from './client.js';

const KEY = 'faults-key';
let dir: string;
const servers: RunningServer[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-faults-'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await rm(dir, { recursive: true, force: true });
});

const enospc = () =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** The real file operations, with a switchable fault and an optional gate before each write. */
class FaultyIo implements JournalIo {
  mode: 'ok' | 'short' | 'fail-midway' | 'no-progress' = 'ok';
  failSyncs = 0;
  writes = 0;
  /** Writes wait for it; those that waited then fail (false) or go through (true). */
  gate: Promise<boolean> | undefined;

  async write(...args: Parameters<JournalIo['write']>): Promise<{ bytesWritten: number }> {
    this.writes += 1;
    const [fh, buffer, offset, length, position] = args;
    if (this.gate !== undefined) {
      if (!(await this.gate)) throw enospc();
      return nodeJournalIo.write(fh, buffer, offset, length, position);
    }
    switch (this.mode) {
      case 'ok':
        return nodeJournalIo.write(fh, buffer, offset, length, position);
      case 'short':
        return nodeJournalIo.write(fh, buffer, offset, Math.min(length, 7), position);
      case 'fail-midway':
        // Half of the batch lands, then the disk is full: what ENOSPC looks like for real.
        if (offset > 0) throw enospc();
        return nodeJournalIo.write(fh, buffer, offset, Math.ceil(length / 2), position);
      case 'no-progress':
        return { bytesWritten: 0 };
    }
  }

  async sync(fh: Parameters<JournalIo['sync']>[0]): Promise<void> {
    if (this.failSyncs > 0) {
      this.failSyncs -= 1;
      throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    }
    return nodeJournalIo.sync(fh);
  }
}

async function start(
  io?: JournalIo,
  compactBytes?: number,
): Promise<RunningServer & { call: Call }> {
  const server = await startTestServer({
    dataDir: dir,
    apiKeys: [KEY],
    ...(io === undefined ? {} : { journalIo: io }),
    ...(compactBytes === undefined ? {} : { compactBytes }),
  });
  servers.push(server);
  return Object.assign(server, { call: clientFor(server, KEY) });
}

async function restart(server: RunningServer): Promise<RunningServer & { call: Call }> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
  return start();
}

const norm = (v: unknown, url: string) => JSON.parse(JSON.stringify(v).replaceAll(url, 'BASE'));

async function logBytes(): Promise<Buffer> {
  const name = (await readdir(dir)).find((n) => /^log-\d+\.jsonl$/.test(n)) as string;
  return readFile(join(dir, name));
}

/** Only whole records: a start right now (after kill -9) would need no salvage. */
async function expectCleanLog(): Promise<void> {
  const bytes = await logBytes();
  const scan = scanLog(bytes, 0, decodeLine);
  expect(scan.damage).toBeUndefined();
  expect(scan.validBytes).toBe(bytes.length);
}

/** Some state to change: a TLS edge, HTTPS edges (one with a route), two bot users. */
async function populate(call: Call) {
  const tls = (await call('POST', '/edges/tls', { hostports: ['t.example.com:443'] })).json;
  const https = (await call('POST', '/edges/https', { hostports: ['h.example.com:443'] })).json;
  const doomed = (await call('POST', '/edges/https', { hostports: ['d.example.com:443'] })).json;
  await call('POST', `/edges/https/${doomed.id}/routes`, { match_type: 'path_prefix', match: '/' });
  const route = (
    await call('POST', `/edges/https/${https.id}/routes`, { match_type: 'path_prefix', match: '/' })
  ).json;
  const bots = [
    (await call('POST', '/bot_users', { name: 'one' })).json,
    (await call('POST', '/bot_users', { name: 'two' })).json,
  ];
  return { tls, https, doomed, route, bots };
}

/** Creates, updates and deletes of every kind, sent at once (several batches). */
function everyKindOfWrite(call: Call, s: Awaited<ReturnType<typeof populate>>) {
  return Promise.all([
    call('POST', '/edges/tls', { hostports: ['new.example.com:443'] }),
    call('PATCH', `/edges/tls/${s.tls.id}`, { hostports: ['moved.example.com:443'] }),
    call('DELETE', `/edges/https/${s.doomed.id}`),
    call('PATCH', `/edges/https/${s.https.id}/routes/${s.route.id}`, { match: '/x' }),
    call('POST', `/edges/https/${s.https.id}/routes`, { match_type: 'exact_path', match: '/y' }),
    call('PUT', `/edges/tls/${s.tls.id}/backend`, { backend_id: 'bkdtg_1' }),
    call('DELETE', `/bot_users/${s.bots[0].id}`),
    call('PATCH', `/bot_users/${s.bots[1].id}`, { active: false }),
    call('POST', '/bot_users', { name: 'three' }),
  ]);
}

it('a short write is continued: the record is whole, acknowledged and survives a restart', async () => {
  const io = new FaultyIo();
  io.mode = 'short';
  const server = await start(io);
  const names = Array.from({ length: 12 }, (_, i) => `bot-${i}`);
  const replies = await Promise.all(
    names.map((name) => server.call('POST', '/bot_users', { name })),
  );
  for (const r of replies) expect(r.status).toBe(201);
  expect(io.writes).toBeGreaterThan(names.length);
  await expectCleanLog();
  const again = await restart(server);
  const listed = (await again.call('GET', '/bot_users')).json.bot_users.map(
    (b: { name: string }) => b.name,
  );
  expect(listed.sort()).toEqual([...names].sort());
});

it.each([
  ['a write that fails midway (ENOSPC)', (io: FaultyIo) => (io.mode = 'fail-midway')],
  ['a write that makes no progress', (io: FaultyIo) => (io.mode = 'no-progress')],
  ['a failed fsync', (io: FaultyIo) => (io.failSyncs = 1_000)],
])(
  '%s: 503, every change undone, the log cut back; the next write succeeds without a restart',
  async (_, breakIt) => {
    const io = new FaultyIo();
    const server = await start(io);
    const state = await populate(server.call);
    const before = await snapshot(server.call);
    const size = (await logBytes()).length;

    breakIt(io);
    for (const r of await everyKindOfWrite(server.call, state)) {
      expect(r.status, r.text).toBe(503);
      expect(r.json).toMatchObject({ error_code: 'ERR_SVC_503', status_code: 503 });
    }
    expect(await snapshot(server.call)).toEqual(before);
    expect((await logBytes()).length).toBe(size);
    await expectCleanLog();

    io.mode = 'ok';
    io.failSyncs = 0;
    const replies = await everyKindOfWrite(server.call, state);
    for (const r of replies) expect(r.status, r.text).toBeLessThan(300);
    const after = await snapshot(server.call);
    expect(after).not.toEqual(before);
    await expectCleanLog();
    const again = await restart(server);
    expect(norm(await snapshot(again.call), again.url)).toEqual(norm(after, server.url));
  },
);

/** Holds the journal's writes until `open(ok)`; then those fail (ENOSPC) or go through. */
function gated(io: FaultyIo): { open: (ok: boolean) => void } {
  let release: (ok: boolean) => void = () => undefined;
  io.gate = new Promise<boolean>((resolve) => {
    release = resolve;
  });
  return {
    open(ok) {
      io.gate = undefined;
      release(ok);
    },
  };
}

it('a reader that saw a write being persisted waits for it, and never shows it if it is lost', async () => {
  const io = new FaultyIo();
  const server = await start(io);
  await server.call('POST', '/bot_users', { name: 'kept' });

  const gate = gated(io);
  const lostWrite = server.call('POST', '/bot_users', { name: 'lost' });
  await vi.waitFor(() => expect(io.writes).toBe(2));
  const gets = server.requests.GET ?? 0;
  const read = server.call('GET', '/bot_users');
  // The handler runs as the request arrives: once counted, the read has seen the pending write.
  await vi.waitFor(() => expect(server.requests.GET).toBe(gets + 1));
  gate.open(false);
  expect((await lostWrite).status).toBe(503);
  const names = (await read).json.bot_users.map((b: { name: string }) => b.name);
  expect(names).toEqual(['kept']);

  // The same with a write that succeeds: the reader shows it (once it is durable).
  const gate2 = gated(io);
  const keptWrite = server.call('POST', '/bot_users', { name: 'second' });
  await vi.waitFor(() => expect(io.writes).toBe(3));
  const read2 = server.call('GET', '/bot_users');
  await vi.waitFor(() => expect(server.requests.GET).toBe(gets + 2));
  gate2.open(true);
  expect((await keptWrite).status).toBe(201);
  const names2 = (await read2).json.bot_users.map((b: { name: string }) => b.name);
  expect(names2).toEqual(['second', 'kept']);
});

it('a refusal caused by a write that is then lost is decided again without it', async () => {
  const io = new FaultyIo();
  const server = await start(io);
  const gate = gated(io);
  const first = server.call('POST', '/edges/tls', { hostports: ['x.example.com:443'] });
  await vi.waitFor(() => expect(io.writes).toBe(1));
  const posts = server.requests.POST ?? 0;
  const second = server.call('POST', '/edges/tls', { hostports: ['x.example.com:443'] });
  await vi.waitFor(() => expect(server.requests.POST).toBe(posts + 1));
  gate.open(false);
  expect((await first).status).toBe(503);
  // Seen against the lost edge, this create was a hostport conflict (400); without it, it is not.
  const r = await second;
  expect(r.status, r.text).toBe(201);
  const live = (await server.call('GET', '/edges/tls')).json.tls_edges;
  expect(live.map((e: { id: string }) => e.id)).toEqual([r.json.id]);
});

it('a compaction while writes are queued snapshots only durable state: a queued write that is then lost stays lost', async () => {
  const io = new FaultyIo();
  const server = await start(io, 1024);
  const names: string[] = [];
  for (let i = 0; (await logBytes()).length < 900; i++) {
    names.push(`bot-${i}`);
    expect((await server.call('POST', '/bot_users', { name: `bot-${i}` })).status).toBe(201);
  }
  const gate = gated(io);
  const writes = io.writes;
  const crossing = server.call('POST', '/bot_users', { name: 'crossing' });
  await vi.waitFor(() => expect(io.writes).toBe(writes + 1));
  const posts = server.requests.POST ?? 0;
  const late = server.call('POST', '/bot_users', { name: 'late' });
  await vi.waitFor(() => expect(server.requests.POST).toBe(posts + 1));
  // The crossing batch goes through (and triggers the compaction); the queued one then fails.
  io.mode = 'fail-midway';
  gate.open(true);
  expect((await crossing).status).toBe(201);
  expect((await late).status).toBe(503);
  expect(await readdir(dir)).toContain('snapshot.json');
  const again = await restart(server);
  const listed = (await again.call('GET', '/bot_users?limit=100')).json.bot_users.map(
    (b: { name: string }) => b.name,
  );
  expect(listed.sort()).toEqual([...names, 'crossing'].sort());
});
