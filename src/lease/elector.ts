/**
 * Leader election on a Lease, with client-go's semantics (`k8s.io/client-go/tools/leaderelection`),
 * over an abstract `LeaseStore` (./k8s.ts is the Kubernetes one; tests use an in-memory one).
 *
 * - Acquire: create the Lease when there is none; otherwise replace it, with the observed
 *   `resourceVersion`, once it is free (no holder) or its holder has not renewed it for
 *   `leaseDuration` **by local observation**: the time this process first saw the current
 *   version of the record, on its own monotonic clock (never the record's `renewTime`, written
 *   by another machine's clock). A 409 means another replica won the race.
 * - Renew every `retryPeriod`. A leader whose last successful renewal was *sent* more than
 *   `renewDeadline` ago stops writing at once (`isLeader()` turns false before the next write)
 *   and becomes a candidate again.
 * - Release on stop: the leader replaces the Lease with an empty holder, so a standby takes over
 *   within one retry period instead of a lease duration.
 * - A store that refuses access (401/403) is fatal (`LeaseAccessError`), never retried: running
 *   leaderless would be silent.
 *
 * Why this is safe: a candidate may take over only after seeing one version of the record
 * unchanged for `leaseDuration`; the leader's last successful renewal produced the version the
 * candidate saw (or a later one), and the leader stopped trusting it `renewDeadline` after
 * sending it, which is before `leaseDuration` elapsed. So the valid windows of two holders never
 * overlap as long as `renewDeadline < leaseDuration` and the clocks run at the same rate
 * (steps of the wall clock do not matter: only monotonic time is used for decisions). A paused
 * leader (GC, SIGSTOP, a frozen VM) cannot notice that its deadline passed while it is paused:
 * the write it was about to send when paused goes out when it resumes. See docs/daemon.md.
 */
import {
  errorMessage,
  LeaseAccessError,
  LeaseConflictError,
  LostLeadershipError,
} from '../errors.js';
import type { Logger } from '../log.js';

/** The Lease as the elector sees it. */
export interface LeaseRecord {
  readonly holder: string | undefined;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: Date | undefined;
  readonly renewTime: Date | undefined;
  readonly transitions: number;
  /** Opaque version for optimistic concurrency (`metadata.resourceVersion`). */
  readonly version: string;
}

export type LeaseSpec = Omit<LeaseRecord, 'version'>;

/** Where the Lease lives. `create`/`replace` throw `LeaseConflictError` on a lost race. */
export interface LeaseStore {
  /** The Lease, or undefined when there is none (404). */
  get(): Promise<LeaseRecord | undefined>;
  create(spec: LeaseSpec): Promise<LeaseRecord>;
  replace(spec: LeaseSpec, version: string): Promise<LeaseRecord>;
  /** Human description for messages, e.g. `leases/edgesync-default in namespace prod`. */
  readonly description: string;
}

export interface ElectorTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface ElectorOptions {
  readonly store: LeaseStore;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Monotonic milliseconds (performance.now in production). */
  readonly monotonic: () => number;
  /** Wall clock, only for the timestamps written into the Lease. */
  readonly wallClock?: () => Date;
  readonly timers?: ElectorTimers;
  readonly logger?: Logger;
  /** Called on every change of role or holder. */
  readonly onChange?: (status: ElectorStatus) => void;
  /** Called once when access is refused; the elector has stopped. */
  readonly onFatal?: (err: LeaseAccessError) => void;
}

export interface ElectorStatus {
  readonly role: 'leader' | 'standby';
  /** The holder last observed (this process when leader), or null. */
  readonly holder: string | null;
  /** Times this process became or stopped being the leader. */
  readonly transitions: number;
}

export interface Elector {
  /** Runs the first attempt (throws `LeaseAccessError` when refused) and starts the loop. */
  start(): Promise<void>;
  /** True while this process holds the Lease and renewed it within the renew deadline. */
  isLeader(): boolean;
  /** Throws `LostLeadershipError` unless `isLeader()`. The applier calls it before each write. */
  fence(): void;
  status(): ElectorStatus;
  /** Stops the loop; a leader releases the Lease first (empty holder). */
  stop(): Promise<void>;
}

