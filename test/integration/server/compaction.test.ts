/**
 * The local server survives its own size: compaction never builds the state as one string (a
 * string limit a few kilobytes small stands in for V8's ~512 MB one), writes the snapshot in
 * chunks and reads it back a line at a time; a compaction that fails anyway is logged while the
 * server keeps serving, and nothing acknowledged is lost.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createLogger, silentLogger } from '../../../src/log.js';
import type { JournalIo } from '../../../src/server/index.js';
import { decodeLine, nodeJournalIo, openJournal } from '../../../src/server/journal.js';
import type { Mutation } from '../../../src/server/model.js';
import { Store } from '../../../src/server/store.js';
import { Capture } from '../../helpers/capture.js';
import { startTestServer } from '../../helpers/server.js';
import { clientFor } from './client.js';

let dir: string;
const KEY = 'compaction-key';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-compaction-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const bot = (i: number): Mutation => ({
  t: 'put',
  k: 'bot',
  a: 'acct',
  r: {
    id: `bot_${String(i).padStart(27, '0')}`,
    created_at: '2024-01-01T00:00:00Z',
    name: `bot-${i}-${'x'.repeat(100)}`,
    active: true,
  },
});

/** The bot users of a store, by ID. */
function bots(store: Store): string[] {
  return [...store.account('acct').bots.values()].map((b) => `${b.id} ${b.name}`);
}

it('writes the snapshot in chunks, never the state as one string, and loads it back', async () => {
  // What V8 refuses past ~512 MB, refused here past 4 KB: any string the size of the state.
  const LIMIT = 4096;
  const stringify = JSON.stringify;
  vi.spyOn(JSON, 'stringify').mockImplementation((...args: Parameters<typeof stringify>) => {
    const text = stringify(...args);
    if (text !== undefined && text.length > LIMIT) throw new RangeError('Invalid string length');
    return text;
  });
  const chunks: number[] = [];
  const recording: JournalIo = {
    write: (fh, buffer, offset, length, position) => {
      chunks.push(length);
      return nodeJournalIo.write(fh, buffer, offset, length, position);
    },
    sync: nodeJournalIo.sync,
  };
  const store = new Store();
  const journal = await openJournal({
    dir,
    store,
    logger: silentLogger(),
    compactBytes: 16 * 1024,
    snapshotChunkBytes: 1024,
    snapshotIo: recording,
  });
  // About 30 KB of state: several times the string limit.
  for (let i = 0; i < 200; i++) await store.commit(bot(i));
  expect(journal.stats.compactions).toBeGreaterThan(0);
  // Each chunk is about the chunk size (one record more at most), and there are many.
  expect(chunks.length).toBeGreaterThan(10);
  expect(Math.max(...chunks)).toBeLessThan(1024 + 300);
  const before = bots(store);
  expect(before).toHaveLength(200);
  await journal.close();
  vi.restoreAllMocks();

  // The snapshot: a head line, a line per record, an end line with their count.
  const lines = (await readFile(join(dir, 'snapshot.json'), 'utf8')).trimEnd().split('\n');
  expect(decodeLine(lines[0] as string)).toMatchObject({ format: 2 });
  expect(decodeLine(lines.at(-1) as string)).toEqual({ end: lines.length - 2 });

  const again = new Store();
  const reopened = await openJournal({ dir, store: again, logger: silentLogger() });
  try {
    expect(bots(again)).toEqual(before);
  } finally {
    await reopened.close();
  }
});

it('a state too large to compact is reported; the server keeps serving and loses nothing', async () => {
  const failing: JournalIo = {
    write: async () => {
      throw new RangeError('Invalid string length');
    },
    sync: nodeJournalIo.sync,
  };
  const log = new Capture();
  const first = await startTestServer({
    dataDir: dir,
    apiKeys: [KEY],
    compactBytes: 2048,
    snapshotIo: failing,
    logger: createLogger({ level: 'info', destination: log }),
  });
  const call = clientFor(first, KEY);
  const names: string[] = [];
  for (let i = 0; i < 60; i++) {
    names.push(`bot-${i}`);
    expect((await call('POST', '/bot_users', { name: `bot-${i}` })).status).toBe(201);
  }
  const reported = log.lines().filter((l) => /too large to compact/.test(String(l.msg)));
  expect(reported.length).toBeGreaterThan(0);
  expect(reported[0]).toMatchObject({ level: 50 });
  // Retried as the log grows, not after every write.
  expect(reported.length).toBeLessThan(20);
  // Still serving, reads and writes.
  expect((await call('GET', '/bot_users?limit=100')).json.bot_users).toHaveLength(60);
  expect((await call('POST', '/bot_users', { name: 'after' })).status).toBe(201);
  await first.close();

  const second = await startTestServer({ dataDir: dir, apiKeys: [KEY], compactBytes: 2048 });
  try {
    const listed = (await clientFor(second, KEY)('GET', '/bot_users?limit=100')).json.bot_users;
    expect(listed.map((b: { name: string }) => b.name).sort()).toEqual([...names, 'after'].sort());
  } finally {
    await second.close();
  }
});
