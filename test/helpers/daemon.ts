/**
 * `edgesync run` in this process, through `main()` with captured output and its own abort
 * signal: the same face as the harness's child daemon (`base`, the output, `/status`,
 * `/metrics`), without the price of a process. Tests that need a process (signals, kill -9, an
 * exit code seen by a parent) use `startDaemonChild` from bench/harness.ts instead.
 */
import { type DaemonChild, waitFor } from '../../bench/harness.js';
import { main } from '../../src/cli/main.js';
import type { DaemonStatus, ResourcePage } from '../../src/daemon/types.js';
import { Capture } from './capture.js';

export interface InProcessDaemon
  extends Pick<
    DaemonChild,
    'base' | 'stdout' | 'stderr' | 'logLines' | 'status' | 'resources' | 'metrics'
  > {
  /** The command's exit code, once it has returned. */
  readonly exited: Promise<number>;
  /** Aborts the command's signal (as SIGTERM does from bin/) and waits for its exit code. */
  stop(): Promise<number>;
}

export interface StartDaemonOptions {
  /** Arguments after `run` (the manifest directory first). */
  readonly args: readonly string[];
  readonly cwd: string;
  /** The whole environment the command sees (nothing of this process's leaks in). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long to wait for the status address. */
  readonly timeoutMs?: number;
}

const running = new Set<InProcessDaemon>();

const STATUS_LINE = /status on (http:\/\/[^\s/]+)\/status/;

/**
 * `edgesync run ARGS --listen 127.0.0.1:0` in-process, waiting until it prints its status
 * address. No client budget against a test server unless the caller sets one.
 */
export async function startDaemon(options: StartDaemonOptions): Promise<InProcessDaemon> {
  const stdout = new Capture();
  const stderr = new Capture();
  const controller = new AbortController();
  const exited = main({
    argv: ['run', ...options.args, '--listen', '127.0.0.1:0'],
    stdout,
    stderr,
    env: { EDGESYNC_RATE_LIMIT: 'none', ...options.env },
    cwd: options.cwd,
    signal: controller.signal,
  });
  let code: number | undefined;
  let daemon: InProcessDaemon | undefined;
  void exited.then((c) => {
    code = c;
  });
  const stop = (): Promise<number> => {
    controller.abort(new Error('SIGTERM'));
    if (daemon !== undefined) running.delete(daemon);
    return exited;
  };
  const found = await waitFor(
    'the daemon to print its status address',
    () => STATUS_LINE.exec(stderr.text)?.[1] ?? (code === undefined ? undefined : { code }),
    options.timeoutMs,
  ).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  if (typeof found !== 'string') {
    throw new Error(`edgesync run returned ${found.code} before listening: ${stderr.text}`);
  }
  const base = found;
  const get = async (p: string): Promise<Response> => {
    const res = await fetch(`${base}${p}`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`GET ${p}: ${res.status}`);
    return res;
  };
  daemon = {
    base,
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    logLines: () => stdout.lines(),
    status: async () => (await (await get('/status')).json()) as DaemonStatus,
    resources: async () =>
      ((await (await get('/status/resources?limit=1000')).json()) as ResourcePage).resources,
    metrics: async () => (await get('/metrics')).text(),
    exited,
    stop,
  };
  running.add(daemon);
  return daemon;
}

/** Stops every daemon still running (a test's `afterEach`), and waits for them to return. */
export async function stopDaemons(): Promise<void> {
  const all = [...running];
  running.clear();
  await Promise.all(all.map((d) => d.stop()));
}
