/**
 * Reading a small setting file the command line points at (a control token, the owner file):
 * opened without blocking and the opened descriptor checked, so a FIFO or device put in its
 * place is refused instead of hanging the command, and capped, so a wrong path to a large file
 * is not read whole.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { FileRefusedError } from '../errors.js';

/** Setting files are a line or two; anything larger is not one. */
const MAX_BYTES = 64 * 1024;

/** The file's text; throws (ENOENT and the like, or a `FileRefusedError` saying what is wrong). */
export async function readSmallTextFile(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new FileRefusedError('not-a-file', 'not a regular file');
    if (info.size > MAX_BYTES) {
      throw new FileRefusedError('too-large', `larger than ${MAX_BYTES} bytes`);
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
