/**
 * The long-running controller around an injected reconcile step: triggers (file watcher,
 * periodic resync, webhook), git-sync link resolution, backoff, status, metrics and the HTTP
 * server. The reconcile step itself (load, observe, plan, apply) is passed in; see types.ts.
 * The options, their defaults and limits: options.ts.
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
import { errorMessage } from '../errors.js';
import { silentLogger } from '../log.js';
import { excludeMatcher } from '../manifest/loader.js';
import { findAnchor, type ResolvedDir, resolveManifestDir } from '../manifest/resolve.js';
import { type ControlAccess, controlPolicy } from './control.js';
import { runCycle } from './cycle.js';
import { type Conditions, cycleEvents, EventLog, NO_CONDITIONS } from './events.js';
import { createDaemonHttpHandler } from './http.js';
import { type HttpListener, listenHttp } from './http-server.js';
import type { ListenAddress } from './listen.js';
import { createReconcileLoop } from './loop.js';
import { createDaemonMetrics, type DaemonMetrics } from './metrics.js';
import { DAEMON_DEFAULTS, type DaemonOptions, MAX_DELAY_MS, resolveSettings } from './options.js';
import {
  type CycleRecord,
  errorCount,
  INITIAL_STATUS,
  reduceStatus,
  renderStatus,
  type StatusState,
} from './status.js';
import { type DaemonStatus, realTimers, SUCCESS_RESULTS, type TriggerReason } from './types.js';
import { createManifestWatcher } from './watch.js';

export { DAEMON_DEFAULTS, type DaemonOptions } from './options.js';

export interface Daemon {
  start(): Promise<void>;
  /**
   * Stops every write at once (the cycle in flight sends no further write); observation goes on.
   * Returns whether anything changed: a repeat is a no-op (no event, log line or notification).
   */
  suspend(): boolean;
  resume(): boolean;
  /** `observe` when `--mode observe` or suspended: what the reconcile step must do. */
  mode(): 'enforce' | 'observe';
  readonly events: EventLog;
  trigger(reason?: TriggerReason): void;
  stop(): Promise<void>;
  status(): DaemonStatus;
  readonly ready: boolean;
  readonly address: ListenAddress | undefined;
  /** The `adminListen` listener's bound address once started. */
  readonly adminAddress: ListenAddress | undefined;
  readonly closed: Promise<void>;
  readonly metrics: DaemonMetrics;
}

