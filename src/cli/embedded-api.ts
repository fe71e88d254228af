/**
 * Where a running `edgesync run` serves its embedded Edge API, for the other commands of the
 * same directory: `run` records the URL and its pid in the state directory while the server
 * listens, and a command with no API configured names that URL and the key file in its error,
 * instead of leaving people to guess the way to the sandbox they are looking at. The key itself
 * stays in its own file (0600) and is never printed here.
 */
import { readFileSync, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The state directory `run` uses when `--state-dir` is not given (relative to its cwd). */
export const DEFAULT_STATE_DIR = '.edgesync';
const RECORD = 'embedded-api.json';
export const KEY_FILE = 'api-key';

export async function recordEmbeddedApi(stateDir: string, url: string): Promise<void> {
  await writeFile(path.join(stateDir, RECORD), `${JSON.stringify({ url, pid: process.pid })}\n`);
}

export async function clearEmbeddedApi(stateDir: string): Promise<void> {
  await rm(path.join(stateDir, RECORD), { force: true });
}

/**
 * The embedded API a live `run` in `cwd` serves (default state directory), or undefined: no
 * record, a record left by a process that is gone, or anything unreadable.
 */
export function runningEmbeddedApi(cwd: string): { url: string; keyFile: string } | undefined {
  const stateDir = path.join(cwd, DEFAULT_STATE_DIR);
  const file = path.join(stateDir, RECORD);
  try {
    const info = statSync(file);
    if (!info.isFile() || info.size > 4096) return undefined;
    const record = JSON.parse(readFileSync(file, 'utf8')) as { url?: unknown; pid?: unknown };
    if (typeof record.url !== 'string' || typeof record.pid !== 'number') return undefined;
    if (!alive(record.pid)) return undefined;
    return { url: record.url, keyFile: path.join(DEFAULT_STATE_DIR, KEY_FILE) };
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