const realTimers: ElectorTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export function checkElectorTimings(o: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): string | undefined {
  if (!(o.leaseDurationMs > o.renewDeadlineMs)) {
    return '--lease-duration must be greater than --renew-deadline';
  }
  if (!(o.renewDeadlineMs > o.retryPeriodMs)) {
    return '--renew-deadline must be greater than --retry-period';
  }
  if (o.retryPeriodMs <= 0) return '--retry-period must be greater than 0';
  if (o.leaseDurationMs % 1000 !== 0) return '--lease-duration must be whole seconds';
  return undefined;
}

/** One elector's settings and state, shared by the steps below. */
interface ElectorState {
  readonly options: ElectorOptions;
  readonly timers: ElectorTimers;
  readonly now: () => number;
  readonly wall: () => Date;
  readonly leaseSeconds: number;
  /** The version last seen and when (local, monotonic) it was first seen. */
  observed: { record: LeaseRecord; at: number } | undefined;
  /** Monotonic time the last successful acquire/renew was sent; undefined: not leader. */
  renewedAt: number | undefined;
  transitions: number;
  timer: unknown;
  /** Fires when the renew deadline passes, so role, metrics and logs follow the fence at once. */
  deadlineTimer: unknown;
  stopped: boolean;
  running: Promise<void> | undefined;
  /** The role and holder last told to `onChange`. */
  last: string;
}

export function createElector(options: ElectorOptions): Elector {
  const e: ElectorState = {
    options,
    timers: options.timers ?? realTimers,
    now: options.monotonic,
    wall: options.wallClock ?? (() => new Date()),
    leaseSeconds: Math.round(options.leaseDurationMs / 1000),
    observed: undefined,
    renewedAt: undefined,
    transitions: 0,
    timer: undefined,
    deadlineTimer: undefined,
    stopped: false,
    running: undefined,
    last: '',
  };
  return {
    async start() {
      await attempt(e);
      schedule(e);
    },
    isLeader: () => isLeader(e),
    fence() {
      if (!isLeader(e)) {
        throw new LostLeadershipError(
          `not the leader (${options.store.description}): the write was not sent`,
        );
      }
    },
    status: () => status(e),
    stop: () => stopElector(e),
  };
}

function isLeader(e: ElectorState): boolean {
  return e.renewedAt !== undefined && e.now() - e.renewedAt < e.options.renewDeadlineMs;
}

function status(e: ElectorState): ElectorStatus {
  const leader = isLeader(e);
  return {
    role: leader ? 'leader' : 'standby',
    holder: leader ? e.options.identity : (e.observed?.record.holder ?? null) || null,
    transitions: e.transitions,
  };
}

function notify(e: ElectorState): void {
  const s = status(e);
  const key = `${s.role}|${s.holder}`;
  if (key === e.last) return;
  e.last = key;
  e.options.onChange?.(s);
}

function setLeader(e: ElectorState, at: number | undefined): void {
  const { identity, store, logger: log } = e.options;
  const was = e.renewedAt !== undefined;
  e.renewedAt = at;
  armDeadline(e);
  if (was !== (at !== undefined)) {
    e.transitions += 1;
    log?.info(
      { identity, lease: store.description, role: at === undefined ? 'standby' : 'leader' },
      at === undefined ? 'leadership lost' : 'leadership acquired',
    );
  }
}

// The fence reads the clock itself; without this, a renewal hanging past the deadline would
// leave /status, `edgesync_leader` and the log saying "leader" until the request gave up.
function armDeadline(e: ElectorState): void {
  const { timers } = e;
  if (e.deadlineTimer !== undefined) timers.clearTimeout(e.deadlineTimer);
  e.deadlineTimer = undefined;
  if (e.renewedAt === undefined || e.stopped) return;
  const left = e.renewedAt + e.options.renewDeadlineMs - e.now();
  e.deadlineTimer = timers.setTimeout(
    () => {
      e.deadlineTimer = undefined;
      if (e.renewedAt === undefined) return;
      // A timer may fire a little early by the monotonic clock: wait for the deadline itself.
      if (isLeader(e)) armDeadline(e);
      else {
        setLeader(e, undefined);
        notify(e);
      }
    },
    Math.max(0, left),
  );
}

