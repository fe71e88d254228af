/**
 * The journal never drops acknowledged writes silently (issue 9): a table of damage cases, each
 * either a start with every record or a refusal naming the file and byte offset that leaves the
 * file untouched; `--salvage`; and a property that flips bits and cuts the file at random.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { openJournal } from '../../../src/server/journal.js';
import { Store } from '../../../src/server/store.js';
import { startTestServer } from '../../helpers/server.js';
import { runCli } from '../apply/helpers.js';
import { clientFor } from './client.js';

const KEY = 'journal-key';
let dir: string;
/** The log written by a real server: bot users a, b, c (records 1..3, each acknowledged). */
let pristine: Buffer;
let lineStarts: number[];

beforeAll(async () => {
  const seed = await mkdtemp(join(tmpdir(), 'edgesync-journal-seed-'));
  const server = await startTestServer({ dataDir: seed, apiKeys: [KEY] });
  const call = clientFor(server, KEY);
  for (const name of ['a', 'b', 'c'])
    expect((await call('POST', '/bot_users', { name })).status).toBe(201);
  await server.close();
  pristine = await readFile(join(seed, 'log-0.jsonl'));
  await rm(seed, { recursive: true, force: true });
  lineStarts = [0];
  for (
    let i = pristine.indexOf(10);
    i >= 0 && i < pristine.length - 1;
    i = pristine.indexOf(10, i + 1)
  ) {
    lineStarts.push(i + 1);
  }
  expect(lineStarts).toHaveLength(3);
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const log = () => join(dir, 'log-0.jsonl');
const at = (n: number) => lineStarts[n] as number;
const flip = (bytes: Buffer, offset: number, bit = 0): Buffer => {
  const copy = Buffer.from(bytes);
  copy[offset] = (copy[offset] as number) ^ (1 << bit);
  return copy;
};

/** Opens the journal the way the server does; the bot names it holds, oldest first. */
async function recover(salvage = false): Promise<{ names: string[]; store: Store }> {
  const store = new Store();
  const journal = await openJournal({ dir, store, logger: silentLogger(), salvage });
  await journal.close();
  const accounts = Object.values(store.snapshot().accounts);
  return { names: accounts.flatMap((a) => a?.bots.map((b) => b.name) ?? []), store };
}

type Damage = (log: Buffer) => Buffer;
// [case, damage, outcome: the names it starts with, or the refusal's offset and reason]
const CASES: [string, Damage, { names: string[] } | { offset: () => number; reason: RegExp }][] = [
  ['no damage', (b) => b, { names: ['a', 'b', 'c'] }],
  ['an empty file', () => Buffer.alloc(0), { names: [] }],
  [
    'a torn final record (half a line)',
    (b) => Buffer.concat([b, b.subarray(0, 40)]),
    { names: ['a', 'b', 'c'] },
  ],
  ['the last record cut in half', (b) => b.subarray(0, at(2) + 30), { names: ['a', 'b'] }],
  ['the last newline missing', (b) => b.subarray(0, b.length - 1), { names: ['a', 'b'] }],
  [
    'a zero-filled tail (a crash on some file systems)',
    (b) => Buffer.concat([b, Buffer.alloc(4096)]),
    { names: ['a', 'b', 'c'] },
  ],
  [
    'a flipped bit in the first record',
    (b) => flip(b, 20),
    { offset: () => 0, reason: /fails its checksum/ },
  ],
  [
    'a flipped bit in the middle record',
    (b) => flip(b, at(1) + 30, 3),
    { offset: () => at(1), reason: /fails its checksum/ },
  ],
  [
    'a flipped bit in the last complete record',
    (b) => flip(b, at(2) + 12, 1),
    { offset: () => at(2), reason: /fails its checksum/ },
  ],
  [
    'a flipped bit in a checksum',
    (b) => flip(b, at(1) + 2, 0),
    { offset: () => at(1), reason: /fails its checksum/ },
  ],
  [
    'the last newline turned into another byte',
    (b) => flip(b, b.length - 1, 0),
    { offset: () => at(2), reason: /stray bytes where its newline should be/ },
  ],
  [
    'a newline inside a record turned into another byte',
    (b) => flip(b, at(1) - 1, 0),
    { offset: () => 0, reason: /fails its checksum/ },
  ],
  [
    'a record cut out of the middle',
    (b) => Buffer.concat([b.subarray(0, at(1)), b.subarray(at(2))]),
    { offset: () => at(1), reason: /records 2\.\.2 are missing/ },
  ],
  [
    'CRLF line endings',
    (b) => Buffer.from(b.toString('utf8').replaceAll('\n', '\r\n')),
    { offset: () => 0, reason: /CRLF/ },
  ],
  [
    'a file of something else',
    () => Buffer.from('{"hello": "world"}\nnot a journal\n'),
    { offset: () => 0, reason: /not a journal record/ },
  ],
  [
    'garbage bytes with a newline after the last record',
    (b) => Buffer.concat([b, Buffer.from([0, 0, 0, 0xff, 0x0a, 0x41])]),
    { offset: () => pristine.length, reason: /not a journal record/ },
  ],
];

describe('journal damage', () => {
  it.each(CASES)('%s', async (_name, damage, outcome) => {
    const damaged = damage(pristine);
    await writeFile(log(), damaged);
    if ('names' in outcome) {
      expect((await recover()).names).toEqual(outcome.names);
      return;
    }
    const refused = recover().then(
      () => 'started',
      (err: Error) => err.message,
    );
    const message = await refused;
    expect(message).toContain(`${log()} is damaged at byte ${outcome.offset()}:`);
    expect(message).toMatch(outcome.reason);
    // Never truncated or rewritten.
    expect(await readFile(log())).toEqual(damaged);
    expect(await readdir(dir)).toEqual(['log-0.jsonl']);
  });

  it('--salvage keeps every intact record, moves the damaged file aside, and later writes persist', async () => {
    const damaged = flip(pristine, at(1) + 30, 3);
    await writeFile(log(), damaged);
    const reports: unknown[] = [];
    const store = new Store();
    const journal = await openJournal({
      dir,
      store,
      logger: silentLogger(),
      salvage: true,
      onSalvage: (r) => reports.push(r),
    });
    expect(reports).toEqual([
      {
        file: log(),
        movedTo: `${log()}.corrupt`,
        kept: 2,
        skipped: 1,
        keptBytes: expect.any(Number),
      },
    ]);
    expect(await readFile(`${log()}.corrupt`)).toEqual(damaged);
    const names = Object.values(store.snapshot().accounts).flatMap((a) =>
      a?.bots.map((b) => b.name),
    );
    expect(names).toEqual(['a', 'c']);
    await journal.close();
    // The clean log starts on its own next time, and a second salvage never overwrites the first.
    expect((await recover()).names).toEqual(['a', 'c']);
    await writeFile(
      log(),
      Buffer.concat([(await readFile(log())).subarray(0, 5), Buffer.from('x\n')]),
    );
    await recover(true);
    expect((await readdir(dir)).sort()).toEqual([
      'log-0.jsonl',
      'log-0.jsonl.corrupt',
      'log-0.jsonl.corrupt.1',
    ]);
  });

  it('property: bit flips and cuts never start the server with fewer intact records, silently', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ offset: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), {
          maxLength: 3,
        }),
        fc.option(fc.nat(), { nil: undefined }),
        async (flips, cut) => {
          let bytes: Buffer = Buffer.from(pristine);
          let firstDamage = bytes.length;
          for (const f of flips) {
            const offset = f.offset % bytes.length;
            bytes = flip(bytes, offset, f.bit);
            firstDamage = Math.min(firstDamage, offset);
          }
          if (cut !== undefined) {
            const end = cut % (bytes.length + 1);
            bytes = bytes.subarray(0, end);
            firstDamage = Math.min(firstDamage, end);
          }
          await rm(dir, { recursive: true, force: true });
          await mkdir(dir);
          await writeFile(log(), bytes);
          let names: string[];
          try {
            names = (await recover()).names;
          } catch (err) {
            // Refusing is always allowed, and says where.
            expect((err as Error).message).toMatch(/is damaged at byte \d+/);
            return;
          }
          // Every record whose line lies wholly before the first damaged byte is kept...
          const intact = ['a', 'b', 'c'].filter((_, i) => {
            const end = i + 1 < lineStarts.length ? at(i + 1) : pristine.length;
            return end <= firstDamage;
          });
          for (const name of intact) expect(names).toContain(name);
          // ...and nothing that was never written appears.
          for (const name of names) expect(['a', 'b', 'c']).toContain(name);
        },
      ),
      { seed: 20261125, numRuns: 300 },
    );
  });
});

describe('edgesync server with a damaged journal', () => {
  let server: Awaited<ReturnType<typeof startTestServer>> | undefined;
  afterAll(async () => {
    await server?.close();
  });

  it('refuses to start, naming the file and offset, and --salvage starts it', async () => {
    const damaged = flip(pristine, at(1) + 30, 3);
    await writeFile(log(), damaged);
    const ac = new AbortController();
    const refused = await runCli(['server', '--data', dir, '--port', '0'], { signal: ac.signal });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${log()} is damaged at byte ${at(1)}`);
    expect(await readFile(log())).toEqual(damaged);

    await expect(startTestServer({ dataDir: dir, apiKeys: [KEY] })).rejects.toThrow(
      /is damaged at byte/,
    );
    server = await startTestServer({ dataDir: dir, apiKeys: [KEY], salvage: true });
    const bots = (await clientFor(server, KEY)('GET', '/bot_users')).json.bot_users;
    expect(bots.map((b: { name: string }) => b.name)).toEqual(['c', 'a']);
  });
});
