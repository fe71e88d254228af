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
import { type Logger, silentLogger } from '../log.js';
import { excludeMatcher } from '../manifest/loader.js';
import { findAnchor, type ResolvedDir, resolveManifestDir } from '../manifest/resolve.js';
import type { CycleOutcome } from './commit-status.js';
import { type ControlAccess, controlPolicy } from './control.js';
import { runCycle } from './cycle.js';
import { type Conditions, cycleEvents, EventLog, NO_CONDITIONS } from './events.js';
import { createDaemonHttpHandler } from './http.js';
import { type HttpListener, listenHttp } from './http-server.js';
import type { ListenAddress } from './listen.js';
import { createReconcileLoop, type ReconcileLoop } from './loop.js';
import { createDaemonMetrics, type DaemonMetrics } from './metrics.js';
import {
  DAEMON_DEFAULTS,
  type DaemonOptions,
  type DaemonSettings,
  MAX_DELAY_MS,
  resolveSettings,
} from './options.js';
import {
  type CycleRecord,
  errorCount,
  INITIAL_STATUS,
  reduceStatus,
  renderStatus,
  resourcePage,
  type StatusState,
} from './status.js';
import { type DaemonStatus, realTimers, SUCCESS_RESULTS, type TriggerReason } from './types.js';
import { createManifestWatcher, type ManifestWatcher } from './watch.js';

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
  /** Hears every finished cycle's outcome (commit-status notifications), after its record. */
  onCycle(listener: (outcome: CycleOutcome) => void): void;
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

/**
 * What one daemon holds: its settings and parts (fixed at creation), and the state the steps
 * below read and move (the status reducer's state, the switches, the servers).
 */
interface DaemonCore {
  readonly options: DaemonOptions;
  readonly settings: DaemonSettings;
  readonly control: ReturnType<typeof controlPolicy>;
  readonly logger: Logger;
  readonly metrics: DaemonMetrics;
  readonly now: () => number;
  readonly events: EventLog;
  readonly cycleListeners: Array<(outcome: CycleOutcome) => void>;
  readonly watcher: ManifestWatcher;
  readonly loop: ReconcileLoop;
  readonly closed: Promise<void>;
  readonly resolveClosed: () => void;
  state: StatusState;
  conditions: Conditions;
  lastListCalls: number | undefined;
  /** The findings of the invalid set last logged in full (a retry of the same set logs at debug). */
  lastInvalid: string | undefined;
  /** Changes the watcher reported so far: a cycle takes over what was read ahead at its count. */
  generation: number;
  /**
   * The paths the watcher reported since the manifests were last handed to the reconcile step
   * (`takeChanged`); undefined when not known (a link event, before the first cycle).
   */
  changedPaths: Set<string> | undefined;
  /** The read ahead of a change's cycle in flight (`readAhead`), and whether another is due. */
  ahead: { running: Promise<void> | undefined; again: boolean };
  suspended: boolean;
  accepting: boolean;
  started: Promise<void> | undefined;
  stopping: Promise<void> | undefined;
  http: HttpListener | undefined;
  admin: HttpListener | undefined;
}

export function createDaemon(options: DaemonOptions): Daemon {
  const core = newCore(options);
  const daemon: Daemon = {
    start: () => start(core),
    suspend: () => suspend(core),
    resume: () => resume(core),
    mode: () => mode(core),
    events: core.events,
    onCycle: (listener) => {
      core.cycleListeners.push(listener);
    },
    trigger(reason = 'manual') {
      if (core.accepting) core.loop.trigger(reason);
    },
    stop: () => stop(core),
    status: () => status(core),
    get ready() {
      return core.state.everReady;
    },
    get address() {
      return core.http?.address;
    },
    get adminAddress() {
      return core.admin?.address;
    },
    closed: core.closed,
    metrics: core.metrics,
  };
  return daemon;
}