function observe(e: ElectorState, record: LeaseRecord | undefined, at: number): void {
  if (record === undefined) {
    e.observed = undefined;
    return;
  }
  if (e.observed === undefined || e.observed.record.version !== record.version) {
    e.observed = { record, at };
  }
}

/** One attempt; true when this process holds the Lease afterwards. */
async function tryAcquireOrRenew(e: ElectorState): Promise<boolean> {
  const { store, identity } = e.options;
  const sentAt = e.now();
  const current = await store.get();
  const seenAt = e.now();
  observe(e, current, seenAt);
  const stamp = e.wall();
  if (current === undefined) {
    const created = await store.create({
      holder: identity,
      leaseDurationSeconds: e.leaseSeconds,
      acquireTime: stamp,
      renewTime: stamp,
      transitions: 0,
    });
    observe(e, created, e.now());
    setLeader(e, sentAt);
    return true;
  }
  const mine = current.holder === identity;
  const free = current.holder === undefined || current.holder === '';
  if (!mine && !free) {
    const since = e.observed?.at ?? seenAt;
    if (seenAt - since < current.leaseDurationSeconds * 1000) return false;
  }
  const next: LeaseSpec = {
    holder: identity,
    leaseDurationSeconds: e.leaseSeconds,
    acquireTime: mine ? (current.acquireTime ?? stamp) : stamp,
    renewTime: stamp,
    transitions: mine ? current.transitions : current.transitions + 1,
  };
  const replaced = await store.replace(next, current.version);
  observe(e, replaced, e.now());
  setLeader(e, sentAt);
  return true;
}

async function attempt(e: ElectorState): Promise<void> {
  try {
    const held = await tryAcquireOrRenew(e);
    if (!held && e.renewedAt !== undefined) setLeader(e, undefined);
  } catch (err) {
    if (err instanceof LeaseAccessError) throw err;
    if (!(err instanceof LeaseConflictError)) {
      e.options.logger?.warn(
        { err: errorMessage(err), lease: e.options.store.description },
        'lease request failed',
      );
    }
    // A leader keeps trusting its last renewal until the deadline; then it steps down.
    if (e.renewedAt !== undefined && !isLeader(e)) setLeader(e, undefined);
  }
  if (e.renewedAt !== undefined && !isLeader(e)) setLeader(e, undefined);
  notify(e);
}

function schedule(e: ElectorState): void {
  if (e.stopped) return;
  e.timer = e.timers.setTimeout(() => {
    e.timer = undefined;
    e.running = attempt(e).then(
      () => schedule(e),
      (err: unknown) => {
        e.stopped = true;
        setLeader(e, undefined);
        notify(e);
        e.options.logger?.error(
          { err: errorMessage(err) },
          'lease access refused; leader election stopped',
        );
        if (err instanceof LeaseAccessError) e.options.onFatal?.(err);
      },
    );
  }, e.options.retryPeriodMs);
}

/** Stops the loop; a leader releases the Lease (empty holder) so a standby takes over soon. */
async function stopElector(e: ElectorState): Promise<void> {
  const { store, identity, logger: log } = e.options;
  e.stopped = true;
  if (e.timer !== undefined) e.timers.clearTimeout(e.timer);
  if (e.deadlineTimer !== undefined) e.timers.clearTimeout(e.deadlineTimer);
  e.deadlineTimer = undefined;
  await e.running?.catch(() => undefined);
  if (!isLeader(e) || e.observed === undefined) {
    setLeader(e, undefined);
    return;
  }
  const current = e.observed.record;
  setLeader(e, undefined);
  try {
    await store.replace(
      {
        holder: '',
        leaseDurationSeconds: 1,
        acquireTime: current.acquireTime,
        renewTime: e.wall(),
        transitions: current.transitions,
      },
      current.version,
    );
    log?.info({ identity, lease: store.description }, 'lease released');
  } catch (err) {
    log?.warn({ err: errorMessage(err) }, 'could not release the lease; it expires instead');
  }
  notify(e);
}
