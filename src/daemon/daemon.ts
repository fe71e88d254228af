/**
 * The long-running controller around an injected reconcile step: triggers (file watcher,
 * periodic resync, webhook), git-sync link resolution, backoff, status, metrics and the HTTP
 * server. The reconcile step itself (load, observe, plan, apply) is passed in; see types.ts.
 *
 * Contract:
 *
 *   createDaemon(options: DaemonOptions): Daemon
 *
 *   interface Daemon {
 *     start(): Promise<void>;   // binds HTTP, starts the watchers, begins the first cycle
 *     trigger(reason?: TriggerReason): void;   // default 'manual'; coalesced, single flight
 *     stop(): Promise<void>;    // graceful; idempotent; see below
 *     status(): DaemonStatus;   // the /status document
 *     readonly ready: boolean;  // true after the first successful cycle (sticky)
 *     readonly address: ListenAddress | undefined;   // the bound address once started
 *     readonly closed: Promise<void>;   // resolves when stop() has finished
 *     readonly metrics: DaemonMetrics;
 *   }
 *
 * Each cycle: resolve the path afresh (a missing/unreadable directory records an error and
 * backs off: the reconcile step is never called without an existing directory), re-point the
 * watchers, call `reconcile`, record the report (status, metrics, one log line).
 *
 * `stop()`: refuses new triggers (webhook answers 503), clears the timers, closes the watchers,
 * aborts the cycle in flight through its signal (it finishes its current API call), waits for it
 * up to `graceMs`, closes the HTTP server, resolves. Aborting `options.signal` calls `stop()`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ConfigError, errorMessage, ManifestDirError, ManifestError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import { createDaemonHttpHandler } from './http.js';
import { DEFAULT_LISTEN, type ListenAddress } from './listen.js';
import { type CycleOutcome, createReconcileLoop } from './loop.js';
import { createDaemonMetrics, type DaemonMetrics } from './metrics.js';
import { findAnchor, type ResolvedDir, resolveManifestDir, sameResolution } from './resolve.js';
import {
  type BackoffOptions,
  type DaemonStatus,
  EMPTY_SUMMARY,
  type ReconcileFn,
  type ReconcileReport,
  realTimers,
  type StatusDiagnostic,
  SUCCESS_RESULTS,
  type Timers,
  type TriggerReason,
} from './types.js';
import { createManifestWatcher } from './watch.js';

export interface DaemonOptions {
  /** The manifest directory; may be (or go through) a git-sync symlink. Relative: to the process cwd. */
  readonly dir: string;
  readonly reconcile: ReconcileFn;
  /** Periodic resync. Default 60 s. */
  readonly intervalMs?: number;
  /** Quiet time after the last file event before a cycle. Default 250 ms. */
  readonly debounceMs?: number;
  /** Longest a stream of file events can postpone a cycle. Default 10 × debounceMs. */
  readonly debounceMaxMs?: number;
  /** Failure backoff. Default base 1 s, cap 5 min. */
  readonly backoff?: Partial<BackoffOptions>;
  /** How long stop() waits for the cycle in flight. Default 10 s. */
  readonly graceMs?: number;
  /** HTTP address (port 0: any free port). Default 127.0.0.1:9090. `false`: no HTTP server. */
  readonly listen?: ListenAddress | false;
  /** File-system triggers. Default true. */
  readonly watch?: boolean;
  /** Pass a child logger, e.g. `root.child({ module: 'daemon' })`. */
  readonly logger?: Logger;
  /** Pass one when the API client must feed it too; default: a fresh registry. */
  readonly metrics?: DaemonMetrics;
  /** Aborting it stops the daemon (the command passes its SIGINT/SIGTERM signal). */
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  readonly timers?: Timers;
  /**
   * Called after every cycle, once its report is recorded (nothing of the cycle is referenced
   * any more). `edgesync run` passes a full garbage collection (memory.ts).
   */
  readonly afterCycle?: () => void;
}

export interface Daemon {
  start(): Promise<void>;
  trigger(reason?: TriggerReason): void;
  stop(): Promise<void>;
  status(): DaemonStatus;
  readonly ready: boolean;
  readonly address: ListenAddress | undefined;
  readonly closed: Promise<void>;
  readonly metrics: DaemonMetrics;
}

export const DAEMON_DEFAULTS = {
  intervalMs: 60_000,
  debounceMs: 250,
  backoff: { baseMs: 1000, maxMs: 300_000 },
  graceMs: 10_000,
} as const;

/** setTimeout's ceiling: longer delays fire at once in Node, so they are refused up front. */
const MAX_DELAY_MS = 2_147_483_647;

