import fs from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDaemon, type Daemon, type DaemonOptions } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import type { DaemonStatus, ReconcileReport } from '../../../src/daemon/types.js';
import { ConfigError, type Diagnostic, ManifestError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { MISSING_DIR_MESSAGE } from '../../../src/manifest/resolve.js';
import { flush, ManualClock } from '../../unit/daemon/manual-clock.js';
import {
  CONVERGED,
  gate,
  logCapture,
  makeTempDir,
  recorder,
  removeDir,
  waitFor,
} from './helpers.js';

let daemon: Daemon | undefined;
let tmp: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await removeDir(tmp);
  tmp = undefined;
});

async function startDaemon(options: Partial<DaemonOptions> & Pick<DaemonOptions, 'reconcile'>) {
  tmp ??= await makeTempDir('daemon-http');
  const dir = path.join(tmp, 'manifests');
  await fs.mkdir(dir, { recursive: true });
  daemon = createDaemon({
    dir,
    listen: { host: '127.0.0.1', port: 0 },
    watch: false,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    ...options,
  });
  await daemon.start();
  const port = daemon.address?.port;
  if (!port) throw new Error('daemon did not bind');
  return { daemon, dir, base: `http://127.0.0.1:${port}` };
}

async function getStatus(base: string): Promise<DaemonStatus> {
  const res = await fetch(`${base}/status`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  return (await res.json()) as DaemonStatus;
}

function diag(file: string, message: string, line = 3): Diagnostic {
  return { file, line, column: 5, path: 'routes[0].match', message, severity: 'error' };
}

describe('daemon HTTP surface', () => {
  it('serves /healthz, /readyz, /status and /metrics through the first reconcile', async () => {
    const held = gate();
    const capture = logCapture();
    const report: ReconcileReport = {
      result: 'changed',
      summary: { create: 2, update: 1, delete: 0, adopt: 0, noop: 4 },
      writes: 5,
      managed: { tls_edge: 1, https_edge: 6, bot_user: 2, cloud_endpoint: 0 },
      outOfSync: 0,
    };
    const { calls, reconcile } = recorder(async () => {
      await held.promise;
      return report;
    });
    const {
      base,
      dir,
      daemon: d,
    } = await startDaemon({
      reconcile,
      logger: createLogger({ destination: capture.destination }),
    });
    await waitFor('the startup cycle', () => calls.length === 1);
    expect(calls[0]).toMatchObject({
      dir: await fs.realpath(dir),
      revision: undefined,
      reason: 'startup',
    });

    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    await notReady.text();
    expect(d.ready).toBe(false);
    expect(await getStatus(base)).toMatchObject({
      format_version: 2,
      ready: false,
      in_flight: true,
      last_reconcile: null,
      last_success_at: null,
    });

    held.open();
    await waitFor('readiness', () => d.ready);
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.text()]).toEqual([200, 'ready\n']);

    const status = await getStatus(base);
    expect(status).toMatchObject({
      format_version: 2,
      dir,
      resolved_dir: await fs.realpath(dir),
      revision: null,
      ready: true,
      in_flight: false,
      last_reconcile: {
        result: 'changed',
        reason: 'startup',
        revision: null,
        summary: report.summary,
        writes: 5,
        out_of_sync: 0,
      },
      last_error: null,
      diagnostics_by_file: {},
      backoff_ms: 0,
      consecutive_failures: 0,
    });
    expect(Date.parse(status.last_success_at ?? '')).toBeGreaterThan(0);
    // The next resync is one interval (60 s, spread by ±10%) after the cycle.
    const lag =
      Date.parse(status.next_resync_at ?? '') - Date.parse(status.last_reconcile?.at ?? '');
    expect(lag).toBeGreaterThanOrEqual(53_000);
    expect(lag).toBeLessThanOrEqual(67_000);

    // The API client's hook feeds the same registry the endpoint serves.
    d.metrics.observeApiResponse({ method: 'GET', route: '/edges/https?limit=100', status: 429 });
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toContain('edgesync_reconcile_total{result="changed"} 1');
    expect(text).toContain('edgesync_reconcile_duration_seconds_count{result="changed"} 1');
    expect(text).toContain('edgesync_managed_resources{kind="https_edge"} 6');
    expect(text).toContain('edgesync_resources_out_of_sync 0');
    expect(text).toContain('edgesync_manifest_errors 0');
    expect(text).toContain(
      'edgesync_api_requests_total{method="GET",route="/edges/https",status="429"} 1',
    );
    expect(text).toContain('edgesync_api_throttled_total 1');
    expect(text).toMatch(/edgesync_last_success_timestamp_seconds \d{10}/);

    // One log line per reconcile, carrying its summary.
    const lines = capture.lines.filter((l) => l.msg === 'reconcile changed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      result: 'changed',
      reason: 'startup',
      summary: report.summary,
      writes: 5,
    });
  });

  it.each([
    ['GET', '/nope', 404, null],
    ['GET', '/', 200, null],
    ['POST', '/', 405, 'GET, HEAD'],
    ['POST', '/healthz', 405, 'GET, HEAD'],
    ['PUT', '/metrics', 405, 'GET, HEAD'],
    ['DELETE', '/status', 405, 'GET, HEAD'],
    ['GET', '/-/reconcile', 405, 'POST'],
    ['HEAD', '/healthz', 200, null],
    ['GET', '/healthz?probe=1', 200, null],
    ['GET', '/status/resources?state=out_of_sync&limit=5', 200, null],
    ['GET', '/status/resources?limit=5000', 400, null],
    ['GET', '/status/resources?page=2', 400, null],
    ['POST', '/status/resources', 405, 'GET, HEAD'],
  ])('%s %s -> %i', async (method, url, expected, allow) => {
    const { base } = await startDaemon({ reconcile: recorder().reconcile });
    const res = await fetch(`${base}${url}`, { method });
    expect(res.status).toBe(expected);
    expect(res.headers.get('allow')).toBe(allow);
    const body = await res.text();
    if (method === 'HEAD') expect(body).toBe('');
  });

  it('POST /-/reconcile answers 202 and coalesces a burst into one queued cycle', async () => {
    const gates = [gate(), gate(), gate()];
    const { calls, reconcile } = recorder(async (_input, i) => {
      await gates[i]?.promise;
      return CONVERGED;
    });
    const { base } = await startDaemon({ reconcile });
    await waitFor('the startup cycle', () => calls.length === 1);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${base}/-/reconcile`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"ignored":true}',
        }).then(async (r) => {
          await r.text();
          return r.status;
        }),
      ),
    );
    expect(answers).toEqual(Array(8).fill(202));
    gates[0]?.open();
    await waitFor('the queued webhook cycle', () => calls.length === 2);
    gates[1]?.open();
    // Webhooks start at once (no debounce): idle means nothing else was queued.
    await waitFor('idle', async () => !(await getStatus(base)).in_flight);
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'webhook']);
  });

  it.each([
    ['returned', false],
    ['thrown as ManifestError', true],
  ])(
    'an invalid set (%s) keeps the daemon up, visible in /status and /metrics',
    async (_how, thrown) => {
      let dirForDiag = '';
      const diagnostics = () => [
        diag(
          path.join(dirForDiag, 'web', 'shop.yaml'),
          'unknown field "mtach"; did you mean "match"?',
        ),
        diag(path.join(dirForDiag, 'web', 'shop.yaml'), 'duplicate route "/"', 9),
        diag('relative.yaml', 'name is required', 1),
      ];
      const { calls, reconcile } = recorder(({ dir }) => {
        dirForDiag = dir;
        if (thrown) throw new ManifestError(diagnostics());
        return {
          result: 'invalid',
          summary: { create: 0, update: 0, delete: 0, adopt: 0, noop: 0 },
          writes: 0,
          diagnostics: diagnostics(),
        };
      });
      const { base, daemon: d } = await startDaemon({
        reconcile,
        backoff: { baseMs: 60_000, maxMs: 60_000 },
      });
      await waitFor(
        'a failed cycle',
        async () => (await getStatus(base)).consecutive_failures === 1,
      );
      const status = await getStatus(base);
      expect(status).toMatchObject({
        ready: false,
        last_reconcile: { result: 'invalid', writes: 0 },
        last_error: { message: '3 errors in 2 files: the manifests are invalid' },
        backoff_ms: 60_000,
        diagnostics_by_file: {
          'web/shop.yaml': [
            {
              line: 3,
              column: 5,
              path: 'routes[0].match',
              message: 'unknown field "mtach"; did you mean "match"?',
              severity: 'error',
            },
            {
              line: 9,
              column: 5,
              path: 'routes[0].match',
              message: 'duplicate route "/"',
              severity: 'error',
            },
          ],
          'relative.yaml': [{ line: 1, message: 'name is required' }],
        },
      });
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain('edgesync_reconcile_total{result="invalid"} 1');
      expect(text).toContain('edgesync_manifest_errors 3');
      expect(text).toContain('edgesync_consecutive_failures 1');
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      expect(calls).toHaveLength(1);
      // A webhook bypasses the backoff: the operator's fix is tried at once.
      expect((await fetch(`${base}/-/reconcile`, { method: 'POST' })).status).toBe(202);
      await waitFor('the webhook cycle', () => calls.length === 2);
      expect(d.status().consecutive_failures).toBeGreaterThanOrEqual(1);
    },
  );

  it('never calls reconcile while the directory is missing, records why, and recovers', async () => {
    tmp = await makeTempDir('daemon-http');
    const dir = path.join(tmp, 'later');
    const { calls, reconcile } = recorder();
    daemon = createDaemon({
      dir,
      reconcile,
      listen: { host: '127.0.0.1', port: 0 },
      watch: false,
      backoff: { baseMs: 20, maxMs: 40 },
      metrics: createDaemonMetrics({ defaultMetrics: false }),
    });
    await daemon.start();
    const base = `http://127.0.0.1:${daemon.address?.port}`;
    await waitFor(
      'three failed cycles',
      async () => (await getStatus(base)).consecutive_failures >= 3,
    );
    const status = await getStatus(base);
    expect(calls).toHaveLength(0);
    expect(status.last_error?.message).toContain(MISSING_DIR_MESSAGE);
    expect(status.last_error?.message).toContain('does not exist');
    expect(status).toMatchObject({
      ready: false,
      resolved_dir: null,
      last_reconcile: { result: 'error', writes: 0 },
    });
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(
      /edgesync_reconcile_total\{result="error"\} [3-9]/,
    );

    await fs.mkdir(dir);
    await waitFor('a reconcile once the directory exists', () => calls.length >= 1, 3000);
    expect(calls[0]?.dir).toBe(dir);
    await waitFor('readiness', () => daemon?.ready === true);
    expect((await getStatus(base)).last_error).toBeNull();
  });

  it('stop() aborts the in-flight reconcile, lets it finish its call, and refuses webhooks meanwhile', async () => {
    const observed: { aborted?: boolean; finished?: boolean } = {};
    const inFlight = gate();
    const { calls, reconcile } = recorder(async ({ signal }) => {
      await new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      observed.aborted = signal.aborted;
      await inFlight.promise; // the API call in flight completes when the test says so
      observed.finished = true;
      return { ...CONVERGED, result: 'error', error: 'aborted: shutting down' };
    });
    const { base, daemon: d } = await startDaemon({ reconcile, graceMs: 60_000 });
    await waitFor('the startup cycle', () => calls.length === 1);
    let stopDone = false;
    const stopped = d.stop().then(() => {
      stopDone = true;
    });
    const refused = await fetch(`${base}/-/reconcile`, { method: 'POST' });
    expect(refused.status).toBe(503);
    await refused.text();
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await waitFor('the cycle aborted', () => observed.aborted === true);
    expect(stopDone).toBe(false); // stop() waits for the call in flight
    inFlight.open();
    await stopped;
    expect(observed.finished).toBe(true);
    await expect(d.closed).resolves.toBeUndefined();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    expect(calls).toHaveLength(1);
  });

  it('stop() gives up on a reconcile that ignores its signal after the grace period', async () => {
    const { calls, reconcile } = recorder(() => new Promise<ReconcileReport>(() => undefined));
    const clock = new ManualClock();
    const { daemon: d } = await startDaemon({
      reconcile,
      graceMs: 150,
      timers: clock,
      now: clock.now,
    });
    await waitFor('the startup cycle', () => calls.length === 1);
    let stopDone = false;
    const stopped = d.stop().then(() => {
      stopDone = true;
    });
    await clock.advance(149);
    await flush();
    expect(stopDone).toBe(false);
    await clock.advance(1);
    await stopped;
  });

  it('stops when the signal it was given aborts', async () => {
    const controller = new AbortController();
    const { calls, reconcile } = recorder();
    const { daemon: d } = await startDaemon({ reconcile, signal: controller.signal });
    await waitFor('the startup cycle', () => calls.length === 1);
    controller.abort();
    await d.closed;
    d.trigger('manual');
    // A stopped daemon refuses triggers synchronously: nothing is queued or running.
    expect(d.status().in_flight).toBe(false);
    expect(calls).toHaveLength(1);
  });

  it('fails start() with a ConfigError on a busy port, and releases what it took', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as { port: number }).port;
      tmp = await makeTempDir('daemon-http');
      const { calls, reconcile } = recorder();
      const d = createDaemon({
        dir: tmp,
        reconcile,
        listen: { host: '127.0.0.1', port },
        watch: false,
      });
      await expect(d.start()).rejects.toThrow(ConfigError);
      await expect(d.start()).rejects.toThrow(`cannot listen on 127.0.0.1:${port}`);
      await d.stop();
      expect(calls).toHaveLength(0);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it.each([
    [{ intervalMs: 0 }, 'interval'],
    [{ debounceMs: -1 }, 'debounce'],
    [{ backoff: { baseMs: 5000, maxMs: 1000 } }, 'backoff cap'],
    [{ graceMs: Number.NaN }, 'grace'],
    [{ intervalMs: 3_000_000_000 }, 'interval'],
  ])('refuses bad options %j', (bad, what) => {
    expect(() => createDaemon({ dir: '.', reconcile: recorder().reconcile, ...bad })).toThrow(
      ConfigError,
    );
    expect(() => createDaemon({ dir: '.', reconcile: recorder().reconcile, ...bad })).toThrow(what);
  });
});
