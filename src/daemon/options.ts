/**
 * What a daemon is given (`DaemonOptions`), the defaults of its timings and the limits they must
 * respect. `resolveSettings` applies both once, before anything is started, so a bad value is a
 * ConfigError at construction instead of a timer that fires at once: setTimeout turns any delay
 * above its ceiling into an immediate call.
 */
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RateLimitSpec } from '../rate-limit-notation.js';
import { controlTokenProblem, isLoopbackHost } from './control.js';
import type { EventLog } from './events.js';
import { DEFAULT_LISTEN, type ListenAddress } from './listen.js';
import type { DaemonMetrics } from './metrics.js';
import type {
  AnticipateFn,
  BackoffOptions,
  LeadershipStatus,
  ReconcileFn,
  Timers,
} from './types.js';

export interface DaemonOptions {
  /** The manifest directory; may be (or go through) a git-sync symlink. Relative: to the process cwd. */
  readonly dir: string;
  readonly reconcile: ReconcileFn;
  /**
   * Reading ahead of a file event's cycle while the debounce runs (the reconciler's
   * `anticipate`): the cycle that follows takes over what it read when no change came since.
   */
  readonly anticipate?: AnticipateFn | undefined;
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
  /**
   * A loopback-only listener that serves the mutating endpoints without a token
   * (`--admin-listen`), beside `listen`. Anything but a loopback address is a ConfigError.
   */
  readonly adminListen?: ListenAddress | undefined;
  /**
   * The bearer token `POST /-/suspend`, `/-/resume` and `/-/reconcile` require on `listen`
   * (`--control-token-file`, EDGESYNC_CONTROL_TOKEN); at least MIN_TOKEN_LENGTH characters.
   * Without one (and without `adminListen`) they are served only when `listen` is loopback.
   */
  readonly controlToken?: string | undefined;
  /** File-system triggers. Default true. */
  readonly watch?: boolean;
  /** `--exclude` globs (relative to `dir`): changes there wake no cycle. */
  readonly exclude?: readonly string[];
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
   * any more). `edgesync run` passes a full garbage collection when the heap grew (memory.ts).
   */
  readonly afterCycle?: () => void;
  /** Start suspended (`--suspended`): cycles observe, nothing is written until resumed. */
  readonly suspended?: boolean;
  /** `observe` (`--mode observe`): never write; every difference is drift. Default enforce. */
  readonly mode?: 'enforce' | 'observe';
  /** Where events go (`GET /events`, notifications); default a fresh log of 200. */
  readonly events?: EventLog;
  /** Spread of each resync interval, either way (default 0.1: ±10%). */
  readonly resyncJitter?: number;
  /** In [0, 1): the jitter's draw (tests seed it). Default Math.random. */
  readonly random?: () => number;
  /**
   * Periodic resyncs use at most `share` of the API `budget`: the interval stretches to the list
   * calls of the last full observation (never below `intervalMs`).
   */
  readonly resyncBudget?: { readonly share: number; readonly budget: RateLimitSpec } | undefined;
  /** With leader election: the role and holder for `/status` (metrics are the caller's). */
  readonly leadership?: () => LeadershipStatus;
  /**
   * Masks the known secret values in a text (`ValueMask.apply`). Every cycle's error and
   * diagnostic messages pass through it before they reach the status, events, notifications,
   * metrics or the log: an error thrown anywhere in a cycle (an API message echoing a request
   * body) is covered, not only the reports the reconcile step masks itself.
   */
  readonly mask?: (text: string) => string;
}

export const DAEMON_DEFAULTS = {
  intervalMs: 60_000,
  debounceMs: 250,
  backoff: { baseMs: 1000, maxMs: 300_000 },
  graceMs: 10_000,
  resyncJitter: 0.1,
} as const;

/** setTimeout's ceiling: longer delays fire at once in Node, so they are refused up front. */
export const MAX_DELAY_MS = 2_147_483_647;

function checkMs(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min || value > MAX_DELAY_MS) {
    throw new ConfigError(`${name} must be between ${min} and ${MAX_DELAY_MS} ms, got ${value}`);
  }
  return value;
}

/** The checked timings and switches, defaults applied. */
export interface DaemonSettings {
  readonly absDir: string;
  readonly intervalMs: number;
  readonly debounceMs: number;
  readonly debounceMaxMs: number;
  readonly backoff: BackoffOptions;
  readonly graceMs: number;
  readonly listen: ListenAddress | false;
  readonly adminListen: ListenAddress | undefined;
  readonly watchEnabled: boolean;
}

export function resolveSettings(options: DaemonOptions): DaemonSettings {
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
  const adminListen = options.adminListen;
  if (adminListen !== undefined && !isLoopbackHost(adminListen.host)) {
    throw new ConfigError(
      `the admin listener must be loopback-only (127.0.0.1 or [::1]), got ${adminListen.host}`,
    );
  }
  const tokenProblem =
    options.controlToken === undefined ? undefined : controlTokenProblem(options.controlToken);
  if (tokenProblem !== undefined) throw new ConfigError(tokenProblem);
  return {
    absDir,
    intervalMs,
    debounceMs,
    debounceMaxMs,
    backoff,
    graceMs,
    listen,
    adminListen,
    watchEnabled,
  };
}
