/**
 * `makeDirectory` on the real file system: `mkdir -p` semantics, and it always settles, also
 * where Node's recursive mkdir spins forever (a child of /proc).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeDirectory } from '../../../src/mkdir.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-mkdir-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('makeDirectory', () => {
  it.each([
    ['a new directory', ['a']],
    ['nested new directories', ['a', 'b', 'c']],
    ['an existing directory', []],
  ])('creates %s', async (_what, parts) => {
    const target = join(dir, ...parts);
    await makeDirectory(target);
    await makeDirectory(target); // idempotent
    expect((await stat(target)).isDirectory()).toBe(true);
  });

  it.each([
    ['the path is a file', (file: string) => file, 'EEXIST'],
    ['a parent is a file', (file: string) => join(file, 'sub'), 'ENOTDIR'],
  ])('fails when %s', async (_what, target, code) => {
    const file = join(dir, 'file');
    await writeFile(file, 'x');
    await expect(makeDirectory(target(file))).rejects.toMatchObject({ code });
  });

  it('settles with an error under /proc instead of spinning', async () => {
    // Linux answers ENOENT there (Node's own recursive mkdir never returns); elsewhere /proc is
    // missing or read-only: an error either way.
    await expect(makeDirectory('/proc/edgesync-no-such/a/b')).rejects.toThrow();
  }, 5_000);
});
