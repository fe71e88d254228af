/**
 * `edgesync run --leader-elect`: the flags, the identity, and the elector on a Kubernetes
 * Lease, wired to the daemon's metrics and triggers. `run` keeps a few lines for it.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { ConfigError, LeaseAccessError } from '../errors.js';
import type { Logger } from '../log.js';
import { checkElectorTimings, createElector, type Elector } from './elector.js';

export const LEASE_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

export interface LeaderElectionOptions {
  readonly owner: string;
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** Every change of role or holder. */
  readonly onChange: (leader: boolean, transitions: number) => void;
  /** Access refused after start-up: the daemon must stop (never run leaderless, silently). */
  readonly onFatal: (err: Error) => void;
}

export interface LeaderElection {
  readonly elector: Elector;
  readonly identity: string;
  readonly lease: string;
}

/** `POD_NAME` (downward API), else host name and PID. */
export function leaseIdentity(env: Readonly<Record<string, string | undefined>>): string {
  const pod = env.POD_NAME?.trim();
  return pod !== undefined && pod !== '' ? pod : `${os.hostname()}_${process.pid}`;
}

/** Validates the timings (a usage problem: throws the message) before anything starts. */
export function leaseTimingsProblem(o: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): string | undefined {
  return checkElectorTimings(o);
}

/**
 * Creates the elector and makes its first attempt. A Lease API refusing access is a
 * ConfigError naming the missing RBAC rule (exit 1), never retried.
 */
export async function startLeaderElection(o: LeaderElectionOptions): Promise<LeaderElection> {
  const identity = leaseIdentity(o.env);
  // Loaded only for `--leader-elect`: the Kubernetes client is some 900 modules, and a daemon
  // without leader election would hold their source and code (45-50 MiB resident) for nothing.
  const { createKubernetesLeaseStore, defaultLeaseNamespace } = await import('./k8s.js');
  const store = createKubernetesLeaseStore({
    name: o.name ?? `edgesync-${o.owner}`,
    namespace: o.namespace ?? defaultLeaseNamespace(),
    timeoutMs: Math.max(500, Math.min(5_000, o.retryPeriodMs * 2)),
  });
  const elector = createElector({
    store,
    identity,
    leaseDurationMs: o.leaseDurationMs,
    renewDeadlineMs: o.renewDeadlineMs,
    retryPeriodMs: o.retryPeriodMs,
    monotonic: () => performance.now(),
    logger: o.logger,
    onChange: (s) => o.onChange(s.role === 'leader', s.transitions),
    onFatal: (err) => o.onFatal(new ConfigError(err.message, { cause: err })),
  });
  try {
    await elector.start();
  } catch (err) {
    if (err instanceof LeaseAccessError) throw new ConfigError(err.message, { cause: err });
    throw err;
  }
  o.logger.info(
    { identity, lease: store.description, role: elector.status().role },
    'leader election started',
  );
  return { elector, identity, lease: store.description };
}
