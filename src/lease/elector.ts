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

export function createElector(options: ElectorOptions): Elector {
  const { store, identity } = options;
  const timers = options.timers ?? realTimers;
  const now = options.monotonic;
  const wall = options.wallClock ?? (() => new Date());
  const log = options.logger;
  const leaseSeconds = Math.round(options.leaseDurationMs / 1000);

  /** The version last seen and when (local, monotonic) it was first seen. */
  let observed: { record: LeaseRecord; at: number } | undefined;
  /** Monotonic time the last successful acquire/renew was sent; undefined: not leader. */
  let renewedAt: number | undefined;
  let transitions = 0;
  let timer: unknown;
  /** Fires when the renew deadline passes, so role, metrics and logs follow the fence at once. */
  let deadlineTimer: unknown;
  let stopped = false;
  let running: Promise<void> | undefined;

  const isLeader = (): boolean =>
    renewedAt !== undefined && now() - renewedAt < options.renewDeadlineMs;

  const status = (): ElectorStatus => {
    const leader = isLeader();
    return {
      role: leader ? 'leader' : 'standby',
      holder: leader ? identity : (observed?.record.holder ?? null) || null,
      transitions,
    };
  };

  let last = '';
  const notify = () => {
    const s = status();
    const key = `${s.role}|${s.holder}`;
    if (key === last) return;
    last = key;
    options.onChange?.(s);
  };

  const setLeader = (at: number | undefined) => {
    const was = renewedAt !== undefined;
    renewedAt = at;
    armDeadline();
    if (was !== (at !== undefined)) {
      transitions += 1;
      log?.info(
        { identity, lease: store.description, role: at === undefined ? 'standby' : 'leader' },
        at === undefined ? 'leadership lost' : 'leadership acquired',
      );
    }
  };

  // The fence reads the clock itself; without this, a renewal hanging past the deadline would
  // leave /status, `edgesync_leader` and the log saying "leader" until the request gave up.
  function armDeadline(): void {
    if (deadlineTimer !== undefined) timers.clearTimeout(deadlineTimer);
    deadlineTimer = undefined;
    if (renewedAt === undefined || stopped) return;
    const left = renewedAt + options.renewDeadlineMs - now();
    deadlineTimer = timers.setTimeout(
      () => {
        deadlineTimer = undefined;
        if (renewedAt === undefined) return;
        // A timer may fire a little early by the monotonic clock: wait for the deadline itself.
        if (isLeader()) armDeadline();
        else {
          setLeader(undefined);
          notify();
        }
      },
      Math.max(0, left),
    );
  }

  const observe = (record: LeaseRecord | undefined, at: number) => {
    if (record === undefined) {
      observed = undefined;
      return;
    }
    if (observed === undefined || observed.record.version !== record.version) {
      observed = { record, at };
    }
  };

  /** One attempt; true when this process holds the Lease afterwards. */
  async function tryAcquireOrRenew(): Promise<boolean> {
    const sentAt = now();
    const current = await store.get();
    const seenAt = now();
    observe(current, seenAt);
    const stamp = wall();
    if (current === undefined) {
      const created = await store.create({
        holder: identity,
        leaseDurationSeconds: leaseSeconds,
        acquireTime: stamp,
        renewTime: stamp,
        transitions: 0,
      });
      observe(created, now());
      setLeader(sentAt);
      return true;
    }
    const mine = current.holder === identity;
    const free = current.holder === undefined || current.holder === '';
    if (!mine && !free) {
      const since = observed?.at ?? seenAt;
      if (seenAt - since < current.leaseDurationSeconds * 1000) return false;
    }
    const next: LeaseSpec = {
      holder: identity,
      leaseDurationSeconds: leaseSeconds,
      acquireTime: mine ? (current.acquireTime ?? stamp) : stamp,
      renewTime: stamp,
      transitions: mine ? current.transitions : current.transitions + 1,
    };
    const replaced = await store.replace(next, current.version);
    observe(replaced, now());
    setLeader(sentAt);
    return true;
  }

  async function attempt(): Promise<void> {
    try {
      const held = await tryAcquireOrRenew();
      if (!held && renewedAt !== undefined) setLeader(undefined);
    } catch (err) {
      if (err instanceof LeaseAccessError) throw err;
      if (!(err instanceof LeaseConflictError)) {
        log?.warn({ err: errorMessage(err), lease: store.description }, 'lease request failed');
      }
      // A leader keeps trusting its last renewal until the deadline; then it steps down.
      if (renewedAt !== undefined && !isLeader()) setLeader(undefined);
    }
    if (renewedAt !== undefined && !isLeader()) setLeader(undefined);
    notify();
  }

  function schedule(): void {
    if (stopped) return;
    timer = timers.setTimeout(() => {
      timer = undefined;
      running = attempt().then(schedule, (err: unknown) => {
        stopped = true;
        setLeader(undefined);
        notify();
        log?.error({ err: errorMessage(err) }, 'lease access refused; leader election stopped');
        if (err instanceof LeaseAccessError) options.onFatal?.(err);
      });
    }, options.retryPeriodMs);
  }

  return {
    async start() {
      await attempt();
      schedule();
    },
    isLeader,
    fence() {
      if (!isLeader()) {
        throw new LostLeadershipError(
          `not the leader (${store.description}): the write was not sent`,
        );
      }
    },
    status,
    async stop() {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      if (deadlineTimer !== undefined) timers.clearTimeout(deadlineTimer);
      deadlineTimer = undefined;
      await running?.catch(() => undefined);
      if (!isLeader() || observed === undefined) {
        setLeader(undefined);
        return;
      }
      const current = observed.record;
      setLeader(undefined);
      try {
        await store.replace(
          {
            holder: '',
            leaseDurationSeconds: 1,
            acquireTime: current.acquireTime,
            renewTime: wall(),
            transitions: current.transitions,
          },
          current.version,
        );
        log?.info({ identity, lease: store.description }, 'lease released');
      } catch (err) {
        log?.warn({ err: errorMessage(err) }, 'could not release the lease; it expires instead');
      }
      notify();
    },
  };
}
