/**
 * The one harness for the CLI's long-running processes, shared by the benchmarks and the
 * end-to-end tests: spawn `edgesync server` or `edgesync run` (the built `bin/edgesync.js`, or
 * another command such as an installed `npx edgesync`), wait until it prints where it listens,
 * read the daemon's `/status` and `/metrics`, stop it. Also the one bounded poll, `waitFor`, so
 * that nothing here or in a caller waits a fixed time for a condition.
 *
 * It imports no vitest (the benchmarks run outside it). The processes it starts run the compiled
 * CLI, as a user does: a test that uses it checks, and a benchmark measures, that process.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DaemonStatus, ResourcePage, ResourceStatus } from '../src/daemon/types.js';
import { generateApiKey } from '../src/server/index.js';

/** The repository's root: this file runs from bench/ (tests) and from dist/bench/ (benchmarks). */
function repositoryRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(path.join(dir, 'bin', 'edgesync.js'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no bin/edgesync.js above ${import.meta.dirname}`);
    dir = up;
  }
  return dir;
}

export const ROOT = repositoryRoot();
/** The executable the package ships; it runs the bundle in dist/ (`npm run build`). */
export const BIN = path.join(ROOT, 'bin', 'edgesync.js');

/**
 * Polls `check` until it returns a value other than `undefined` or `false` and returns it; an
 * exception counts as "not yet". Fails after `timeoutMs`, naming `what` and the last exception.
 */
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
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// ---------------------------------------------------------------------------------------------
// Children

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface CliChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything the process has written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** Sends `signal` (SIGTERM unless said) unless it has exited already; resolves on exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

export interface SpawnCliOptions {
  /** Only these variables and PATH: nothing from the caller's shell leaks in. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The temporary directory unless said. */
  readonly cwd?: string;
  /** The program and its first arguments; `node bin/edgesync.js` unless said. */
  readonly command?: readonly [string, ...string[]];
  /** Node flags before the script, e.g. `--expose-gc` (only with the default command). */
  readonly nodeArgs?: readonly string[];
  /** Run as another user (the container image's). */
  readonly uid?: number;
  readonly gid?: number;
}

const children = new Set<CliChild>();

/** Spawns `edgesync ARGS`, keeping its output; `stopChildren()` ends it if the caller does not. */
export function spawnCli(args: readonly string[], options: SpawnCliOptions = {}): CliChild {
  const [program, ...first] = options.command ?? [
    process.execPath,
    ...(options.nodeArgs ?? []),
    BIN,
  ];
  const spawnOptions: SpawnOptions = {
    cwd: options.cwd ?? os.tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
    // A command of the caller's may be a wrapper that runs the CLI as its own child (`npx
    // edgesync`): it leads a process group of its own, and stopping it signals the whole group,
    // or the CLI would outlive the test.
    detached: options.command !== undefined,
  };
  const child = spawn(program, [...first, ...args], spawnOptions);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A program that cannot start never exits: report it as an exit all the same.
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const handle: CliChild = {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          if (spawnOptions.detached && child.pid !== undefined) process.kill(-child.pid, signal);
          else child.kill(signal);
        } catch {
          // Gone between the check and the signal: nothing to stop.
        }
      }
      return exited;
    },
  };
  children.add(handle);
  void exited.then(() => children.delete(handle));
  return handle;
}

/** SIGKILLs every child still running (a test's `afterEach`), and waits for them to be gone. */
export async function stopChildren(): Promise<void> {
  const alive = [...children];
  children.clear();
  await Promise.all(alive.map((c) => c.stop('SIGKILL')));
}

/**
 * Waits until the child's stderr matches `pattern` and returns the pattern's first group;
 * fails with the child's stderr if it exits first or the timeout passes.
 */
export async function waitForLine(
  cli: CliChild,
  pattern: RegExp,
  what: string,
  timeoutMs = 15_000,
): Promise<string> {
  let exit: Exit | undefined;
  void cli.exited.then((e) => {
    exit = e;
  });
  const found = await waitFor(
    what,
    (): { line: string } | { exit: Exit } | undefined => {
      const line = pattern.exec(cli.stderr())?.[1];
      if (line !== undefined) return { line };
      return exit === undefined ? undefined : { exit };
    },
    timeoutMs,
  );
  if ('line' in found) return found.line;
  const { code, signal } = found.exit;
  throw new Error(`edgesync exited early (${code ?? signal}) before ${what}: ${cli.stderr()}`);
}

