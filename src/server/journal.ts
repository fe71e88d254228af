/**
 * Persistence of the local server under `--data DIR`: an append-only log of mutations with
 * group commit, plus periodic snapshots.
 *
 * - Each record is one line, `<crc32 hex> <json>\n`, carrying a sequence number `s`.
 * - Group commit: records appended while a write+fdatasync is in flight wait and go out
 *   together in the next batch; `append()` resolves only after its own batch is synced. A
 *   write is acknowledged to the HTTP client only after that, so acknowledged writes survive
 *   `kill -9` (and power loss, as far as fdatasync is honoured).
 * - Recovery: `snapshot.json` (if any) names the current log and the last sequence number it
 *   contains; the log's records with a greater `s` are replayed, in sequence. Only an
 *   incomplete final record may be dropped (`./recovery.ts` says exactly what counts as one):
 *   it can only be the unsynced tail of the last batch, since earlier batches were synced
 *   before anything later was written. Any other damage (a bad checksum or a gap in the
 *   sequence followed by more data, CRLF line endings, a file of something else) refuses the
 *   start with the file and byte offset, and the file is left untouched; `salvage` starts
 *   anyway with every record whose checksum holds and moves the damaged file aside.
 * - Compaction: once the log outgrows `compactBytes` (and the last snapshot), the whole state
 *   is written to `snapshot.tmp`, synced and atomically renamed over `snapshot.json`, which
 *   names a fresh, empty log; the old log is then removed. A crash at any point leaves either
 *   the old snapshot+log or the new pair, and stray files are removed on start.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { type FileHandle, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { makeDirectory } from '../mkdir.js';
import { StoreError } from './errors.js';
import type { Mutation } from './model.js';
import { type SalvageReport, scanLog } from './recovery.js';
import type { Journal, StateSnapshot, Store } from './store.js';

export type { SalvageReport } from './recovery.js';

const SNAPSHOT = 'snapshot.json';
const SNAPSHOT_TMP = 'snapshot.tmp';
const FORMAT = 1;
const LOG_PATTERN = /^log-(\d+)\.jsonl$/;
export const DEFAULT_COMPACT_BYTES = 16 * 1024 * 1024;

interface SnapshotFile {
  readonly format: number;
  /** The last sequence number whose effect the state includes. */
  readonly seq: number;
  /** Generation of the log that continues this snapshot (`log-<gen>.jsonl`). */
  readonly gen: number;
  readonly state: StateSnapshot;
}

type Record_ = Mutation & { readonly s: number };

export interface OpenJournalOptions {
  readonly dir: string;
  readonly store: Store;
  readonly logger: Logger;
  /** Compact once the log is larger than this (and than the last snapshot). */
  readonly compactBytes?: number;
  /**
   * Start despite a damaged log: keep every record whose checksum holds, move the damaged file
   * to `<name>.corrupt` and write a clean log. Reported through `onSalvage`.
   */
  readonly salvage?: boolean;
  readonly onSalvage?: (report: SalvageReport) => void;
}