/** The daemon's parts, wired: the watcher wakes the loop, the loop runs a cycle and records it. */
function newCore(options: DaemonOptions): DaemonCore {
  const settings = resolveSettings(options);
  const control = controlPolicy(settings.listen, options.controlToken, settings.adminListen);
  const logger = options.logger ?? silentLogger();
  const metrics = options.metrics ?? createDaemonMetrics();
  const now = options.now ?? Date.now;
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const watcher = createManifestWatcher({
    logger,
    excluded: excludeMatcher(options.exclude),
    onChange: (kind, file, changedAt) => {
      logger.debug({ kind, file }, 'manifest change seen');
      if (kind === 'link') core.changedPaths = undefined;
      else core.changedPaths?.add(file);
      changed(core, kind, changedAt);
    },
    onEntry: (file) => {
      logger.debug({ file }, 'manifest tree entry seen');
      core.changedPaths?.add(file);
    },
  });
  const core: DaemonCore = {
    options,
    settings,
    control,
    logger,
    metrics,
    now,
    events: options.events ?? new EventLog(),
    cycleListeners: [],
    watcher,
    loop: reconcileLoop(options, settings, now, () => core),
    closed,
    resolveClosed,
    state: INITIAL_STATUS,
    conditions: NO_CONDITIONS,
    lastListCalls: undefined,
    lastInvalid: undefined,
    generation: 0,
    changedPaths: undefined,
    ahead: { running: undefined, again: false },
    suspended: options.suspended ?? false,
    accepting: false,
    started: undefined,
    stopping: undefined,
    http: undefined,
    admin: undefined,
  };
  return core;
}

/** The loop of cycles: each resolves the path, reconciles, records (cycle.ts). */
function reconcileLoop(
  options: DaemonOptions,
  settings: DaemonSettings,
  now: () => number,
  core: () => DaemonCore,
): ReconcileLoop {
  const loop = createReconcileLoop({
    cycle: async (reason, signal) => {
      try {
        return await runCycle(
          {
            absDir: settings.absDir,
            reconcile: options.reconcile,
            now,
            record: (rec) => record(core(), rec),
            pointWatchers: (anchor, resolved) => pointWatchers(core(), anchor, resolved),
            retrigger: () => loop.trigger('link'),
            reread: () => changed(core(), 'file'),
            readAhead: () => readAheadDone(core()),
            takeChanged: () => takeChanged(core()),
          },
          reason,
          signal,
        );
      } finally {
        afterCycle(core());
      }
    },
    intervalMs: () => resyncIntervalMs(core()),
    // Requested cycles spend the same share as resyncs, without waiting for the interval.
    triggerGapMs: () => budgetGapMs(core()),
    jitter: options.resyncJitter ?? DAEMON_DEFAULTS.resyncJitter,
    ...(options.random === undefined ? {} : { random: options.random }),
    debounceMs: settings.debounceMs,
    debounceMaxMs: settings.debounceMaxMs,
    backoff: settings.backoff,
    timers: options.timers ?? realTimers,
    now,
    onCycleError: (err) =>
      core().logger.error({ err: errorMessage(err) }, 'reconcile cycle crashed'),
  });
  return loop;
}

/**
 * The paths reported changed since the last time they were taken, for the reconcile step that
 * reads the manifests next (which keeps them until it read them); undefined when not known.
 */
function takeChanged(core: DaemonCore): readonly string[] | undefined {
  const paths = core.changedPaths;
  core.changedPaths = new Set();
  return paths === undefined ? undefined : [...paths];
}

/** A change of the manifests (seen by the watcher, or by a cycle that read one mid-save). */
function changed(core: DaemonCore, kind: 'file' | 'link', changedAt?: number): void {
  core.generation += 1;
  core.loop.notifyChange(kind, changedAt);
  readAhead(core);
}

/**
 * While a change's debounce runs, the reconcile step reads the manifests and plans them ahead
 * (`anticipate`), so the cycle that follows starts from there. One read at a time; a change
 * during it asks for one more. None starts while a cycle runs: that cycle, or the one queued
 * behind it, reads for itself.
 */
function readAhead(core: DaemonCore): void {
  const { anticipate } = core.options;
  if (anticipate === undefined || !core.accepting) return;
  if (core.ahead.running !== undefined) {
    core.ahead.again = true;
    return;
  }
  if (core.loop.snapshot().inFlight !== undefined) return;
  core.ahead.running = (async () => {
    do {
      core.ahead.again = false;
      const generation = core.generation;
      const resolved = await resolveManifestDir(core.settings.absDir).catch(() => undefined);
      // The cycle records why the directory does not resolve.
      if (resolved === undefined) return;
      await anticipate({
        dir: resolved.realDir,
        revision: resolved.revision,
        generation,
        changed: takeChanged(core),
      });
    } while (core.ahead.again && core.accepting && core.loop.snapshot().inFlight === undefined);
  })()
    .catch((err: unknown) =>
      core.logger.debug({ err: errorMessage(err) }, 'reading ahead failed; the cycle reads again'),
    )
    .finally(() => {
      core.ahead.running = undefined;
    });
}

/** The watcher's count once the read ahead in flight (if any) ended: the cycle's generation. */
async function readAheadDone(core: DaemonCore): Promise<number> {
  await core.ahead.running;
  return core.generation;
}

