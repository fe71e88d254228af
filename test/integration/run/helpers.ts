/**
 * Helpers for the end-to-end tests of `edgesync run` as a child process: spawning the compiled
 * CLI (`bin/edgesync.js`, so `npm run build` must have run), reading its `/status` and
 * `/metrics`, a recording proxy in front of the local server (the server-side view of every
 * request the daemon makes), manifest builders and bounded waits. Every child started here is
 * killed by `killChildren()` (call it in `afterEach`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import {
  type ApiClient,
  createApiClient,
  type LiveSnapshot,
  observe,
} from '../../../src/api/index.js';
import type { DaemonStatus } from '../../../src/daemon/types.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { assertFreshBuild } from '../../helpers/built.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const BIN = path.join(ROOT, 'bin', 'edgesync.js');

/** The children spawn the compiled CLI: fail with the remedy rather than a confusing crash. */
export function assertBuilt(): void {
  assertFreshBuild();
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-run-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns a value other than undefined/false; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(25);
  }
}

// ---------------------------------------------------------------------------------------------
// The daemon child

export interface DaemonChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:PORT` of the daemon's own HTTP server. */
  readonly base: string;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines (stdout). */
  logLines(): Record<string, unknown>[];
  status(): Promise<DaemonStatus>;
  metrics(): Promise<string>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/** SIGKILLs every child still running (afterEach), and waits for them to be gone. */
export async function killChildren(): Promise<void> {
  const alive = [...children];
  children.clear();
  await Promise.all(
    alive.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

export interface StartDaemonOptions {
  /** Arguments after `run` (the manifest directory first). */
  readonly args: readonly string[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  /** How long to wait for the status address. */
  readonly timeoutMs?: number;
}

const STATUS_LINE = /status on (http:\/\/[^\s/]+)\/status/;

/** Spawns `edgesync run ARGS --listen 127.0.0.1:0` and waits until it prints its status URL. */
export async function startDaemon(options: StartDaemonOptions): Promise<DaemonChild> {
  const child = spawn(process.execPath, [BIN, 'run', ...options.args, '--listen', '127.0.0.1:0'], {
    cwd: options.cwd ?? os.tmpdir(),
    // Only what the test gives: no EDGESYNC_* from the developer's shell leaks in.
    // No client budget against the test server unless a test sets one (it counts requests).
    env: { PATH: process.env.PATH ?? '', EDGESYNC_RATE_LIMIT: 'none', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const timeoutMs = options.timeoutMs ?? 15_000;
  const base = await Promise.race([
    waitFor('the daemon to print its status address', () => STATUS_LINE.exec(err)?.[1], timeoutMs),
    exited.then(({ code, signal }) => {
      throw new Error(`edgesync run exited early (${code ?? signal}): ${err}`);
    }),
  ]);
  const get = async (p: string): Promise<Response> => {
    const res = await fetch(`${base}${p}`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) throw new Error(`GET ${p}: ${res.status}`);
    return res;
  };
  return {
    child,
    pid: child.pid as number,
    base,
    stdout: () => out,
    stderr: () => err,
    logLines: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    status: async () => (await (await get('/status')).json()) as DaemonStatus,
    metrics: async () => (await get('/metrics')).text(),
    exited,
  };
}

/** The start time (epoch ms) of the last cycle, or -1 before the first one ends. */
export function lastCycleStart(status: DaemonStatus): number {
  const last = status.last_reconcile;
  return last === null ? -1 : Date.parse(last.at) - last.duration_ms;
}

/**
 * Waits for a cycle that *began* after `since` (so it read the files as they are now) and whose
 * status satisfies `accept`; returns that status.
 */
export function waitForCycle(
  daemon: DaemonChild,
  since: number,
  accept: (s: DaemonStatus) => boolean,
  timeoutMs = 10_000,
): Promise<DaemonStatus> {
  return waitFor(
    `a reconcile cycle begun after ${new Date(since).toISOString()}`,
    async () => {
      const s = await daemon.status();
      // Timestamps come from two processes' clocks on one machine: allow a millisecond of rounding.
      return lastCycleStart(s) >= since - 1 && accept(s) ? s : undefined;
    },
    timeoutMs,
  );
}

/** Sums a Prometheus counter's samples whose labels include every pair of `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// The recording proxy: what the server saw, in order, with times

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  /** When the request reached the proxy (epoch ms). */
  readonly at: number;
  /** The upstream status, once answered. */
  status?: number;
  /** When the upstream answer came back (epoch ms). */
  doneAt?: number;
}

export interface RecordingProxy {
  readonly url: string;
  readonly seen: SeenRequest[];
  /** Every non-GET request seen so far. */
  writes(): SeenRequest[];
  /** Holds each write this long before forwarding it (a hanging API call); 0 by default. */
  delayWritesMs: number;
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const seen: SeenRequest[] = [];
  const held = new Set<ReturnType<typeof setTimeout>>();
  const server = createServer((req, res) => {
    const entry: SeenRequest = { method: req.method ?? '', path: req.url ?? '', at: Date.now() };
    seen.push(entry);
    const delay = entry.method === 'GET' ? 0 : proxy.delayWritesMs;
    if (delay === 0) {
      forward(req, res, entry);
      return;
    }
    const timer = setTimeout(() => {
      held.delete(timer);
      forward(req, res, entry);
    }, delay);
    held.add(timer);
  });
  const forward = (req: IncomingMessage, res: ServerResponse, entry: SeenRequest): void => {
    const upstreamReq = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        if (up.statusCode !== undefined) entry.status = up.statusCode;
        entry.doneAt = Date.now();
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstreamReq.on('error', () => res.destroy());
    req.pipe(upstreamReq);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: RecordingProxy = {
    url: `http://127.0.0.1:${port}`,
    seen,
    writes: () => seen.filter((r) => r.method !== 'GET'),
    delayWritesMs: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of held) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}

// ---------------------------------------------------------------------------------------------
// The live state, read straight from the server (not through the proxy)

export function apiClient(url: string, apiKey: string): ApiClient {
  return createApiClient({ baseUrl: url, apiKey, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
}

export async function liveState(client: ApiClient): Promise<LiveSnapshot> {
  return observe(client);
}

/** `tls:NAME` / `https:NAME` of every edge owned by `owner`, sorted. */
export function ownedEdges(live: LiveSnapshot, owner = 'default'): string[] {
  const names: string[] = [];
  for (const [kind, edges] of [
    ['tls', live.tlsEdges],
    ['https', live.httpsEdges],
  ] as const) {
    for (const e of edges) {
      const meta = parseStoredMetadata(e.metadata);
      if (meta?.owner === owner) names.push(`${kind}:${meta.name}`);
    }
  }
  return names.sort();
}

// ---------------------------------------------------------------------------------------------
// Manifests

export async function writeYaml(file: string, docs: readonly Record<string, unknown>[]) {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, docs.map((d) => stringify(d)).join('---\n'));
}

export function tlsEdge(name: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'TLSEdge',
    name,
    description: `tcp ${name}`,
    metadata: { team: 'data' },
    hostports: [`${name}.example.com:443`],
    backend: { backend_id: `bkdtg_${name.replace(/[^a-z0-9]/g, '')}` },
    ...extra,
  };
}

export function httpsEdge(name: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'HTTPSEdge',
    name,
    description: `web ${name}`,
    metadata: { team: 'web' },
    hostports: [`${name}.example.com:443`],
    routes: [
      {
        match_type: 'path_prefix',
        match: '/',
        backend: { backend_id: 'bkdhr_web' },
        compression: {},
      },
    ],
    ...extra,
  };
}
