/**
 * The daemon's Prometheus metrics (prom-client), on a registry of their own: never the global
 * default registry, so every daemon (and every test) has independent counters.
 *
 * Others feed it: the API client's `onResponse` hook calls `observeApiResponse` once per HTTP
 * answer; the daemon calls `observeReconcile` once per cycle.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { templateOfPath } from '../api/routes.js';
import {
  MANAGED_KINDS,
  type ManagedCounts,
  RECONCILE_RESULTS,
  type ReconcileResult,
  type ResourceCounts,
  SUCCESS_RESULTS,
} from './types.js';

export interface ApiResponseObservation {
  readonly method: string;
  /** The operation's path template (or a path, matched to its template here: `routeLabel`). */
  readonly route: string;
  readonly status: number;
}

export interface ReconcileObservation {
  readonly result: ReconcileResult;
  readonly durationMs: number;
  /** Epoch ms the cycle ended. */
  readonly at: number;
  readonly managed?: ManagedCounts | undefined;
  readonly outOfSync?: number | undefined;
  /** Error-severity diagnostics of the set the cycle read; undefined when it read none. */
  readonly manifestErrors?: number | undefined;
  readonly consecutiveFailures: number;
}

export interface DaemonMetrics {
  readonly registry: Registry;
  /** The `Content-Type` of `render()`'s text. */
  readonly contentType: string;
  render(): Promise<string>;
  observeApiResponse(observation: ApiResponseObservation): void;
  observeReconcile(observation: ReconcileObservation): void;
  /** 1 while the daemon is suspended. */
  observeSuspended(suspended: boolean): void;
  /** Managed resources by kind and state (`/status`'s `resource_counts.by_kind`). */
  observeResources(byKind: ResourceCounts['by_kind']): void;
  /** The periodic resync's effective interval (stretched to the API budget). */
  observeResyncInterval(ms: number): void;
  /** Leader election: this replica's role now, and how many times it changed so far. */
  observeLeadership(leader: boolean, transitions: number): void;
}

export interface DaemonMetricsOptions {
  /** Node.js process metrics (CPU, memory, event loop, GC). Default true. */
  readonly defaultMetrics?: boolean;
  /** The kinds of `edgesync_managed_resources`: by default every registered kind. */
  readonly kinds?: readonly string[] | undefined;
}

/** The label of a response whose path is no operation of the API's table: one, not one per path. */
export const OTHER_ROUTE = 'other';

/**
 * The `route` label of an API response: the template of its operation in the API's table
 * (`/edges/https/{edge_id}/routes/{id}`), which the client reports as it is. A concrete path is
 * matched to its template, its query string dropped, so label cardinality stays bounded by the
 * table whatever a caller reports.
 */
