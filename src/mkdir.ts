/**
 * `makeDirectory`: `mkdir -p` that always settles. Node's own `mkdir(dir, { recursive: true })`
 * spins at 100% CPU forever, and never settles, when the kernel answers ENOENT for a child of a
 * directory that exists: procfs and sysfs do that (`--data /proc/x`), so a mistyped flag would
 * hang the process. This walk creates one level at a time and gives up when a level still
 * reports ENOENT after its parent was made or found.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

export async function makeDirectory(dir: string): Promise<void> {
  const target = path.resolve(dir);
  try {
    await mkdir(target);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      // Only an existing directory is success; a file of that name is the caller's error.
      if ((await stat(target)).isDirectory()) return;
      throw err;
    }
    if (code !== 'ENOENT') throw err;
    const parent = path.dirname(target);
    if (parent === target) throw err;
    await makeDirectory(parent);
  }
  // The parent exists now: a second ENOENT is final (procfs), never a reason to loop.
  try {
    await mkdir(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (!(await stat(target)).isDirectory()) throw err;
  }
}
