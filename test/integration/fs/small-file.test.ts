/**
 * `readSmallTextFile` on the real file system: a setting file that is not a regular file, or is
 * too large, is refused with a `FileRefusedError` (never waited on, never read whole).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSmallTextFile } from '../../../src/cli/small-file.js';
import { EdgesyncError, FileRefusedError } from '../../../src/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-small-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readSmallTextFile', () => {
  it('reads a small regular file', async () => {
    await writeFile(join(dir, 'owner'), 'team-a\n');
    expect(await readSmallTextFile(join(dir, 'owner'))).toBe('team-a\n');
  });

  it.each([
    [
      'a named pipe',
      'not-a-file',
      'not a regular file',
      (f: string) => execFileSync('mkfifo', [f]),
    ],
    ['a directory', 'not-a-file', 'not a regular file', (f: string) => mkdir(f)],
    [
      'a file over 64 KiB',
      'too-large',
      'larger than 65536 bytes',
      (f: string) => writeFile(f, 'x'.repeat(64 * 1024 + 1)),
    ],
  ])('refuses %s with a FileRefusedError', async (_what, reason, message, make) => {
    const file = join(dir, 'setting');
    await make(file);
    const err = await readSmallTextFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileRefusedError);
    expect(err).toBeInstanceOf(EdgesyncError);
    expect(err).toMatchObject({ code: 'ES_FILE_REFUSED', reason, message });
  });

  it('passes a missing file on as the system error (callers treat ENOENT as "no file")', async () => {
    await expect(readSmallTextFile(join(dir, 'missing'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
