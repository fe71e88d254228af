/**
 * One process per data directory: two servers appending to one journal would interleave their
 * records (duplicate sequence numbers) and each would serve a state the other does not see.
 *
 * The lock is a numbered symbolic link, `lock.<n>` -> `<pid>@<host>#<token>` (as Emacs locks
 * files); the holder is the process named by the highest-numbered one. `symlink` creates it
 * complete and atomically, failing if the name exists, so nobody reads a half-made lock, and
 * it needs no data block: a server still starts on a full disk. Taking over the lock of a dead
 * process never removes or rewrites it (two starters could both do that, each believing it
 * won): the newcomer claims the next number, and only one `symlink` to that name succeeds.
 * Whoever claims a number looks again and backs off if a higher one exists (it scanned before
 * someone else won). Liveness is more than `process.kill(pid, 0)`: a pid is reused (pid 1 of a
 * restarted container is always alive), so on Linux the lock also names when its holder started:
 * the boot id and the process's start in clock ticks since boot (`/proc/<pid>/stat`), written as
 * `<pid>@<host>+<boot>:<ticks>#<token>` (in the host part, where an older edgesync reads it as
 * part of the host name). A live pid whose start differs is another process, so the lock is
 * stale. A lock without it (an older edgesync's) is stale when the process of that pid started
 * after the lock was made (its mtime), with a margin for the boot time's one-second grain. A lock
 * naming our own pid that this process does not hold is a previous incarnation. Where `/proc`
 * cannot tell (another system, a hidden process), a live pid is a live holder. Pids mean
 * something on one machine (pid namespace) only: the directory must not be shared across
 * machines.
 */
import { randomBytes } from 'node:crypto';
import { lstat, readdir, readFile, readlink, symlink, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { StoreError } from './errors.js';

const LOCK_PATTERN = /^lock\.(\d+)$/;
const HOLDER_PATTERN = /^(\d+)@([^#+]*)(?:\+([0-9a-f-]+:\d+))?#([0-9a-f]+)$/;
/**
 * How much later than its lock a holder's computed start may be: the boot time `/proc/stat`
 * gives is in whole seconds, so a start computed from it is off by up to one.
 */
const START_MARGIN_MS = 2000;
/** Clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on the architectures Node runs on). */
const TICKS_PER_SECOND = 100;
/** Rounds of scan-and-claim before giving up (each lost round means another starter won). */
const MAX_ROUNDS = 20;

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
  /** `<boot id>:<start ticks>` of the holder, when the lock was written where /proc tells it. */
  readonly start: string | undefined;
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
  const token = randomBytes(6).toString('hex');
  // Host names hold none of @ + #; the replace only guards the format.
  const start = await processStart(process.pid);
  const me = `${process.pid}@${hostname().replace(/[@#+]/g, '_')}${start === undefined ? '' : `+${start}`}#${token}`;
  // Counted as held from before the link exists: another claim in this process that reads our
  // link while we still check it must see a live holder, not a previous run's leftover.
  heldHere.add(token);
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const top = await highest(dir);
      if (top?.holder !== undefined && (await alive(top.holder, join(dir, `lock.${top.n}`)))) {
        throw new StoreError(await busyMessage(dir, top.n, top.holder));
      }
      const n = (top?.n ?? 0) + 1;
      const name = join(dir, `lock.${n}`);
      try {
        await symlink(me, name);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      if (((await highest(dir))?.n ?? 0) > n) {
        await unlink(name).catch(() => undefined);
        continue;
      }
      await removeBelow(dir, n);
      return { release: () => release(name, token) };
    }
    throw new StoreError(`cannot lock ${dir}: other processes keep claiming it; try again`);
  } catch (err) {
    heldHere.delete(token);
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot lock ${dir}: ${errorMessage(err)}`, { cause: err });
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
  let target: string;
  try {
    target = await readlink(file);
  } catch (err) {
    // Removed meanwhile (released, or cleaned up by a new holder): not a live holder.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // EINVAL: not a symbolic link, so not one of our locks; unreadable, like a crash's leftover.
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return undefined;
    throw err;
  }
  const m = HOLDER_PATTERN.exec(target);
  const pid = Number(m?.[1]);
  if (m === null || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { pid, host: m[2] as string, start: m[3], token: m[4] as string };
}

async function alive(holder: Holder, file: string): Promise<boolean> {
  if (holder.pid === process.pid) return heldHere.has(holder.token);
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // The pid is taken: by the holder, or by a process that reused it.
  const start = await processStart(holder.pid);
  if (start === undefined) return true;
  if (holder.start !== undefined) return holder.start === start;
  const [startedAt, made] = await Promise.all([
    startedAtMs(start),
    lstat(file).then(
      (st) => st.mtimeMs,
      () => undefined,
    ),
  ]);
  return startedAt === undefined || made === undefined || startedAt <= made + START_MARGIN_MS;
}

/**
 * `<boot id>:<start in clock ticks since boot>` of a process, from /proc; undefined where /proc
 * does not tell (not Linux, a process hidden from us, gone).
 */
async function processStart(pid: number): Promise<string | undefined> {
  try {
    const [boot, stat] = await Promise.all([
      readFile('/proc/sys/kernel/random/boot_id', 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    // The command name (field 2) is in parentheses and may hold spaces and parentheses: the
    // fields are counted after its last `)`, from field 3; the start time is field 22.
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    if (ticks === undefined || !/^\d+$/.test(ticks)) return undefined;
    return `${boot.trim()}:${ticks}`;
  } catch {
    return undefined;
  }
}

/** When a process started, in ms since the epoch, from its `processStart` and the boot time. */
async function startedAtMs(start: string): Promise<number | undefined> {
  const ticks = Number(start.slice(start.lastIndexOf(':') + 1));
  const stat = await readFile('/proc/stat', 'utf8').catch(() => '');
  const btime = /^btime (\d+)$/m.exec(stat)?.[1];
  return btime === undefined ? undefined : Number(btime) * 1000 + (ticks * 1000) / TICKS_PER_SECOND;
}

async function busyMessage(dir: string, n: number, holder: Holder): Promise<string> {
  const since = await lstat(join(dir, `lock.${n}`)).then(
    (st) => `, since ${st.mtime.toISOString()}`,
    () => '',
  );
  return (
    `${dir} is in use by process ${holder.pid} (on ${holder.host}${since}): ` +
    'one process per data directory. Stop that process first, or use another directory (`edgesync run --state-dir`, `edgesync server --data`)'
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
