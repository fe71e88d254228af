/**
 * Starts the local Edge API server as a child process (`edgesync server --port 0`) for the
 * benchmarks, so load generator and server do not share one event loop, and returns its URL
 * once it reports it is listening.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/edgesync.js', import.meta.url));

export interface ChildServerOptions {
  readonly apiKeys: readonly string[];
  /** Persist under this directory (`--data`); in memory when absent. */
  readonly dataDir?: string;
  /** More `edgesync server` flags, e.g. `['--rate-limit', '120/2s']`. */
  readonly extraArgs?: readonly string[];
}

export async function startChildServer(
  options: ChildServerOptions,
): Promise<{ child: ChildProcess; url: string }> {
  const args = [BIN, 'server', '--port', '0'];
  if (options.dataDir !== undefined) args.push('--data', options.dataDir);
  args.push(...(options.extraArgs ?? []));
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      EDGESYNC_SERVER_API_KEYS: options.apiKeys.join(','),
      EDGESYNC_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 15_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
  return { child, url };
}
