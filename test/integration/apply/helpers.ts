/**
 * Helpers for the applier's integration tests: manifest directories in temp dirs, the CLI run
 * in-process with captured streams, and live-state reads through a plain API client.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { stringify } from 'yaml';
import {
  type ApiClient,
  createApiClient,
  type LiveSnapshot,
  observe,
} from '../../../src/api/index.js';
import { main } from '../../../src/cli/main.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';

export async function tempDir(prefix = 'edgesync-apply-'): Promise<{
  dir: string;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes each document as its own file (`<kind>-<name>.yaml`), replacing the directory's files. */
export async function writeManifests(
  dir: string,
  docs: readonly Record<string, unknown>[],
): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const [i, doc] of docs.entries()) {
    const name = `${String(doc.kind).toLowerCase()}-${String(doc.name)}-${i}.yaml`;
    await writeFile(path.join(dir, name), stringify(doc));
  }
}

class Capture extends Writable {
  text = '';
  isTTY: boolean;
  constructor(isTTY = false) {
    super();
    this.isTTY = isTTY;
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString('utf8');
    cb();
  }
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCli(
  argv: readonly string[],
  options: {
    env?: Record<string, string | undefined>;
    cwd?: string;
    signal?: AbortSignal;
    tty?: boolean;
    /** A terminal's typed input (the confirmation prompt). */
    input?: string;
  } = {},
): Promise<CliRun> {
  const stdout = new Capture();
  const stderr = new Capture(options.tty ?? false);
  const stdin =
    options.input === undefined
      ? undefined
      : Object.assign(Readable.from([options.input]), { isTTY: true });
  const code = await main({
    ...(stdin === undefined ? {} : { stdin }),
    argv,
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    signal: options.signal ?? new AbortController().signal,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

export function apiClient(url: string, apiKey: string): ApiClient {
  return createApiClient({ baseUrl: url, apiKey, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
}

export async function snapshotOf(url: string, apiKey: string): Promise<LiveSnapshot> {
  const client = apiClient(url, apiKey);
  try {
    return await observe(client);
  } finally {
    await client.close();
  }
}

/**
 * Owned edges per `kind:name`, owned cloud endpoints per name, routes per `edge:match`, bot
 * users per name: more than one is a duplicate.
 */
export function duplicates(live: LiveSnapshot, owner = 'default'): string[] {
  const seen = new Map<string, number>();
  const bump = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
  for (const [kind, edges] of [
    ['tls', live.tlsEdges],
    ['https', live.httpsEdges],
  ] as const) {
    for (const e of edges) {
      const meta = parseStoredMetadata(e.metadata);
      if (meta?.owner === owner) bump(`${kind}:${meta.name}`);
    }
  }
  for (const e of live.cloudEndpoints) {
    const meta = parseStoredMetadata(e.metadata);
    if (e.type === 'cloud' && meta?.owner === owner) bump(`endpoint:${meta.name}`);
  }
  for (const e of live.httpsEdges) for (const r of e.routes) bump(`route:${e.id}:${r.match}`);
  for (const b of live.botUsers) bump(`bot:${b.name}`);
  return [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`);
}

export function apiEnv(url: string, apiKey: string): Record<string, string> {
  // Writing commands need an owner chosen on purpose; these tests all write as the default one.
  return {
    EDGESYNC_API_URL: url,
    EDGESYNC_API_KEY: apiKey,
    EDGESYNC_RATE_LIMIT: 'none',
    EDGESYNC_OWNER: 'default',
  };
}
