/**
 * The daemon's events: what changed, and every condition when it starts and when it clears
 * (drift on a resource, a blocked resource, an invalid manifest set, a failing cycle), never
 * the same condition again every cycle. Pure: `cycleEvents` folds a cycle's report into the
 * conditions and returns the events; `EventLog` keeps the last 200 for `GET /events` and hands
 * each new one to its subscribers (notifications). Messages carry addresses, reasons and field
 * paths, never values: nothing here can hold a secret.
 */
import type { PlanResources, ReconcileReport } from './types.js';

export const EVENT_TYPES = [
  'changed',
  'drift',
  'blocked',
  'invalid',
  'error',
  'recovered',
  'suspended',
  'resumed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface DaemonEvent {
  readonly time: string;
  readonly type: EventType;
  /** The resource's address, or null for the daemon as a whole. */
  readonly resource: string | null;
  readonly message: string;
  readonly revision: string | null;
}

/** The conditions in force after the last cycle. */
export interface Conditions {
  /** Resource address -> the reason it differs (observed, or left over after an apply). */
  readonly drift: ReadonlyMap<string, string>;
  readonly blocked: ReadonlyMap<string, string>;
  /** The daemon-wide failure in force: its type and message. */
  readonly failing: { readonly type: 'invalid' | 'error'; readonly message: string } | undefined;
}

export const NO_CONDITIONS: Conditions = {
  drift: new Map(),
  blocked: new Map(),
  failing: undefined,
};

const FAILING: ReadonlySet<string> = new Set(['invalid', 'error', 'lost_leadership']);

/**
 * The events of one cycle, and the conditions after it. `superseded` and `standby` cycles
 * change nothing (a standby does not report the leader's work as its own drift).
 */
export function cycleEvents(
  before: Conditions,
  report: ReconcileReport,
  at: number,
  revision: string | undefined,
): { readonly events: DaemonEvent[]; readonly conditions: Conditions } {
  if (report.result === 'superseded' || report.result === 'standby') {
    return { events: [], conditions: before };
  }
  const events: DaemonEvent[] = [];
  const event = (type: EventType, resource: string | null, message: string) =>
    events.push({
      time: new Date(at).toISOString(),
      type,
      resource,
      message,
      revision: revision ?? null,
    });

  if (FAILING.has(report.result)) {
    const type = report.result === 'invalid' ? 'invalid' : 'error';
    const message = report.error ?? (type === 'invalid' ? 'invalid manifests' : 'reconcile failed');
    if (before.failing?.type !== type || before.failing.message !== message) {
      event(type, null, message);
    }
    // A failing cycle says nothing about the resources: their conditions stand.
    return { events, conditions: { ...before, failing: { type, message } } };
  }
  if (before.failing !== undefined) {
    event('recovered', null, `${before.failing.type} cleared: reconcile ${report.result}`);
  }

  const resources: PlanResources = report.resources ?? { changes: [], blocked: [], noop: [] };
  const drift = new Map<string, string>();
  const blocked = new Map<string, string>();
  for (const b of resources.blocked) blocked.set(b.address, b.reason);
  if (report.result === 'changed' || (report.writes > 0 && !report.observed)) {
    for (const c of resources.changes) {
      event('changed', c.address, `${c.action}: ${c.reason}`);
    }
  } else {
    // Nothing was written: every difference is drift (observe mode, or a residual).
    for (const c of resources.changes) drift.set(c.address, `${c.action}: ${c.reason}`);
  }
  for (const [address, reason] of drift) {
    if (before.drift.get(address) !== reason) event('drift', address, reason);
  }
  for (const address of before.drift.keys()) {
    if (!drift.has(address)) event('recovered', address, 'in sync again');
  }
  for (const [address, reason] of blocked) {
    if (before.blocked.get(address) !== reason) event('blocked', address, reason);
  }
  for (const address of before.blocked.keys()) {
    if (!blocked.has(address)) event('recovered', address, 'no longer blocked');
  }
  return { events, conditions: { drift, blocked, failing: undefined } };
}

/** The last `capacity` events, newest last, with subscribers for new ones. */
export class EventLog {
  readonly #capacity: number;
  readonly #events: DaemonEvent[] = [];
  readonly #subscribers: Array<(e: DaemonEvent) => void> = [];

  constructor(capacity = 200) {
    this.#capacity = capacity;
  }

  push(e: DaemonEvent): void {
    this.#events.push(e);
    if (this.#events.length > this.#capacity) this.#events.shift();
    for (const s of this.#subscribers) s(e);
  }

  list(): readonly DaemonEvent[] {
    return [...this.#events];
  }

  subscribe(fn: (e: DaemonEvent) => void): void {
    this.#subscribers.push(fn);
  }
}
