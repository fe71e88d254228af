/**
 * A small, real file system that can fill up: a tmpfs mounted on a fresh directory under the
 * temp dir. The suite runs as root, so mounting must work: a failed mount throws (the tests
 * fail, they are never skipped). Unmount in `afterEach`/`afterAll`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Tmpfs {
  readonly dir: string;
  /** Fills the file system with `filler` until ENOSPC. */
  fill(): Promise<void>;
  /** Gives back the space `fill` took. */
  free(): Promise<void>;
  unmount(): Promise<void>;
}

export async function mountTmpfs(sizeBytes: number): Promise<Tmpfs> {
  const dir = await mkdtemp(join(tmpdir(), 'edgesync-tmpfs-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'edgesync-test', dir]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `cannot mount a tmpfs on ${dir} (these tests run as root and need one; they must not be skipped): ${String(err)}`,
    );
  }
  const filler = join(dir, 'filler');
  return {
    dir,
    async fill() {
      const fh = await open(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 0x2e);
      try {
        for (;;) await fh.write(chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        await fh.close();
      }
    },
    async free() {
      await truncate(filler, 0);
    },
    async unmount() {
      try {
        await run('umount', [dir]);
      } catch {
        // Something still has a file open there (a failed test): detach it anyway.
        await run('umount', ['-l', dir]);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
