/**
 * Persistence of the local server under `--data DIR`: an append-only log of mutations with
 * group commit, plus periodic snapshots. The directory is locked (./lock.ts): one process
 * appends to it at a time.
 *
 * - Each record is one line, `<crc32 hex> <json>\n`, carrying a sequence number `s`.
 * - Group commit: records appended while a write+fdatasync is in flight wait and go out
 *   together in the next batch; `append()` resolves only after every byte of its own batch is
 *   written (short writes are continued) and synced. A write is acknowledged to the HTTP client
 *   only after that, so acknowledged writes survive `kill -9` (and power loss, as far as
 *   fdatasync is honoured).
 * - A failed batch (a full disk, an I/O error, a write that makes no progress) is undone in
 *   memory together with everything queued after it, answered as failed, and cut off the file
 *   (truncated back to the last durable record), so neither the next append nor the next start
 *   finds a torn record. Nothing stays failed: the next append simply tries again.
 * - Recovery: `snapshot.json` (if any) names the current log and the last sequence number it
 *   contains; the log's records with a greater `s` are replayed, in sequence. Only an
 *   incomplete final record may be dropped (`./journal-scan.ts` says exactly what counts as one):
 *   it can only be the unsynced tail of the last batch, since earlier batches were synced
 *   before anything later was written. Any other damage (a bad checksum or a gap in the
 *   sequence followed by more data, CRLF line endings, a file of something else) refuses the
 *   start with the file and byte offset, and the file is left untouched; `salvage` starts
 *   anyway with every record whose checksum holds and moves the damaged file aside.
 * - Compaction: once the log outgrows `compactBytes` (and the last snapshot), the whole state
 *   is written to `snapshot.tmp`, synced and atomically renamed over `snapshot.json`, which
 *   names a fresh, empty log; the old log is then removed. A crash at any point leaves either
 *   the old snapshot+log or the new pair, and stray files are removed on start.
 * - A snapshot is never one string: it is a head line (format, sequence number, log
 *   generation), one line per record (the mutations that rebuild the state, each checksummed
 *   like a log record) and an end line with their count, written in chunks of about
 *   `snapshotChunkBytes` and read back a line at a time, so a state past what one string can
 *   hold (about 512 MB in V8) is compacted and loaded like any other. A compaction that fails
 *   anyway (a full disk, a runtime limit) is logged, the log stays in use and the server keeps
 *   serving; it is tried again once the log has grown by a quarter of `compactBytes`. The
 *   one-line snapshots of earlier versions (format 1) are still read.
 */
