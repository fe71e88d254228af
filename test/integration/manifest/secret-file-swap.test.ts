/**
 * A `{ file: }` secret swapped for a named pipe between any check and the read: the read must
 * refuse it, never wait on it (a blocked synchronous read stalls `validate` and the daemon, its
 * `/healthz` and its SIGTERM handler included). The swap is simulated by letting `statSync` see
 * the regular file that was there a moment before; a writer on the pipe makes a blocking read
 * return (with the pipe's bytes) instead of hanging the test run.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { createRefReader } from '../../../src/manifest/loader.js';

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, statSync: vi.fn(real.statSync) };
});

const actual = await vi.importActual<typeof import('node:fs')>('node:fs');
// Undone last first: the writer is killed and gone before its directory is removed (a shell
// that starts late would otherwise create `key.txt` as a regular file mid-removal).
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it('refuses a secret file that became a FIFO after it was checked, without waiting on it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'edgesync-fifo-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const regular = path.join(dir, 'was-regular.txt');
  writeFileSync(regular, 'old');
  const pipe = path.join(dir, 'key.txt');
  execFileSync('mkfifo', [pipe]);
  // What a check made just before the swap saw: the regular file.
  const before = fs.statSync(regular);
  vi.mocked(fs.statSync).mockImplementation(((p: fs.PathLike) =>
    String(p) === pipe ? before : actual.statSync(p)) as typeof fs.statSync);
  const writer: ChildProcess = spawn('sh', ['-c', `printf swapped > "${pipe}"`], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
  cleanups.push(async () => {
    writer.kill('SIGKILL');
    await exited;
  });

  const reader = createRefReader(dir, { env: {}, secretDirs: [], maxFileBytes: 1024 });
  const result = reader.file('a.yaml', 'key.txt');

  expect(result).toEqual({ ok: false, message: 'key.txt is not a file' });
});
