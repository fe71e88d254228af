/**
 * One process per data directory: two servers appending to one journal would interleave their
 * records (duplicate sequence numbers) and each would serve a state the other does not see.
 *
 * The lock is a numbered file, `lock.<n>`, holding `{pid, host, since, token}`; the holder is
 * the process named in the highest-numbered one. It is created complete and atomically
 * (written to a temporary file, then `link`ed to its name, which fails if the name exists), so
 * nobody ever reads a half-written lock. Taking over the lock of a dead process never removes
 * or rewrites it (which two starters could both do, each believing it won): the newcomer claims
 * the next number, and only one `link` to that name can succeed. Whoever claims a number then
 * looks again and backs off if a higher number exists (it scanned before someone else won).
 * Liveness is `process.kill(pid, 0)`; a lock naming our own pid that this process does not
 * hold is a previous incarnation (a container's restarted pid 1). Pids mean something within
 * one machine (pid namespace) only: the directory must not be shared across machines.
 */
import { randomUUID } from 'node:crypto';
import { link, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { StoreError } from './errors.js';

const LOCK_PATTERN = /^lock\.(\d+)$/;
/** Rounds of scan-and-claim before giving up (each lost round means another starter won). */
const MAX_ROUNDS = 20;

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
  readonly token: string;
}

export interface DirLock {
  /** Removes the lock (if it still is ours). */
  release(): Promise<void>;
}

/** Tokens of the locks this process holds (a second server in-process must be refused too). */
const heldHere = new Set<string>();

/**
 * Takes the lock of `dir` (which must exist), or throws a StoreError naming the holder's pid
 * and the directory.
 */
export async function lockDirectory(dir: string): Promise<DirLock> {
  const me: Holder = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    token: randomUUID(),
  };
  const draft = join(dir, `lock.draft-${me.token}`);
  await writeFile(draft, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o644 });
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const top = await highest(dir);
      if (top !== undefined && top.holder !== undefined && alive(top.holder)) {
        throw new StoreError(busyMessage(dir, top.holder));
      }
      const n = (top?.n ?? 0) + 1;
      const name = join(dir, `lock.${n}`);
      try {
        await link(draft, name);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      if (((await highest(dir))?.n ?? 0) > n) {
        await unlink(name).catch(() => undefined);
        continue;
      }
      heldHere.add(me.token);
      await removeBelow(dir, n);
      return { release: () => release(name, me.token) };
    }
    throw new StoreError(`cannot lock ${dir}: other processes keep claiming it; try again`);
  } catch (err) {
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot lock ${dir}: ${errorMessage(err)}`, { cause: err });
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

/** The highest-numbered lock file and its holder (undefined when unreadable: a crash's leftover). */
async function highest(dir: string): Promise<{ n: number; holder?: Holder } | undefined> {
  let n = 0;
  for (const name of await readdir(dir)) {
    const m = LOCK_PATTERN.exec(name);
    if (m !== null) n = Math.max(n, Number(m[1]));
  }
  if (n === 0) return undefined;
  const holder = await readHolder(join(dir, `lock.${n}`));
  return holder === undefined ? { n } : { n, holder };
}

async function readHolder(file: string): Promise<Holder | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    // Removed meanwhile by its new holder's clean-up, or released: not a live holder.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    const { pid, host, since, token } = value;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
    if (typeof token !== 'string') return undefined;
    return { pid, host: String(host), since: String(since), token };
  } catch {
    // Locks are linked into place complete: an unreadable one is what a power loss leaves.
    return undefined;
  }
}

function alive(holder: Holder): boolean {
  if (holder.pid === process.pid) return heldHere.has(holder.token);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function busyMessage(dir: string, holder: Holder): string {
  return (
    `${dir} is in use by process ${holder.pid} (on ${holder.host}, since ${holder.since}): ` +
    'one process per data directory. Stop that process first, or use another directory'
  );
}

async function removeBelow(dir: string, n: number): Promise<void> {
  for (const name of await readdir(dir)) {
    const m = LOCK_PATTERN.exec(name);
    if (m !== null && Number(m[1]) < n) await unlink(join(dir, name)).catch(() => undefined);
  }
}

async function release(file: string, token: string): Promise<void> {
  heldHere.delete(token);
  const holder = await readHolder(file).catch(() => undefined);
  if (holder?.token === token) await unlink(file).catch(() => undefined);
}
