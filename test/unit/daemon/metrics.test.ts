import { describe, expect, it } from 'vitest';
import { createDaemonMetrics, normalizeRoute } from '../../../src/daemon/metrics.js';

/** The value of one sample line, e.g. `edgesync_reconcile_total{result="error"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('normalizeRoute', () => {
  it.each([
    ['/edges/https', '/edges/https'],
    ['/edges/https/edghts_2abcDEF123', '/edges/https/:id'],
    ['/edges/https/edghts_2abc/routes/edghtsrt_9xyz/oauth', '/edges/https/:id/routes/:id/oauth'],
    ['/edges/tls?limit=100&before_id=edgtls_1', '/edges/tls'],
    ['/bot_users/bot_123', '/bot_users/:id'],
    ['/bot_users', '/bot_users'],
    [
      '/edges/https/edghts_1/routes/edghtsrt_2/ip_restriction',
      '/edges/https/:id/routes/:id/ip_restriction',
    ],
    ['/things/42', '/things/:id'],
    ['', '/'],
  ])('%s -> %s', (route, expected) => {
    expect(normalizeRoute(route)).toBe(expected);
  });
});

describe('daemon metrics', () => {
  it('counts API responses by method, folded route and status, and 429s apart', async () => {
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
        'edgesync_api_requests_total{method="PATCH",route="/edges/https/:id",status="429"}',
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
});