function afterCycle({ options, logger }: DaemonCore): void {
  try {
    options.afterCycle?.();
  } catch (err) {
    logger.warn({ err: errorMessage(err) }, 'after-cycle hook failed');
  }
}

function mode(core: DaemonCore): 'enforce' | 'observe' {
  return core.suspended || core.options.mode === 'observe' ? 'observe' : 'enforce';
}

/** How often the last full observation's list calls fit the resync share of the budget. */
function budgetGapMs({ options, lastListCalls }: DaemonCore): number {
  const rb = options.resyncBudget;
  if (rb === undefined || lastListCalls === undefined) return 0;
  const fit = Math.ceil((lastListCalls * rb.budget.windowMs) / (rb.share * rb.budget.limit));
  return Math.min(MAX_DELAY_MS, fit);
}

/** The resync interval: `intervalMs`, stretched to fit the resync share of the budget. */
function resyncIntervalMs(core: DaemonCore): number {
  return Math.max(core.settings.intervalMs, budgetGapMs(core));
}

async function pointWatchers(
  core: DaemonCore,
  anchor: string,
  resolved: ResolvedDir | undefined,
): Promise<void> {
  if (!core.settings.watchEnabled || core.stopping) return;
  try {
    await core.watcher.pointAt({
      anchor,
      realDir: resolved?.realDir,
      identity: resolved?.identity,
    });
  } catch (err) {
    // The periodic resync still covers us; a watcher failure must not fail the cycle.
    core.logger.warn({ err: errorMessage(err) }, 'could not watch the manifest directory');
  }
}