/** Loads the persisted state of `dir` into `store`, and returns the journal for new writes. */
export async function openJournal(options: OpenJournalOptions): Promise<FileJournal> {
  try {
    return await load(options);
  } catch (err) {
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot open the data directory ${options.dir}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

async function load(options: OpenJournalOptions): Promise<FileJournal> {
  const { dir, store, logger } = options;
  await makeDirectory(dir);
  let seq = 0;
  let gen = 0;
  let snapshotBytes = 0;
  const snapText = await readIfExists(join(dir, SNAPSHOT));
  if (snapText !== undefined) {
    const snap = decodeLine(snapText.replace(/\n$/, '')) as SnapshotFile | undefined;
    if (snap === undefined || snap.format !== FORMAT) {
      // Snapshots are renamed into place only once complete; a bad one is not a torn write.
      throw new StoreError(`${join(dir, SNAPSHOT)} is corrupt; refusing to start`);
    }
    store.load(snap.state);
    seq = snap.seq;
    gen = snap.gen;
    snapshotBytes = snapText.length;
  }
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
  const fh = await open(logPath, 'a+');
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
    fh,
    gen,
    seq,
    logBytes: offset,
    snapshotBytes,
    compactBytes: options.compactBytes ?? DEFAULT_COMPACT_BYTES,
  });
  store.setJournal(journal);
  return journal;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class FileJournal implements Journal {
  readonly #dir: string;
  readonly #store: Store;
  readonly #logger: Logger;
  readonly #compactBytes: number;
  #fh: FileHandle;
  #gen: number;
  #seq: number;
  #logBytes: number;
  #snapshotBytes: number;
  #pending: Buffer[] = [];
  #waiters: Waiter[] = [];
  #flushing: Promise<void> | undefined;
  #failed: StoreError | undefined;
  #closed = false;
  /** Counters for tests and logs. */
  readonly stats = { batches: 0, records: 0, compactions: 0 };

  constructor(init: {
    dir: string;
    store: Store;
    logger: Logger;
    fh: FileHandle;
    gen: number;
    seq: number;
    logBytes: number;
    snapshotBytes: number;
    compactBytes: number;
  }) {
    this.#dir = init.dir;
    this.#store = init.store;
    this.#logger = init.logger;
    this.#fh = init.fh;
    this.#gen = init.gen;
    this.#seq = init.seq;
    this.#logBytes = init.logBytes;
    this.#snapshotBytes = init.snapshotBytes;
    this.#compactBytes = init.compactBytes;
  }

  append(m: Mutation): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new StoreError('the store is closed'));
    this.#seq += 1;
    // Routes are logged as their own records; an edge record never carries them.
    const rec =
      m.k === 'https' && m.t === 'put'
        ? { ...m, r: { ...m.r, routes: [] }, s: this.#seq }
        : { ...m, s: this.#seq };
    this.#pending.push(Buffer.from(`${encodeLine(rec)}\n`));
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    this.#flushing ??= this.#flushLoop();
    return done;
  }

  async #flushLoop(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = Buffer.concat(this.#pending);
        const waiters = this.#waiters;
        this.#pending = [];
        this.#waiters = [];
        try {
          await this.#fh.write(batch);
          await this.#fh.datasync();
        } catch (err) {
          this.#fail(err, waiters);
          return;
        }
        this.#logBytes += batch.length;
        this.stats.batches += 1;
        this.stats.records += waiters.length;
        for (const w of waiters) w.resolve();
        if (this.#logBytes > this.#compactBytes && this.#logBytes > this.#snapshotBytes) {
          try {
            await this.#compact();
          } catch (err) {
            this.#fail(err, []);
            return;
          }
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  #fail(err: unknown, waiters: Waiter[]): void {
    this.#failed = new StoreError(`persisting failed: ${errorMessage(err)}`, { cause: err });
    this.#logger.error({ err }, 'persistent store failed; refusing further writes');
    for (const w of [...waiters, ...this.#waiters]) w.reject(this.#failed);
    this.#waiters = [];
    this.#pending = [];
  }

  /** Runs inside the flush loop, so nothing is written to the log meanwhile. */
  async #compact(): Promise<void> {
    const started = Date.now();
    // The in-memory state may already include records still pending in #pending: they carry
    // sequence numbers <= seq, so they are written to the new log but skipped on replay.
    const snap: SnapshotFile = {
      format: FORMAT,
      seq: this.#seq,
      gen: this.#gen + 1,
      state: this.#store.snapshot(),
    };
    const newLog = join(this.#dir, `log-${snap.gen}.jsonl`);
    const newFh = await open(newLog, 'w+');
    await newFh.sync();
    const text = `${encodeLine(snap)}\n`;
    const tmp = join(this.#dir, SNAPSHOT_TMP);
    await writeSynced(tmp, text);
    await rename(tmp, join(this.#dir, SNAPSHOT));
    syncDir(this.#dir);
    const oldFh = this.#fh;
    const oldLog = join(this.#dir, `log-${this.#gen}.jsonl`);
    this.#fh = newFh;
    this.#gen = snap.gen;
    this.#logBytes = 0;
    this.#snapshotBytes = text.length;
    this.stats.compactions += 1;
    await oldFh.close();
    await unlink(oldLog).catch(() => undefined);
    this.#logger.info(
      { gen: snap.gen, snapshotBytes: text.length, ms: Date.now() - started },
      'compacted the log into a snapshot',
    );
  }

  /** Waits for pending writes, then closes the log. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#flushing !== undefined) await this.#flushing;
    await this.#fh.close();
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

function decodeLine(line: string): unknown {
  if (line.length < 10 || line[8] !== ' ') return undefined;
  const json = line.slice(9);
  if (crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreError(`cannot read ${path}: ${errorMessage(err)}`, { cause: err });
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
