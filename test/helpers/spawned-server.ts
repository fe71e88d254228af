/**
 * Test helper: `edgesync server` as a child process (the installed or built executable), on
 * 127.0.0.1 port 0, with a fresh API key; resolves once it prints the URL it listens on.
 */
import { type SpawnOptions, spawn } from 'node:child_process';
import { generateApiKey } from '../../src/server/index.js';

export interface SpawnedServer {
  url: string;
  apiKey: string;
  stop(): Promise<void>;
}

/** `command args... server --port 0 --api-key KEY`, e.g. `npx edgesync` or `node bin/...`. */
export function spawnServer(
  command: string,
  args: string[],
  opts: SpawnOptions = {},
): Promise<SpawnedServer> {
  const apiKey = generateApiKey();
  const child = spawn(command, [...args, 'server', '--port', '0', '--api-key', apiKey], {
    ...opts,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      err += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m?.[1]) resolve({ url: m[1], apiKey, stop });
    });
    child.once('exit', (code) =>
      reject(new Error(`server exited (${code}) before listening:\n${err}`)),
    );
    child.once('error', reject);
  });
}