/** One cycle recorded: status, events, metrics, one log line. */
function record(core: DaemonCore, unmasked: CycleRecord): void {
  const rec = maskRecord(unmasked, core.options.mask);
  const { report, resolved, superseded } = rec;
  const durationMs = Math.max(0, rec.at - rec.startedAt);
  const success = SUCCESS_RESULTS.has(report.result);
  const failuresBefore = core.loop.snapshot().failures;
  const failuresAfter = success ? 0 : superseded ? failuresBefore : failuresBefore + 1;
  core.state = reduceStatus(core.state, rec);
  const folded = cycleEvents(core.conditions, report, rec.at, resolved?.revision);
  core.conditions = folded.conditions;
  for (const e of folded.events) core.events.push(e);
  const { metrics } = core;
  metrics.observeResources(status(core).resource_counts.by_kind);
  if (report.listCalls !== undefined) {
    core.lastListCalls = report.listCalls;
    metrics.observeResyncInterval(resyncIntervalMs(core));
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
  logCycle(core, rec, durationMs, failuresAfter);
  tellCycle(core, rec);
}

/** The cycle's outcome to its listeners; one failing never stops the daemon. */
function tellCycle(core: DaemonCore, { report, resolved }: CycleRecord): void {
  const outcome: CycleOutcome = {
    result: report.result,
    revision: resolved?.revision,
    summary: report.summary,
    writes: report.writes,
    outOfSync: report.outOfSync,
    errors: resolved ? errorCount(report) : 0,
  };
  for (const listener of core.cycleListeners) {
    try {
      listener(outcome);
    } catch (err) {
      core.logger.warn({ err: errorMessage(err) }, 'cycle listener failed');
    }
  }
}

/**
 * The cycle's one log line: info for a success (or superseded), warn otherwise. An invalid set
 * is logged in full once per change: the retries of the same findings (backoff, resyncs) log at
 * debug, so a broken commit does not repeat its errors in the log until it is fixed.
 */
function logCycle(
  core: DaemonCore,
  { report, reason, resolved }: CycleRecord,
  durationMs: number,
  failuresAfter: number,
): void {
  const { logger } = core;
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
  if (report.result === 'superseded') {
    logger.info(line, `reconcile ${report.result}`);
    return;
  }
  const invalid =
    report.result === 'invalid'
      ? JSON.stringify([report.error, line.diagnostics, line.first_diagnostics])
      : undefined;
  const repeat = invalid !== undefined && invalid === core.lastInvalid;
  core.lastInvalid = invalid;
  if (SUCCESS_RESULTS.has(report.result)) logger.info(line, `reconcile ${report.result}`);
  else if (repeat) logger.debug(line, 'reconcile invalid: the same findings as before');
  else logger.warn(line, `reconcile ${report.result}`);
}

function status(core: DaemonCore): DaemonStatus {
  return renderStatus(
    core.state,
    core.settings.absDir,
    core.loop.snapshot(),
    core.options.leadership?.() ?? null,
    resyncIntervalMs(core),
    { suspended: core.suspended, mode: mode(core) },
  );
}

function handler(core: DaemonCore, access: ControlAccess) {
  return createDaemonHttpHandler({
    control: access,
    status: () => status(core),
    resources: (query) => resourcePage(core.state, query, core.suspended),
    ready: () => core.state.everReady,
    metrics: core.metrics,
    events: () => core.events.list(),
    suspend: () => suspend(core),
    resume: () => resume(core),
    requestReconcile: () => {
      if (!core.accepting) return false;
      core.loop.trigger('webhook');
      return true;
    },
  });
}

async function bind(core: DaemonCore): Promise<void> {
  const { listen, adminListen } = core.settings;
  if (listen !== false) {
    core.http = await listenHttp(listen, handler(core, core.control.main), core.logger);
  }
  if (adminListen !== undefined) {
    core.admin = await listenHttp(adminListen, handler(core, core.control.admin), core.logger);
  }
}

async function closeServers(core: DaemonCore): Promise<void> {
  await core.http?.close();
  await core.admin?.close();
}

function start(core: DaemonCore): Promise<void> {
  if (core.started) return core.started;
  const { options } = core;
  core.started = (async () => {
    if (options.signal?.aborted) {
      // Not awaited: stop() waits for this very start-up to settle.
      void stop(core);
      return;
    }
    options.signal?.addEventListener('abort', () => void stop(core), { once: true });
    try {
      await doStart(core);
    } catch (err) {
      // Half-started: release what was acquired, then report.
      core.accepting = false;
      await core.watcher.close();
      await closeServers(core);
      throw err;
    }
  })();
  return core.started;
}

async function doStart(core: DaemonCore): Promise<void> {
  const { control, logger, settings } = core;
  core.metrics.observeSuspended(core.suspended);
  // Said before binding, so the reason is in the log even when the bind then fails.
  if (control.warning !== undefined) logger.warn({ control: 'off' }, control.warning);
  await bind(core);
  if (core.stopping) return;
  if (settings.watchEnabled) await watchFirst(core);
  if (core.stopping) return;
  core.accepting = true;
  core.loop.start();
  const { http, admin } = core;
  logger.info(
    {
      dir: settings.absDir,
      listen: http ? `${http.address.host}:${http.address.port}` : false,
      admin_listen: admin ? `${admin.address.host}:${admin.address.port}` : false,
      control: control.main.kind,
      interval_ms: settings.intervalMs,
      debounce_ms: settings.debounceMs,
      watch: settings.watchEnabled,
    },
    'daemon started',
  );
}

/** Watches from before the first cycle, so a change during it is not missed. */
async function watchFirst(core: DaemonCore): Promise<void> {
  const { absDir } = core.settings;
  let resolved: ResolvedDir | undefined;
  try {
    resolved = await resolveManifestDir(absDir);
  } catch {
    resolved = undefined; // the first cycle records why
  }
  await pointWatchers(core, resolved?.link ?? (await findAnchor(absDir)).path, resolved);
}

function stop(core: DaemonCore): Promise<void> {
  core.stopping ??= doStop(core).finally(core.resolveClosed);
  return core.stopping;
}

async function doStop(core: DaemonCore): Promise<void> {
  const { graceMs } = core.settings;
  core.accepting = false;
  if (core.started) await core.started.catch(() => undefined);
  const loopStopped = core.loop.stop(graceMs);
  await core.watcher.close();
  const finished = await loopStopped;
  await core.ahead.running;
  if (!finished) {
    core.logger.warn(
      { grace_ms: graceMs },
      'reconcile still running after the grace period; stopping anyway',
    );
  }
  await closeServers(core);
  core.logger.info({ in_time: finished }, 'daemon stopped');
}

function daemonEvent(core: DaemonCore, type: 'suspended' | 'resumed', message: string): void {
  core.events.push({
    time: new Date(core.now()).toISOString(),
    type,
    resource: null,
    message,
    revision: core.state.resolved?.revision ?? null,
  });
}

function suspend(core: DaemonCore): boolean {
  if (core.suspended) return false;
  core.suspended = true;
  core.metrics.observeSuspended(true);
  core.logger.warn({}, 'suspended: no writes until resumed');
  daemonEvent(core, 'suspended', 'writes stopped (POST /-/suspend or --suspended); observing');
  return true;
}

function resume(core: DaemonCore): boolean {
  if (!core.suspended) return false;
  core.suspended = false;
  core.metrics.observeSuspended(false);
  core.logger.info({}, 'resumed');
  daemonEvent(core, 'resumed', 'writes allowed again');
  if (core.accepting) core.loop.trigger('manual');
  return true;
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
