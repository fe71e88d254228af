/**
 * `writeFileSet` on the real file system: all the files or none. A file that appears in the
 * output directory while the set is written (without overwrite) undoes every file already
 * moved; an output directory that resolves into a forbidden one is refused before anything is
 * made in it; the staging directory never outlives the call.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeWriteFs, type WriteFs, writeFileSet } from '../../../src/cli/write-set.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'edgesync-write-set-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const FILES = [
  { file: 'a.yaml', text: 'a\n' },
  { file: 'sub/b.yaml', text: 'b\n' },
  { file: 'c.yaml', text: 'c\n' },
];

describe('writeFileSet', () => {
  it('writes every file, made directories included, and leaves no staging directory', async () => {
    const out = path.join(root, 'out', 'deeper');
    await writeFileSet(out, FILES, { overwrite: false, shown: 'out/deeper' });
    expect((await readdir(out, { recursive: true })).sort()).toEqual([
      'a.yaml',
      'c.yaml',
      'sub',
      'sub/b.yaml',
    ]);
    expect(await readFile(path.join(out, 'sub', 'b.yaml'), 'utf8')).toBe('b\n');
  });

  it('a file that appears meanwhile (no overwrite) undoes the files already moved', async () => {
    const out = path.join(root, 'out');
    await mkdir(out);
    let links = 0;
    const racing: WriteFs = {
      ...nodeWriteFs,
      link: async (from, to) => {
        links += 1;
        // Someone writes c.yaml just before it is moved into place.
        if (links === 3) await writeFile(path.join(out, 'c.yaml'), 'theirs\n');
        await nodeWriteFs.link(from, to);
      },
    };
    await expect(
      writeFileSet(out, FILES, { overwrite: false, shown: 'out', fs: racing }),
    ).rejects.toThrow(/cannot write .*c\.yaml: EEXIST.*nothing was written to out/);
    // Theirs stays; ours are all gone, the directory made for sub/ too.
    expect((await readdir(out)).sort()).toEqual(['c.yaml']);
    expect(await readFile(path.join(out, 'c.yaml'), 'utf8')).toBe('theirs\n');
  });

  it('an output directory that resolves into a forbidden one is refused, nothing made', async () => {
    const source = path.join(root, 'source');
    await mkdir(source);
    await symlink(source, path.join(root, 'out'));
    await expect(
      writeFileSet(path.join(root, 'out'), FILES, {
        overwrite: true,
        shown: 'out',
        forbidden: [{ dir: source, what: 'the source directory' }],
      }),
    ).rejects.toThrow(/refusing to write into out: .* inside the source directory/);
    expect(await readdir(source)).toEqual([]);
  });
});
