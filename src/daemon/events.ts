/**
 * The daemon's events: what changed, and every condition when it starts and when it clears
 * (drift on a resource, a blocked resource, a create waiting for a resource that is not ready,
 * an invalid manifest set, a failing cycle), and a resource's readiness when it changes (a
 * domain waiting for DNS, then ready), never the same condition again every cycle. Pure: `cycleEvents` folds a cycle's report into the
 * conditions and returns the events; `EventLog` keeps the last 200 for `GET /events` and hands
 * each new one to its subscribers (notifications). Messages carry addresses, reasons and field
 * paths, never values: nothing here can hold a secret.
 */
import { readableOf } from '../engine/report.js';
import type { Readiness } from '../kinds/index.js';
import type { WaitingFor } from '../plan/model.js';
import type { PlanResources, ReconcileReport } from './types.js';

export const EVENT_TYPES = [
  'changed',
  'drift',
  'blocked',
  'waiting',
  'readiness',
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
  /** `readiness` events: the resource's readiness now (state, message, DNS records to create). */
  readonly readiness?: Readiness;
  /** `waiting` events: what the held-back create waits for, with the DNS records to create. */
  readonly waiting_for?: readonly WaitingFor[];
}

/** The conditions in force after the last cycle. */
export interface Conditions {
  /** Resource address -> the reason it differs (observed, or left over after an apply). */
  readonly drift: ReadonlyMap<string, string>;
  readonly blocked: ReadonlyMap<string, string>;
  /** Resource address -> why its create is held back (it waits for a resource to be ready). */
  readonly waiting: ReadonlyMap<string, string>;
  /**
   * Resource address -> its readiness when it is not ready. A resource first seen ready is no
   * news; one that was not and is now is.
   */
  readonly notReady: ReadonlyMap<string, Readiness>;
  /** The daemon-wide failure in force: its type and message. */
  readonly failing: { readonly type: 'invalid' | 'error'; readonly message: string } | undefined;
}

export const NO_CONDITIONS: Conditions = {
  drift: new Map(),
  blocked: new Map(),
  waiting: new Map(),
  notReady: new Map(),
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
  const event: Emit = (type, resource, message, detail = {}) =>
    events.push({
      time: new Date(at).toISOString(),
      type,
      resource,
      message,
      revision: revision ?? null,
      ...detail,
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
  // Readiness first: a domain's state reads before the endpoint that waits for it.
  const notReady = readinessEvents(before.notReady, resources, event);
  const drift = new Map<string, string>();
  const blocked = new Map<string, string>();
  const waiting = new Map<string, PlanResources['blocked'][number]>();
  for (const b of resources.blocked) {
    if (b.waiting_for === undefined) blocked.set(b.address, b.reason);
    else waiting.set(b.address, b);
  }
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
  for (const [address, b] of waiting) {
    if (before.waiting.get(address) !== b.reason) {
      event('waiting', address, b.reason, b.waiting_for ? { waiting_for: b.waiting_for } : {});
    }
  }
  for (const address of before.waiting.keys()) {
    if (!waiting.has(address)) event('recovered', address, 'no longer waiting');
  }
  const waitingReasons = new Map([...waiting].map(([address, b]) => [address, b.reason]));
  return {
    events,
    conditions: { drift, blocked, waiting: waitingReasons, notReady, failing: undefined },
  };
}

type Emit = (
  type: EventType,
  resource: string | null,
  message: string,
  detail?: Pick<DaemonEvent, 'readiness' | 'waiting_for'>,
) => void;

/**
 * A `readiness` event for each resource whose readiness changed: it is not ready and was not,
 * or not in the same way (another state, message or record), or it is ready and was not. The
 * resources not ready after this cycle are returned. One whose readiness this cycle did not read
 * (no live record in its observation) keeps its condition; one the plan no longer names at all
 * (its manifest and live resource gone) is forgotten without an event.
 */
function readinessEvents(
  before: ReadonlyMap<string, Readiness>,
  resources: PlanResources,
  event: Emit,
): Map<string, Readiness> {
  const notReady = new Map<string, Readiness>();
  const read = ({ address, readiness }: { address: string; readiness?: Readiness }) => {
    const was = before.get(address);
    if (readiness === undefined) {
      if (was !== undefined) notReady.set(address, was);
      return;
    }
    if (readiness.state === 'ready') {
      if (was !== undefined)
        event('readiness', address, `ready: ${readiness.message}`, { readiness });
      return;
    }
    notReady.set(address, readiness);
    if (was === undefined || JSON.stringify(was) !== JSON.stringify(readiness)) {
      event('readiness', address, `${readiness.state}: ${readiness.message}`, { readiness });
    }
  };
  // The two lists in turn, not a copy of both (50,000 entries at 50,000 resources). Of the
  // no-op entries, only those of the kinds that read readiness when the report says which
  // (`readableOf`): an entry of another kind has none, and was never kept as not ready.
  for (const entry of resources.changes) read(entry);
  for (const entry of readableOf(resources.noop) ?? resources.noop) read(entry);
  // Left alone this cycle (suspended, excluded, blocked): not read, so the condition stands.
  for (const { address } of resources.blocked) {
    const was = before.get(address);
    if (was !== undefined) notReady.set(address, was);
  }
  return notReady;
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
