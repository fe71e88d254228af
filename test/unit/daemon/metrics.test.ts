import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import { API_OPERATIONS, fillTemplate } from '../../../src/api/routes.js';
import { createDaemonMetrics, routeLabel } from '../../../src/daemon/metrics.js';

/** The value of one sample line, e.g. `edgesync_reconcile_total{result="error"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('routeLabel', () => {
  it.each([
    // What the client reports: an operation's template, kept as it is.
    ['/edges/https', '/edges/https'],
    ['/edges/https/{edge_id}/routes/{id}', '/edges/https/{edge_id}/routes/{id}'],
    ['/edges/tls/{id}/backend', '/edges/tls/{id}/backend'],
    ['/endpoints/{id}', '/endpoints/{id}'],
    // A concrete path: matched to its template in the table.
    ['/edges/https/edghts_2abcDEF123', '/edges/https/{id}'],
    [
      '/edges/https/edghts_2abc/routes/edghtsrt_9xyz/oauth',
      '/edges/https/{edge_id}/routes/{id}/oauth',
    ],
    ['/edges/tls?limit=100&before_id=edgtls_1', '/edges/tls'],
    ['/bot_users/bot_123', '/bot_users/{id}'],
    ['/bot_users', '/bot_users'],
    // Nothing of the table: one label for all, so cardinality stays bounded.
    ['/things/42', 'other'],
    ['/edges/tls/edgtls_1/no_such_module', 'other'],
    ['/edges/https//routes', 'other'],
    ['', 'other'],
  ])('%s -> %s', (route, expected) => {
    expect(routeLabel(route)).toBe(expected);
  });

  it('labels every operation of the table with its own template', () => {
    for (const op of API_OPERATIONS) {
      const path = fillTemplate(op.template, (p) => `${p}_2Xk9`);
      expect(routeLabel(path), path).toBe(op.template);
      expect(routeLabel(op.template)).toBe(op.template);
    }
  });
});

describe('daemon metrics', () => {
  it('counts API responses by method, route template and status, and 429s apart', async () => {
    const m = createDaemonMetrics({ defaultMetrics: false });
    m.observeApiResponse({ method: 'get', route: '/edges/https?limit=100', status: 200 });
    m.observeApiResponse({ method: 'GET', route: '/edges/https', status: 200 });
    m.observeApiResponse({ method: 'PATCH', route: '/edges/https/edghts_1', status: 429 });
    m.observeApiResponse({ method: 'PATCH', route: '/edges/https/edghts_2', status: 429 });
    const text = await m.render();
    expect(
      sample(text, 'edgesync_api_requests_total{method="GET",route="/edges/https",status="200"}'),
    ).toBe(2);
    expect(
      sample(
        text,
        'edgesync_api_requests_total{method="PATCH",route="/edges/https/{id}",status="429"}',
      ),
    ).toBe(2);
    expect(sample(text, 'edgesync_api_throttled_total')).toBe(2);
  });

  it('records reconciles: counts and durations by result, gauges from the report', async () => {
    const m = createDaemonMetrics({ defaultMetrics: false });
    let text = await m.render();
    // Every result is present before the first cycle, so rate() works from the start.
    for (const result of ['converged', 'changed', 'drift', 'invalid', 'error']) {
      expect(sample(text, `edgesync_reconcile_total{result="${result}"}`)).toBe(0);
    }
    m.observeReconcile({
      result: 'changed',
      durationMs: 1500,
      at: 1_700_000_000_000,
      managed: { tls_edge: 2, https_edge: 5, bot_user: 1, cloud_endpoint: 0 },
      outOfSync: 0,
      manifestErrors: 0,
      consecutiveFailures: 0,
    });
    m.observeReconcile({
      result: 'invalid',
      durationMs: 20,
      at: 1_700_000_060_000,
      manifestErrors: 3,
      consecutiveFailures: 1,
    });
    text = await m.render();
    expect(sample(text, 'edgesync_reconcile_total{result="changed"}')).toBe(1);
    expect(sample(text, 'edgesync_reconcile_total{result="invalid"}')).toBe(1);
    expect(sample(text, 'edgesync_reconcile_duration_seconds_count{result="changed"}')).toBe(1);
    expect(sample(text, 'edgesync_reconcile_duration_seconds_sum{result="changed"}')).toBe(1.5);
    expect(
      sample(text, 'edgesync_reconcile_duration_seconds_bucket{le="1",result="changed"}'),
    ).toBe(0);
    expect(
      sample(text, 'edgesync_reconcile_duration_seconds_bucket{le="2.5",result="changed"}'),
    ).toBe(1);
    // The invalid cycle observed nothing live: the last observation stands.
    expect(sample(text, 'edgesync_managed_resources{kind="https_edge"}')).toBe(5);
    expect(sample(text, 'edgesync_managed_resources{kind="tls_edge"}')).toBe(2);
    expect(sample(text, 'edgesync_resources_out_of_sync')).toBe(0);
    expect(sample(text, 'edgesync_last_success_timestamp_seconds')).toBe(1_700_000_000);
    expect(sample(text, 'edgesync_manifest_errors')).toBe(3);
    expect(sample(text, 'edgesync_consecutive_failures')).toBe(1);
  });

  it('gives every daemon its own registry', async () => {
    const a = createDaemonMetrics({ defaultMetrics: false });
    const b = createDaemonMetrics({ defaultMetrics: false });
    a.observeApiResponse({ method: 'GET', route: '/edges/tls', status: 500 });
    const series = 'edgesync_api_requests_total{method="GET",route="/edges/tls",status="500"}';
    expect(sample(await a.render(), series)).toBe(1);
    expect(sample(await b.render(), series)).toBeUndefined();
  });

  it('includes the process metrics by default', async () => {
    const m = createDaemonMetrics();
    const text = await m.render();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_heap_size_used_bytes');
    expect(m.contentType).toContain('text/plain');
  });

  it('samples the event-loop lag every 100 ms (at 10 ms an idle daemon woke 100 times a second)', async () => {
    // prom-client reads the lag from the histogram `perf_hooks` keeps at this resolution.
    const hooks = createRequire(import.meta.url)(
      'node:perf_hooks',
    ) as typeof import('node:perf_hooks');
    const spy = vi.spyOn(hooks, 'monitorEventLoopDelay');
    try {
      const m = createDaemonMetrics();
      expect(spy).toHaveBeenCalledWith(expect.objectContaining({ resolution: 100 }));
      expect(await m.render()).toContain('nodejs_eventloop_lag_p99_seconds');
    } finally {
      spy.mockRestore();
    }
  });
});