export function createDaemon(options: DaemonOptions): Daemon {
  const {
    absDir,
    intervalMs,
    debounceMs,
    debounceMaxMs,
    backoff,
    graceMs,
    listen,
    adminListen,
    watchEnabled,
  } = resolveSettings(options);
  const control = controlPolicy(listen, options.controlToken, adminListen);
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
  let http: HttpListener | undefined;
  let admin: HttpListener | undefined;
  let state: StatusState = INITIAL_STATUS;
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });

  const watcher = createManifestWatcher({
    logger,
    excluded: excludeMatcher(options.exclude),
    onChange: (kind, file) => {
      logger.debug({ kind, file }, 'manifest change seen');
      loop.notifyChange(kind);
    },
  });

  let lastListCalls: number | undefined;
  let suspended = options.suspended ?? false;
  const events = options.events ?? new EventLog();
  let conditions: Conditions = NO_CONDITIONS;
  const mode = (): 'enforce' | 'observe' =>
    suspended || options.mode === 'observe' ? 'observe' : 'enforce';
  const daemonEvent = (type: 'suspended' | 'resumed', message: string) =>
    events.push({
      time: new Date(now()).toISOString(),
      type,
      resource: null,
      message,
      revision: state.resolved?.revision ?? null,
    });
  /** How often the last full observation's list calls fit the resync share of the budget. */
  const budgetGapMs = (): number => {
    const rb = options.resyncBudget;
    if (rb === undefined || lastListCalls === undefined) return 0;
    const fit = Math.ceil((lastListCalls * rb.budget.windowMs) / (rb.share * rb.budget.limit));
    return Math.min(MAX_DELAY_MS, fit);
  };
  /** The resync interval: `intervalMs`, stretched to fit the resync share of the budget. */
  const resyncIntervalMs = (): number => Math.max(intervalMs, budgetGapMs());

  const loop = createReconcileLoop({
    cycle: async (reason, signal) => {
      try {
        return await runCycle(
          {
            absDir,
            reconcile: options.reconcile,
            now,
            record,
            pointWatchers,
            retrigger: () => loop.trigger('link'),
          },
          reason,
          signal,
        );
      } finally {
        afterCycle();
      }
    },
    intervalMs: resyncIntervalMs,
    // Requested cycles spend the same share as resyncs, without waiting for the interval.
    triggerGapMs: budgetGapMs,
    jitter: options.resyncJitter ?? DAEMON_DEFAULTS.resyncJitter,
    ...(options.random === undefined ? {} : { random: options.random }),
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

  function record(unmasked: CycleRecord): void {
    const rec = maskRecord(unmasked, options.mask);
    const { report, reason, resolved, superseded } = rec;
    const durationMs = Math.max(0, rec.at - rec.startedAt);
    const success = SUCCESS_RESULTS.has(report.result);
    const failuresBefore = loop.snapshot().failures;
    const failuresAfter = success ? 0 : superseded ? failuresBefore : failuresBefore + 1;
    state = reduceStatus(state, rec);
    const folded = cycleEvents(conditions, report, rec.at, resolved?.revision);
    conditions = folded.conditions;
    for (const e of folded.events) events.push(e);
    metrics.observeResources(status().resources);
    if (report.listCalls !== undefined) {
      lastListCalls = report.listCalls;
      metrics.observeResyncInterval(resyncIntervalMs());
    }
    metrics.observeReconcile({
      result: report.result,
      durationMs,
      at: rec.at,
      managed: report.managed,
      outOfSync: report.outOfSync,
      manifestErrors: resolved ? errorCount(report) : undefined,
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

  function handler(access: ControlAccess) {
    return createDaemonHttpHandler({
      control: access,
      status,
      ready: () => state.everReady,
      metrics,
      events: () => events.list(),
      suspend: () => daemon.suspend(),
      resume: () => daemon.resume(),
      requestReconcile: () => {
        if (!accepting) return false;
        loop.trigger('webhook');
        return true;
      },
    });
  }

  async function bind(): Promise<void> {
    if (listen !== false) http = await listenHttp(listen, handler(control.main), logger);
    if (adminListen !== undefined) {
      admin = await listenHttp(adminListen, handler(control.admin), logger);
    }
  }

  async function closeServer(): Promise<void> {
    await http?.close();
    await admin?.close();
  }

  function status(): DaemonStatus {
    return renderStatus(
      state,
      absDir,
      loop.snapshot(),
      options.leadership?.() ?? null,
      resyncIntervalMs(),
      { suspended, mode: mode() },
    );
  }

  async function doStart(): Promise<void> {
    metrics.observeSuspended(suspended);
    // Said before binding, so the reason is in the log even when the bind then fails.
    if (control.warning !== undefined) logger.warn({ control: 'off' }, control.warning);
    await bind();
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
        listen: http ? `${http.address.host}:${http.address.port}` : false,
        admin_listen: admin ? `${admin.address.host}:${admin.address.port}` : false,
        control: control.main.kind,
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

    suspend() {
      if (suspended) return false;
      suspended = true;
      metrics.observeSuspended(true);
      logger.warn({}, 'suspended: no writes until resumed');
      daemonEvent('suspended', 'writes stopped (POST /-/suspend or --suspended); observing');
      return true;
    },

    resume() {
      if (!suspended) return false;
      suspended = false;
      metrics.observeSuspended(false);
      logger.info({}, 'resumed');
      daemonEvent('resumed', 'writes allowed again');
      if (accepting) loop.trigger('manual');
      return true;
    },

    mode,
    events,

    trigger(reason = 'manual') {
      if (accepting) loop.trigger(reason);
    },

    stop() {
      stopping ??= doStop().finally(resolveClosed);
      return stopping;
    },

    status,

    get ready() {
      return state.everReady;
    },
    get address() {
      return http?.address;
    },
    get adminAddress() {
      return admin?.address;
    },
    closed,
    metrics,
  };
  return daemon;
}

/** The record with its free-text messages masked (see `DaemonOptions.mask`). */
function maskRecord(rec: CycleRecord, mask: ((text: string) => string) | undefined): CycleRecord {
  if (mask === undefined) return rec;
  const { report } = rec;
  return {
    ...rec,
    report: {
      ...report,
      ...(report.error === undefined ? {} : { error: mask(report.error) }),
      ...(report.warnings === undefined ? {} : { warnings: report.warnings.map(mask) }),
      ...(report.diagnostics === undefined
        ? {}
        : { diagnostics: report.diagnostics.map((d) => ({ ...d, message: mask(d.message) })) }),
    },
  };
}