import { closeSync, constants, fsyncSync, openSync } from 'node:fs';
import { type FileHandle, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { makeDirectory } from '../mkdir.js';
import { StoreError } from './errors.js';
import { type SalvageReport, scanLog } from './journal-scan.js';
import { type DirLock, lockDirectory } from './lock.js';
import type { Mutation } from './model.js';
import { type Journal, type StateSnapshot, type Store, snapshotMutations } from './store.js';

export type { SalvageReport } from './journal-scan.js';

const SNAPSHOT = 'snapshot.json';
const SNAPSHOT_TMP = 'snapshot.tmp';
/** The whole state on one line (read only: written by earlier versions). */
const FORMAT_ONE_LINE = 1;
/** A head line, a line per record, an end line (written and read a line at a time). */
const FORMAT = 2;
const LOG_PATTERN = /^log-(\d+)\.jsonl$/;
export const DEFAULT_COMPACT_BYTES = 16 * 1024 * 1024;
/** About how many bytes of a snapshot are written at once (and read at once on start). */
export const DEFAULT_SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

/** A snapshot's first line. Format 1 carries the state on it; format 2 the records after it. */
interface SnapshotHead {
  readonly format: number;
  /** The last sequence number whose effect the state includes. */
  readonly seq: number;
  /** Generation of the log that continues this snapshot (`log-<gen>.jsonl`). */
  readonly gen: number;
  readonly state?: StateSnapshot;
}

type Record_ = Mutation & { readonly s: number };

/**
 * The file operations of an append (and, separately, of a snapshot's chunks), injectable so
 * that tests can make them fail or fall short.
 */
export interface JournalIo {
  /** Writes up to `length` bytes of `buffer` from `offset` at file `position`. */
  write(
    fh: FileHandle,
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesWritten: number }>;
  /** Makes the written data durable (fdatasync). */
  sync(fh: FileHandle): Promise<void>;
}

export const nodeJournalIo: JournalIo = {
  write: (fh, buffer, offset, length, position) => fh.write(buffer, offset, length, position),
  sync: (fh) => fh.datasync(),
};

export interface OpenJournalOptions {
  readonly dir: string;
  readonly store: Store;
  readonly logger: Logger;
  /** Compact once the log is larger than this (and than the last snapshot). */
  readonly compactBytes?: number;
  /** The appends' file operations (tests inject short and failing writes). */
  readonly io?: JournalIo;
  /** The snapshots' chunk writes and sync (tests inject a compaction that fails). */
  readonly snapshotIo?: JournalIo;
  /** About how many bytes of a snapshot are written at once (default 1 MiB). */
  readonly snapshotChunkBytes?: number;
  /**
   * Start despite a damaged log: keep every record whose checksum holds, move the damaged file
   * to `<name>.corrupt` and write a clean log. Reported through `onSalvage`.
   */
  readonly salvage?: boolean;
  readonly onSalvage?: (report: SalvageReport) => void;
}

/**
 * Locks `dir`, loads its persisted state into `store`, and returns the journal for new writes.
 */
export async function openJournal(options: OpenJournalOptions): Promise<FileJournal> {
  let lock: DirLock | undefined;
  try {
    await makeDirectory(options.dir);
    lock = await lockDirectory(options.dir);
    return await load(options, lock);
  } catch (err) {
    await lock?.release().catch(() => undefined);
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot open the data directory ${options.dir}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

async function load(options: OpenJournalOptions, lock: DirLock): Promise<FileJournal> {
  const { dir, store, logger } = options;
  const snap = await readSnapshot(join(dir, SNAPSHOT), store);
  let seq = snap?.seq ?? 0;
  const gen = snap?.gen ?? 0;
  const snapshotBytes = snap?.bytes ?? 0;
  const logName = `log-${gen}.jsonl`;
  const logPath = join(dir, logName);
  const logText = await readFile(logPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return Buffer.alloc(0);
    throw new StoreError(`cannot read ${logPath}: ${err.message}`, { cause: err });
  });
  const scan = scanLog(logText, seq, decodeLine);
  let offset = scan.validBytes;
  let records = scan.records;
  if (scan.damage !== undefined) {
    if (!options.salvage) {
      throw new StoreError(
        `${logPath} is damaged at byte ${scan.damage.offset}: ${scan.damage.reason}; refusing to start ` +
          '(the file is left as it is; --salvage starts with every intact record and moves the damaged file aside)',
      );
    }
    // Renumbered from the snapshot on, so the clean log has no gap where damage was skipped.
    const renumbered = scan.records.map((r, i) => ({ ...r, s: seq + i + 1 }));
    const report = await salvageLog(dir, logName, logText, renumbered);
    options.onSalvage?.(report);
    logger.warn({ ...report }, 'salvaged a damaged log');
    offset = report.keptBytes;
    records = renumbered;
  }
  let replayed = 0;
  for (const rec of records as Record_[]) {
    if (rec.s <= seq) continue;
    store.apply(rec);
    seq = rec.s;
    replayed++;
  }
  // Not O_APPEND: each batch is written at the end of the durable records, by position.
  const fh = await open(logPath, constants.O_RDWR | constants.O_CREAT, 0o644);
  if (scan.damage === undefined && offset < logText.length) {
    logger.warn(
      { file: logPath, droppedBytes: logText.length - offset },
      'dropping the incomplete final record of the log (a torn write, never acknowledged)',
    );
    await fh.truncate(offset);
    await fh.sync();
  }
  await removeStrays(dir, logName);
  syncDir(dir);
  logger.info({ dir, replayed, seq }, 'persistent store loaded');
  const journal = new FileJournal({
    dir,
    store,
    logger,
    io: options.io ?? nodeJournalIo,
    snapshotIo: options.snapshotIo ?? nodeJournalIo,
    lock,
    fh,
    gen,
    seq,
    logBytes: offset,
    snapshotBytes,
    compactBytes: options.compactBytes ?? DEFAULT_COMPACT_BYTES,
    snapshotChunkBytes: options.snapshotChunkBytes ?? DEFAULT_SNAPSHOT_CHUNK_BYTES,
  });
  store.setJournal(journal);
  return journal;
}

interface Entry {
  readonly m: Mutation;
  readonly s: number;
  readonly line: Buffer;
  readonly undo: () => void;
  resolve(): void;
  reject(err: unknown): void;
}

export class FileJournal implements Journal {
  readonly #dir: string;
  readonly #store: Store;
  readonly #logger: Logger;
  readonly #compactBytes: number;
  readonly #snapshotChunkBytes: number;
  readonly #io: JournalIo;
  readonly #snapshotIo: JournalIo;
  readonly #lock: DirLock;
  #fh: FileHandle;
  #gen: number;
  /** The last sequence number handed out, and the last one that is durable. */
  #seq: number;
  #durableSeq: number;
  /** Bytes of the log that hold durable records: where the next batch is written. */
  #logBytes: number;
  /** A failed append may have left bytes after `#logBytes`; cut them before the next one. */
  #dirtyTail = false;
  #snapshotBytes: number;
  /** After a failed compaction, the log size at which it is tried again. */
  #compactRetryAt = 0;
  #queue: Entry[] = [];
  /** The promise of the newest entry: every earlier one settles before it. */
  #newest: Promise<void> | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;
  /** Counters for tests and logs. */
  readonly stats = { batches: 0, records: 0, compactions: 0 };

  constructor(init: {
    dir: string;
    store: Store;
    logger: Logger;
    io: JournalIo;
    snapshotIo: JournalIo;
    lock: DirLock;
    fh: FileHandle;
    gen: number;
    seq: number;
    logBytes: number;
    snapshotBytes: number;
    compactBytes: number;
    snapshotChunkBytes: number;
  }) {
    this.#dir = init.dir;
    this.#store = init.store;
    this.#logger = init.logger;
    this.#io = init.io;
    this.#snapshotIo = init.snapshotIo;
    this.#lock = init.lock;
    this.#fh = init.fh;
    this.#gen = init.gen;
    this.#seq = init.seq;
    this.#durableSeq = init.seq;
    this.#logBytes = init.logBytes;
    this.#snapshotBytes = init.snapshotBytes;
    this.#compactBytes = init.compactBytes;
    this.#snapshotChunkBytes = init.snapshotChunkBytes;
  }

  append(m: Mutation, undo: () => void): Promise<void> {
    if (this.#closed) {
      undo();
      return Promise.reject(new StoreError('the store is closed'));
    }
    this.#seq += 1;
    // Routes are logged as their own records; an edge record never carries them.
    const rec =
      m.k === 'https' && m.t === 'put'
        ? { ...m, r: { ...m.r, routes: [] }, s: this.#seq }
        : { ...m, s: this.#seq };
    const line = Buffer.from(`${encodeLine(rec)}\n`);
    const done = new Promise<void>((resolve, reject) =>
      this.#queue.push({ m, s: this.#seq, line, undo, resolve, reject }),
    );
    this.#newest = done;
    this.#flushing ??= this.#flushLoop();
    return done;
  }

  settled(): Promise<void> | undefined {
    return this.#seq === this.#durableSeq ? undefined : this.#newest;
  }

  async #flushLoop(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        try {
          await this.#persist(Buffer.concat(batch.map((e) => e.line)));
        } catch (err) {
          await this.#lose(err, batch);
          continue;
        }
        this.#durableSeq = (batch[batch.length - 1] as Entry).s;
        this.stats.batches += 1;
        this.stats.records += batch.length;
        for (const e of batch) e.resolve();
        if (
          this.#logBytes > this.#compactBytes &&
          this.#logBytes > this.#snapshotBytes &&
          this.#logBytes >= this.#compactRetryAt
        ) {
          await this.#compact();
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  /** Writes every byte at the end of the durable log and syncs; throws if any is missing. */
  async #persist(bytes: Buffer): Promise<void> {
    if (this.#dirtyTail) await this.#cutTail();
    this.#dirtyTail = true;
    await writeAll(this.#io, this.#fh, bytes, this.#logBytes);
    await this.#io.sync(this.#fh);
    this.#logBytes += bytes.length;
    this.#dirtyTail = false;
  }

  /** Cuts the log back to its last complete, durable record. */
  async #cutTail(): Promise<void> {
    await this.#fh.truncate(this.#logBytes);
    await this.#io.sync(this.#fh);
    this.#dirtyTail = false;
  }

  /**
   * A batch could not be made durable: it and everything queued after it (applied in memory
   * on top of it) are undone at once, newest first; the file is cut back so that the next
   * append (and the next start) begins at a record boundary; then they are answered as
   * failed. Nothing is sticky: the next append tries again, so the server recovers once space
   * returns.
   */
  async #lose(err: unknown, batch: Entry[]): Promise<void> {
    const lost = [...batch, ...this.#queue];
    this.#queue = [];
    for (let i = lost.length - 1; i >= 0; i--) (lost[i] as Entry).undo();
    this.#seq = this.#durableSeq;
    this.#logger.error(
      { err, lost: lost.length },
      'a journal append failed: its writes are undone and answered as failed',
    );
    // Cut before answering: a client told "not performed" must not find its record replayed
    // after a crash (complete lines of a half-written batch would pass their checksums).
    try {
      await this.#cutTail();
    } catch (cutErr) {
      // Retried before the next append; until it succeeds, appends fail.
      this.#logger.error({ err: cutErr }, 'cannot cut the log back after a failed append');
    }
    const error = new StoreError(`persisting failed: ${errorMessage(err)}`, { cause: err });
    for (const e of lost) e.reject(error);
  }

  /**
   * The durable state: mutations still queued are applied in memory but not yet written, so
   * they are undone for the snapshot and applied again (synchronously: nobody sees the gap).
   */
  #durableState(): StateSnapshot {
    const queued = this.#queue;
    for (let i = queued.length - 1; i >= 0; i--) (queued[i] as Entry).undo();
    try {
      return this.#store.snapshot();
    } finally {
      for (const e of queued) this.#store.apply(e.m);
    }
  }

  /**
   * Runs inside the flush loop, so nothing is written to the log meanwhile. Never throws: a
   * failed compaction (a full disk, a runtime limit) leaves the current log in use, is logged,
   * and is retried later; the server keeps serving either way.
   */
  async #compact(): Promise<void> {
    const started = Date.now();
    const head = { format: FORMAT, seq: this.#durableSeq, gen: this.#gen + 1 };
    const newLog = join(this.#dir, `log-${head.gen}.jsonl`);
    const tmp = join(this.#dir, SNAPSHOT_TMP);
    let newFh: FileHandle | undefined;
    let bytes: number;
    try {
      // Records are never changed in place (a change puts a new record), so this view stays
      // the durable state while the chunks are written and requests change the store.
      const state = this.#durableState();
      newFh = await open(newLog, 'w+');
      await newFh.sync();
      bytes = await writeSnapshot(tmp, head, state, this.#snapshotIo, this.#snapshotChunkBytes);
      await rename(tmp, join(this.#dir, SNAPSHOT));
    } catch (err) {
      await newFh?.close().catch(() => undefined);
      await unlink(newLog).catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      this.#compactRetryAt = this.#logBytes + Math.ceil(this.#compactBytes / 4);
      if (err instanceof RangeError) {
        this.#logger.error(
          { err, logBytes: this.#logBytes },
          'the state is too large to compact (a runtime limit); the log stays in use and keeps growing, the server keeps serving, and compaction is retried later',
        );
      } else {
        this.#logger.warn(
          { err },
          'compaction failed; the log stays in use, and compaction is retried later',
        );
      }
      return;
    }
    // From here on the snapshot on disk names the new log: switch to it whatever happens.
    try {
      syncDir(this.#dir);
    } catch (err) {
      this.#logger.warn({ err }, 'cannot sync the data directory after compaction');
    }
    const oldFh = this.#fh;
    const oldLog = join(this.#dir, `log-${this.#gen}.jsonl`);
    this.#fh = newFh;
    this.#gen = head.gen;
    this.#logBytes = 0;
    this.#dirtyTail = false;
    this.#compactRetryAt = 0;
    this.#snapshotBytes = bytes;
    this.stats.compactions += 1;
    await oldFh.close().catch(() => undefined);
    await unlink(oldLog).catch(() => undefined);
    this.#logger.info(
      { gen: head.gen, snapshotBytes: bytes, ms: Date.now() - started },
      'compacted the log into a snapshot',
    );
  }

  /** Waits for pending writes, then closes the log and releases the directory. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#flushing !== undefined) await this.#flushing;
    if (this.#dirtyTail) await this.#cutTail().catch(() => undefined);
    await this.#fh.close();
    await this.#lock.release();
  }
}

/**
 * Writes the kept records to a fresh log (temporary file, synced, renamed over the damaged one
 * after the damaged one was moved to `<name>.corrupt[.N]`). Never overwrites an earlier
 * `.corrupt` file.
 */
async function salvageLog(
  dir: string,
  logName: string,
  original: Buffer,
  records: readonly unknown[],
): Promise<SalvageReport> {
  const existing = new Set(await readdir(dir));
  let corrupt = `${logName}.corrupt`;
  for (let n = 1; existing.has(corrupt); n++) corrupt = `${logName}.corrupt.${n}`;
  const kept = Buffer.from(records.map((r) => `${encodeLine(r)}\n`).join(''));
  const tmp = join(dir, `${logName}.salvage`);
  await writeSynced(tmp, kept);
  await rename(join(dir, logName), join(dir, corrupt));
  await rename(tmp, join(dir, logName));
  syncDir(dir);
  const lines = countLines(original);
  return {
    file: join(dir, logName),
    movedTo: join(dir, corrupt),
    kept: records.length,
    skipped: Math.max(0, lines - records.length),
    keptBytes: kept.length,
  };
}

function countLines(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  // A final line without its newline is a record too (a torn or damaged one).
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) n++;
  return n;
}

/** Writes every byte of `bytes` at `position`, continuing short writes; throws if none progress. */
async function writeAll(
  io: JournalIo,
  fh: FileHandle,
  bytes: Buffer,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await io.write(fh, bytes, done, bytes.length - done, position + done);
    // A write that makes no progress would loop forever: treat it as the failure it is.
    if (!(bytesWritten > 0)) {
      throw new StoreError(`short write: ${done} of ${bytes.length} bytes written`);
    }
    done += bytesWritten;
  }
}

/**
 * Writes a snapshot to `file` a chunk at a time (never the state as one string): the head, a
 * line per record, the end line with their count; then syncs it. Returns its size in bytes.
 */
async function writeSnapshot(
  file: string,
  head: SnapshotHead,
  state: StateSnapshot,
  io: JournalIo,
  chunkBytes: number,
): Promise<number> {
  const fh = await open(file, 'w');
  try {
    let position = 0;
    let lines: string[] = [];
    let pending = 0;
    const flush = async () => {
      const bytes = Buffer.from(lines.join(''));
      lines = [];
      pending = 0;
      await writeAll(io, fh, bytes, position);
      position += bytes.length;
    };
    const add = async (value: unknown) => {
      const line = `${encodeLine(value)}\n`;
      lines.push(line);
      pending += Buffer.byteLength(line);
      if (pending >= chunkBytes) await flush();
    };
    await add(head);
    let count = 0;
    for (const m of snapshotMutations(state)) {
      await add(m);
      count += 1;
    }
    await add({ end: count });
    await flush();
    await io.sync(fh);
    return position;
  } finally {
    await fh.close();
  }
}

/**
 * Loads `file` into `store`, a line at a time; undefined when there is none. A snapshot is
 * renamed into place only once complete, so any damage (a bad checksum, a missing end line, a
 * count that does not match) is not a torn write: the start is refused.
 */
async function readSnapshot(
  file: string,
  store: Store,
): Promise<{ seq: number; gen: number; bytes: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreError(`cannot read ${file}: ${errorMessage(err)}`, { cause: err });
  }
  const corrupt = () => new StoreError(`${file} is corrupt; refusing to start`);
  try {
    let head: SnapshotHead | undefined;
    let count = 0;
    let ended = false;
    for await (const line of fileLines(fh)) {
      const value = decodeLine(line) as Record<string, unknown> | undefined;
      if (typeof value !== 'object' || value === null || ended) throw corrupt();
      if (head === undefined) {
        head = value as unknown as SnapshotHead;
        if (head.format === FORMAT_ONE_LINE && head.state !== undefined) {
          store.load(head.state);
          ended = true;
        } else if (head.format !== FORMAT) throw corrupt();
      } else if ('end' in value) {
        if (value.end !== count) throw corrupt();
        ended = true;
      } else {
        store.apply(value as unknown as Mutation);
        count += 1;
      }
    }
    if (head === undefined || !ended) throw corrupt();
    return { seq: head.seq, gen: head.gen, bytes: (await fh.stat()).size };
  } catch (err) {
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot read ${file}: ${errorMessage(err)}`, { cause: err });
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** The file's lines (without their `\n`), read a chunk at a time. */
async function* fileLines(fh: FileHandle): AsyncGenerator<string> {
  const chunk = Buffer.alloc(DEFAULT_SNAPSHOT_CHUNK_BYTES);
  // The start of a line that continues in the next chunk (copied: the chunk is reused).
  let partial: Buffer[] = [];
  for (;;) {
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    const read = chunk.subarray(0, bytesRead);
    let start = 0;
    for (let nl = read.indexOf(10); nl >= 0; nl = read.indexOf(10, start)) {
      partial.push(read.subarray(start, nl));
      yield Buffer.concat(partial).toString('utf8');
      partial = [];
      start = nl + 1;
    }
    if (start < bytesRead) partial.push(Buffer.from(read.subarray(start)));
  }
  // A last line without its newline (written so by hand): a line too.
  if (partial.length > 0) yield Buffer.concat(partial).toString('utf8');
}

/** Writes a whole file and fsyncs it, before it is renamed into place. */
async function writeSynced(file: string, data: string | Buffer): Promise<void> {
  const fh = await open(file, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function encodeLine(value: unknown): string {
  const json = JSON.stringify(value);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}`;
}

export function decodeLine(line: string): unknown {
  if (line.length < 10 || line[8] !== ' ') return undefined;
  const json = line.slice(9);
  if (crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** Logs of other generations and a half-written snapshot are leftovers of a crash. */
async function removeStrays(dir: string, current: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (
      (LOG_PATTERN.test(name) && name !== current) ||
      name === SNAPSHOT_TMP ||
      name === `${current}.salvage`
    ) {
      await unlink(join(dir, name)).catch(() => undefined);
    }
  }
}

/** Makes renames and creations in `dir` durable. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