// ---------------------------------------------------------------------------------------------
// `edgesync server`

export interface ServerChild extends CliChild {
  /** `http://127.0.0.1:PORT`, from its "listening on" line. */
  readonly url: string;
  /** The first API key it accepts. */
  readonly apiKey: string;
}

export interface StartServerChildOptions extends SpawnCliOptions {
  /** The keys it accepts; one fresh key unless said. */
  readonly apiKeys?: readonly string[];
  /** Persist under this directory (`--data`); in memory when absent. */
  readonly dataDir?: string;
  /** More `edgesync server` flags, e.g. `['--rate-limit', '120/2s']`. */
  readonly extraArgs?: readonly string[];
  readonly timeoutMs?: number;
}

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** `edgesync server --port 0 --api-key KEY...` (warnings only, unless `env` says otherwise). */
export async function startServerChild(
  options: StartServerChildOptions = {},
): Promise<ServerChild> {
  const apiKeys = options.apiKeys ?? [generateApiKey()];
  const args = ['server', '--port', '0'];
  for (const key of apiKeys) args.push('--api-key', key);
  if (options.dataDir !== undefined) args.push('--data', options.dataDir);
  args.push(...(options.extraArgs ?? []));
  const cli = spawnCli(args, { ...options, env: { EDGESYNC_LOG_LEVEL: 'warn', ...options.env } });
  try {
    const url = await waitForLine(cli, LISTENING, 'the server to listen', options.timeoutMs);
    return { ...cli, url, apiKey: apiKeys[0] as string };
  } catch (err) {
    await cli.stop('SIGKILL');
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// `edgesync run`

export interface DaemonChild extends CliChild {
  /** `http://127.0.0.1:PORT` of the daemon's own HTTP server. */
  readonly base: string;
  /** Parsed JSON log lines (stdout). */
  logLines(): Record<string, unknown>[];
  status(): Promise<DaemonStatus>;
  /** `/status/resources`: the first 1,000 managed resources (every one, in a test). */
  resources(): Promise<readonly ResourceStatus[]>;
  metrics(): Promise<string>;
}

export interface StartDaemonChildOptions extends SpawnCliOptions {
  /** Arguments after `run` (the manifest directory first). */
  readonly args: readonly string[];
  /** How long to wait for the status address. */
  readonly timeoutMs?: number;
}

const STATUS_LINE = /status on (http:\/\/[^\s/]+)\/status/;

/**
 * `edgesync run ARGS --listen 127.0.0.1:0`, waiting until it prints its status address. No
 * client budget against a test server unless the caller sets one (`EDGESYNC_RATE_LIMIT`).
 */
export async function startDaemonChild(options: StartDaemonChildOptions): Promise<DaemonChild> {
  const cli = spawnCli(['run', ...options.args, '--listen', '127.0.0.1:0'], {
    ...options,
    env: { EDGESYNC_RATE_LIMIT: 'none', ...options.env },
  });
  let base: string;
  try {
    base = await waitForLine(
      cli,
      STATUS_LINE,
      'the daemon to print its status address',
      options.timeoutMs,
    );
  } catch (err) {
    await cli.stop('SIGKILL');
    throw err;
  }
  const get = async (p: string): Promise<Response> => {
    const res = await fetch(`${base}${p}`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`GET ${p}: ${res.status}`);
    return res;
  };
  return {
    ...cli,
    base,
    logLines: () =>
      cli
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    status: async () => (await (await get('/status')).json()) as DaemonStatus,
    resources: async () =>
      ((await (await get('/status/resources?limit=1000')).json()) as ResourcePage).resources,
    metrics: async () => (await get('/metrics')).text(),
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
  daemon: Pick<DaemonChild, 'status'>,
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

/** A loopback proxy in front of `target` noting when each request reaches it (one clock). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const seen: SeenRequest[] = [];
  const held = new Set<ReturnType<typeof setTimeout>>();
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