function checkMs(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min || value > MAX_DELAY_MS) {
    throw new ConfigError(`${name} must be between ${min} and ${MAX_DELAY_MS} ms, got ${value}`);
  }
  return value;
}

interface LastCycle {
  readonly result: ReconcileReport['result'];
  readonly reason: TriggerReason;
  readonly revision: string | undefined;
  readonly at: number;
  readonly durationMs: number;
  readonly summary: ReconcileReport['summary'];
  readonly writes: number;
  readonly outOfSync: number | undefined;
}

export function createDaemon(options: DaemonOptions): Daemon {
  const absDir = path.resolve(options.dir);
  const intervalMs = checkMs('interval', options.intervalMs ?? DAEMON_DEFAULTS.intervalMs, 1);
  const debounceMs = checkMs('debounce', options.debounceMs ?? DAEMON_DEFAULTS.debounceMs, 0);
  const debounceMaxMs = checkMs('debounce max', options.debounceMaxMs ?? debounceMs * 10, 0);
  const backoff: BackoffOptions = {
    baseMs: checkMs('backoff base', options.backoff?.baseMs ?? DAEMON_DEFAULTS.backoff.baseMs, 1),
    maxMs: checkMs('backoff cap', options.backoff?.maxMs ?? DAEMON_DEFAULTS.backoff.maxMs, 1),
  };
  if (backoff.maxMs < backoff.baseMs) {
    throw new ConfigError(
      `backoff cap (${backoff.maxMs} ms) is below its base (${backoff.baseMs} ms)`,
    );
  }
  const graceMs = checkMs('grace', options.graceMs ?? DAEMON_DEFAULTS.graceMs, 0);
  const listen = options.listen ?? DEFAULT_LISTEN;
  const watchEnabled = options.watch ?? true;
  const logger = options.logger ?? silentLogger();
  const metrics = options.metrics ?? createDaemonMetrics();
  const now = options.now ?? Date.now;
  const timers = options.timers ?? realTimers;
  const afterCycle = () => {
    try {
      options.afterCycle?.();
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'after-cycle hook failed');
    }
  };

  let started: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  let accepting = false;
  let everReady = false;
  let server: Server | undefined;
  let address: ListenAddress | undefined;
  let lastResolved: ResolvedDir | undefined;
  let last: LastCycle | undefined;
  let lastSuccessAt: number | undefined;
  let lastError: { message: string; at: number } | undefined;
  let diagnostics: Record<string, StatusDiagnostic[]> = {};
  let warnings: readonly string[] = [];
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });

  const watcher = createManifestWatcher({
    logger,
    onChange: (kind, file) => {
      logger.debug({ kind, file }, 'manifest change seen');
      loop.notifyChange(kind);
    },
  });

  const loop = createReconcileLoop({
    cycle: async (reason, signal) => {
      try {
        return await runCycle(reason, signal);
      } finally {
        afterCycle();
      }
    },
    intervalMs,
    debounceMs,
    debounceMaxMs,
    backoff,
    timers,
    now,
    onCycleError: (err) => logger.error({ err: errorMessage(err) }, 'reconcile cycle crashed'),
  });

  async function pointWatchers(anchor: string, resolved: ResolvedDir | undefined): Promise<void> {
    if (!watchEnabled || stopping) return;
    try {
      await watcher.pointAt({
        anchor,
        realDir: resolved?.realDir,
        identity: resolved?.identity,
      });
    } catch (err) {
      // The periodic resync still covers us; a watcher failure must not fail the cycle.
      logger.warn({ err: errorMessage(err) }, 'could not watch the manifest directory');
    }
  }

  async function runCycle(reason: TriggerReason, signal: AbortSignal): Promise<CycleOutcome> {
    const startedAt = now();
    let resolved: ResolvedDir;
    try {
      resolved = await resolveManifestDir(absDir);
    } catch (err) {
      // git-sync deletes the old worktree right after a swap: a link read just before the swap
      // can point at a directory that is already gone. When the link resolves again at once,
      // a newer revision arrived: this cycle is superseded, and the new one runs next.
      const again = await resolveManifestDir(absDir).catch(() => undefined);
      if (again !== undefined) {
        loop.trigger('link');
        record(
          { result: 'superseded', summary: EMPTY_SUMMARY, writes: 0 },
          reason,
          startedAt,
          undefined,
          true,
        );
        return 'superseded';
      }
      await pointWatchers((await findAnchor(absDir)).path, undefined);
      const message = errorMessage(err);
      record(
        { result: 'error', summary: EMPTY_SUMMARY, writes: 0, error: message },
        reason,
        startedAt,
        undefined,
        false,
      );
      return 'failure';
    }
    lastResolved = resolved;
    await pointWatchers(resolved.link ?? absDir, resolved);
    if (signal.aborted) return 'superseded';

    let superseded = false;
    const assertCurrent = async (): Promise<void> => {
      let current: ResolvedDir;
      try {
        current = await resolveManifestDir(absDir);
      } catch (err) {
        superseded = true;
        loop.trigger('link');
        throw err;
      }
      if (!sameResolution(resolved, current)) {
        superseded = true;
        loop.trigger('link');
        const from = resolved.revision ?? resolved.realDir;
        const to = current.revision ?? current.realDir;
        throw new ManifestDirError(
          absDir,
          `manifest directory changed during the cycle (${from} -> ${to}): nothing applied from the old one; reconciling the new one next`,
        );
      }
    };

    let report: ReconcileReport;
    try {
      report = await options.reconcile({
        dir: resolved.realDir,
        revision: resolved.revision,
        reason,
        signal,
        assertCurrent,
      });
    } catch (err) {
      report =
        err instanceof ManifestError
          ? {
              result: 'invalid',
              summary: EMPTY_SUMMARY,
              writes: 0,
              diagnostics: err.diagnostics,
              error: err.message,
            }
          : { result: 'error', summary: EMPTY_SUMMARY, writes: 0, error: errorMessage(err) };
    }
    if (superseded && !SUCCESS_RESULTS.has(report.result)) {
      // Whatever the old revision's cycle ran into (files vanishing under the loader, the swap
      // check refusing to write) belongs to a revision that is gone: not an error.
      report = { result: 'superseded', summary: report.summary, writes: report.writes };
    }
    record(report, reason, startedAt, resolved, superseded);
    if (report.result === 'superseded') return 'superseded';
    return SUCCESS_RESULTS.has(report.result) ? 'success' : 'failure';
  }

  function groupDiagnostics(
    report: ReconcileReport,
    realDir: string,
  ): Record<string, StatusDiagnostic[]> {
    const byFile: Record<string, StatusDiagnostic[]> = {};
    for (const d of report.diagnostics ?? []) {
      // Relative to the checkout, so the same file keeps its key across revisions.
      const rel = path.isAbsolute(d.file) ? path.relative(realDir, d.file) : d.file;
      const file = rel.startsWith('..') || rel === '' ? d.file : rel;
      const list = byFile[file] ?? [];
      list.push({
        line: d.line,
        column: d.column,
        path: d.path,
        message: d.message,
        severity: d.severity,
      });
      byFile[file] = list;
    }
    return byFile;
  }

  function record(
    report: ReconcileReport,
    reason: TriggerReason,
    startedAt: number,
    resolved: ResolvedDir | undefined,
    superseded: boolean,
  ): void {
    const at = now();
    const durationMs = Math.max(0, at - startedAt);
    const success = SUCCESS_RESULTS.has(report.result);
    const failuresBefore = loop.snapshot().failures;
    const failuresAfter = success ? 0 : superseded ? failuresBefore : failuresBefore + 1;
    last = {
      result: report.result,
      reason,
      revision: resolved?.revision,
      at,
      durationMs,
      summary: report.summary,
      writes: report.writes,
      outOfSync: report.outOfSync,
    };
    if (success) {
      everReady = true;
      lastSuccessAt = at;
      lastError = undefined;
    } else if (report.result !== 'superseded') {
      const n = report.diagnostics?.filter((d) => d.severity === 'error').length ?? 0;
      lastError = {
        message:
          report.error ??
          (report.result === 'invalid' ? `${n} manifest error(s)` : 'reconcile failed'),
        at,
      };
    }
    // Diagnostics describe the set the cycle read; a cycle that read nothing (or read a worktree
    // git-sync was replacing) leaves them as they were.
    if (resolved && !superseded) diagnostics = groupDiagnostics(report, resolved.realDir);
    if (report.warnings !== undefined) warnings = report.warnings;
    const errorCount = report.diagnostics?.filter((d) => d.severity === 'error').length ?? 0;
    metrics.observeReconcile({
      result: report.result,
      durationMs,
      at,
      managed: report.managed,
      outOfSync: report.outOfSync,
      manifestErrors: resolved ? errorCount : undefined,
      consecutiveFailures: failuresAfter,
    });
    const line = {
      result: report.result,
      reason,
      revision: resolved?.revision,
      duration_ms: durationMs,
      summary: report.summary,
      writes: report.writes,
      out_of_sync: report.outOfSync,
      diagnostics: report.diagnostics?.length ?? 0,
      first_diagnostics: report.diagnostics
        ?.slice(0, 10)
        .map((d) => `${d.file}:${d.line}:${d.column} ${d.path}: ${d.message}`),
      error: report.error,
      consecutive_failures: failuresAfter,
    };
    if (success || report.result === 'superseded') logger.info(line, `reconcile ${report.result}`);
    else logger.warn(line, `reconcile ${report.result}`);
  }

  async function bind(addr: ListenAddress): Promise<void> {
    const handler = createDaemonHttpHandler({
      status,
      ready: () => everReady,
      metrics,
      requestReconcile: () => {
        if (!accepting) return false;
        loop.trigger('webhook');
        return true;
      },
    });
    const srv = createServer(handler);
    srv.requestTimeout = 30_000;
    srv.headersTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => {
        srv.off('listening', onListening);
        reject(
          new ConfigError(`cannot listen on ${addr.host}:${addr.port}: ${err.message}`, {
            cause: err,
          }),
        );
      };
      const onListening = () => {
        srv.off('error', onError);
        resolve();
      };
      srv.once('error', onError);
      srv.once('listening', onListening);
      srv.listen({ host: addr.host, port: addr.port });
    });
    // After start-up, socket errors must never crash the daemon.
    srv.on('error', (err) => logger.error({ err: err.message }, 'http server error'));
    srv.on('clientError', (_err, socket) => socket.destroy());
    const info = srv.address() as AddressInfo;
    server = srv;
    address = { host: info.address, port: info.port };
  }

  async function closeServer(): Promise<void> {
    const srv = server;
    if (!srv) return;
    await new Promise<void>((resolve) => {
      srv.close(() => resolve());
      // Keep-alive sockets (Prometheus, probes) would hold close() open.
      srv.closeAllConnections();
    });
  }

  function iso(ms: number | undefined): string | null {
    return ms === undefined ? null : new Date(ms).toISOString();
  }

  function status(): DaemonStatus {
    const snap = loop.snapshot();
    return {
      format_version: 1,
      dir: absDir,
      resolved_dir: lastResolved?.realDir ?? null,
      revision: lastResolved?.revision ?? null,
      ready: everReady,
      in_flight: snap.inFlight !== undefined,
      last_reconcile: last
        ? {
            result: last.result,
            reason: last.reason,
            revision: last.revision ?? null,
            at: new Date(last.at).toISOString(),
            duration_ms: last.durationMs,
            summary: last.summary,
            writes: last.writes,
            out_of_sync: last.outOfSync ?? null,
          }
        : null,
      last_success_at: iso(lastSuccessAt),
      last_error: lastError
        ? { message: lastError.message, at: new Date(lastError.at).toISOString() }
        : null,
      diagnostics_by_file: diagnostics,
      warnings,
      next_resync_at: iso(snap.nextAt),
      backoff_ms: snap.backoffMs,
      consecutive_failures: snap.failures,
    };
  }

  async function doStart(): Promise<void> {
    if (listen !== false) await bind(listen);
    if (stopping) return;
    if (watchEnabled) {
      let resolved: ResolvedDir | undefined;
      try {
        resolved = await resolveManifestDir(absDir);
      } catch {
        resolved = undefined; // the first cycle records why
      }
      await pointWatchers(resolved?.link ?? (await findAnchor(absDir)).path, resolved);
    }
    if (stopping) return;
    accepting = true;
    loop.start();
    logger.info(
      {
        dir: absDir,
        listen: address ? `${address.host}:${address.port}` : false,
        interval_ms: intervalMs,
        debounce_ms: debounceMs,
        watch: watchEnabled,
      },
      'daemon started',
    );
  }

  async function doStop(): Promise<void> {
    accepting = false;
    if (started) await started.catch(() => undefined);
    const loopStopped = loop.stop(graceMs);
    await watcher.close();
    const finished = await loopStopped;
    if (!finished) {
      logger.warn(
        { grace_ms: graceMs },
        'reconcile still running after the grace period; stopping anyway',
      );
    }
    await closeServer();
    logger.info({ in_time: finished }, 'daemon stopped');
  }

  const daemon: Daemon = {
    start() {
      if (started) return started;
      started = (async () => {
        if (options.signal?.aborted) {
          // Not awaited: stop() waits for this very start-up to settle.
          void daemon.stop();
          return;
        }
        options.signal?.addEventListener('abort', () => void daemon.stop(), { once: true });
        try {
          await doStart();
        } catch (err) {
          // Half-started: release what was acquired, then report.
          accepting = false;
          await watcher.close();
          await closeServer();
          throw err;
        }
      })();
      return started;
    },

    trigger(reason = 'manual') {
      if (accepting) loop.trigger(reason);
    },

    stop() {
      stopping ??= doStop().finally(resolveClosed);
      return stopping;
    },

    status,

    get ready() {
      return everReady;
    },
    get address() {
      return address;
    },
    closed,
    metrics,
  };
  return daemon;
}