export function routeLabel(route: string): string {
  const path = route.split(/[?#]/, 1)[0] ?? '';
  return templateOfPath(path) ?? OTHER_ROUTE;
}

type Registers = Registry[];
type Observe<O> = (observation: O) => void;

/** Cycles by result: a count and a duration histogram; every result exists at 0 from the start. */
function reconcileCounters(registers: Registers): Observe<ReconcileObservation> {
  const total = new Counter({
    name: 'edgesync_reconcile_total',
    help: 'Reconcile cycles, by result.',
    labelNames: ['result'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'edgesync_reconcile_duration_seconds',
    help: 'Duration of reconcile cycles, by result.',
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers,
  });
  // So rate() and absent-alerts work before the first error.
  for (const result of RECONCILE_RESULTS) total.inc({ result }, 0);
  return (o) => {
    total.inc({ result: o.result });
    duration.observe({ result: o.result }, o.durationMs / 1000);
  };
}

/** API responses by method, route template and status; 429s apart. */
function apiCounters(registers: Registers): Observe<ApiResponseObservation> {
  const requests = new Counter({
    name: 'edgesync_api_requests_total',
    help: 'Edge API responses, by method, route and HTTP status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const throttled = new Counter({
    name: 'edgesync_api_throttled_total',
    help: 'Edge API responses with status 429 (throttled by the account budget).',
    registers,
  });
  return ({ method, route, status }) => {
    requests.inc({
      method: method.toUpperCase(),
      route: routeLabel(route),
      status: String(status),
    });
    if (status === 429) throttled.inc();
  };
}

/** What the last cycle found: managed and out-of-sync resources, errors, failures in a row. */
function cycleGauges(
  registers: Registers,
  kinds: readonly string[],
): Observe<ReconcileObservation> {
  const managed = new Gauge({
    name: 'edgesync_managed_resources',
    help: 'Resources managed by this controller at the last observation, by kind.',
    labelNames: ['kind'] as const,
    registers,
  });
  const outOfSync = new Gauge({
    name: 'edgesync_resources_out_of_sync',
    help: 'Resources whose live state differed from the manifests at the last observation.',
    registers,
  });
  const lastSuccess = new Gauge({
    name: 'edgesync_last_success_timestamp_seconds',
    help: 'Unix time of the last successful reconcile (0 before the first).',
    registers,
  });
  const manifestErrors = new Gauge({
    name: 'edgesync_manifest_errors',
    help: 'Errors in the manifest set read by the last cycle that read one.',
    registers,
  });
  const failures = new Gauge({
    name: 'edgesync_consecutive_failures',
    help: 'Failed reconcile cycles since the last success (drives the backoff).',
    registers,
  });
  for (const kind of kinds) managed.set({ kind }, 0);
  return (o) => {
    if (SUCCESS_RESULTS.has(o.result)) lastSuccess.set(o.at / 1000);
    if (o.managed) for (const kind of kinds) managed.set({ kind }, o.managed[kind] ?? 0);
    if (o.outOfSync !== undefined) outOfSync.set(o.outOfSync);
    if (o.manifestErrors !== undefined) manifestErrors.set(o.manifestErrors);
    failures.set(o.consecutiveFailures);
  };
}

/** Leader election: the role now, and the transitions so far (a counter fed a running total). */
function leaderMetrics(registers: Registers): DaemonMetrics['observeLeadership'] {
  const leader = new Gauge({
    name: 'edgesync_leader',
    help: '1 while this replica holds the Lease (leader election), else 0.',
    registers,
  });
  const transitionsTotal = new Counter({
    name: 'edgesync_leader_transitions_total',
    help: 'Times this replica became or stopped being the leader.',
    registers,
  });
  let seen = 0;
  return (isLeader, transitions) => {
    leader.set(isLeader ? 1 : 0);
    if (transitions > seen) transitionsTotal.inc(transitions - seen);
    seen = transitions;
  };
}

/** The daemon's own state: suspended, its resources by kind and state, its resync interval. */
function stateGauges(
  registers: Registers,
): Pick<DaemonMetrics, 'observeSuspended' | 'observeResources' | 'observeResyncInterval'> {
  const suspended = new Gauge({
    name: 'edgesync_suspended',
    help: '1 while the daemon is suspended (POST /-/suspend, --suspended): no writes.',
    registers,
  });
  const resources = new Gauge({
    name: 'edgesync_resources',
    help: 'Managed resources at the last cycle that planned, by kind and state.',
    labelNames: ['kind', 'state'] as const,
    registers,
  });
  const resyncInterval = new Gauge({
    name: 'edgesync_resync_interval_seconds',
    help: 'The periodic resync interval now: --interval, stretched to fit --resync-budget.',
    registers,
  });
  return {
    observeSuspended: (on) => suspended.set(on ? 1 : 0),
    observeResources(byKind) {
      resources.reset();
      for (const [kind, states] of Object.entries(byKind)) {
        for (const [state, n] of Object.entries(states)) resources.set({ kind, state }, n);
      }
    },
    observeResyncInterval: (ms) => resyncInterval.set(ms / 1000),
  };
}

/** The event-loop lag's sampling resolution (`nodejs_eventloop_lag_*`), in ms. */
const LAG_RESOLUTION_MS = 100;

export function createDaemonMetrics(options: DaemonMetricsOptions = {}): DaemonMetrics {
  const registry = new Registry();
  // The event-loop lag is sampled by a timer that wakes the process at this resolution: at
  // prom-client's 10 ms an idle daemon spent about 7 ms of CPU a second waking up for it. A cycle
  // lasts far longer than 100 ms, so the coarser histogram still shows a blocked loop.
  if (options.defaultMetrics ?? true)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LAG_RESOLUTION_MS });
  const registers = [registry];
  // Created in this order, which is the order of the exposition text.
  const countReconcile = reconcileCounters(registers);
  const observeApiResponse = apiCounters(registers);
  const setCycleGauges = cycleGauges(registers, options.kinds ?? MANAGED_KINDS);
  const observeLeadership = leaderMetrics(registers);
  const state = stateGauges(registers);
  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    observeApiResponse,
    observeReconcile(o) {
      countReconcile(o);
      setCycleGauges(o);
    },
    ...state,
    observeLeadership,
  };
}
