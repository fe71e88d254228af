/**
 * `edgesync run` as a child process, its life and death: SIGTERM while a write is in flight
 * finishes that write, starts no other and exits 0 within the grace period (and a write hanging
 * past the grace period does not hold the exit); after `kill -9` a restart (in-process: only the
 * killed daemon needs a process) with unchanged manifests makes zero writes (against an external
 * server, and against the embedded one, whose acknowledged writes must have survived the kill).
 */
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type DaemonChild,
  type RecordingProxy,
  startDaemonChild,
  startRecordingProxy,
  stopChildren,
  waitFor,
  waitForCycle,
} from '../../../bench/harness.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import {
  assertBuilt,
  metricSum,
  tempDir,
  tlsEdge,
  writeYaml,
} from '../../integration/run/helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
let proxy: RecordingProxy;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let edges: string;

beforeAll(() => assertBuilt());

beforeEach(async () => {
  server = await startTestServer();
  proxy = await startRecordingProxy(server.url);
  tmp = await tempDir();
  edges = path.join(tmp.dir, 'edges');
  await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db'), tlsEdge('cache'), tlsEdge('mq')]);
});

afterEach(async () => {
  await stopChildren();
  await stopDaemons();
  await proxy.close();
  await server.close();
  await tmp.cleanup();
});

const external = () => ({
  EDGESYNC_API_URL: proxy.url,
  EDGESYNC_API_KEY: server.apiKey,
  EDGESYNC_OWNER: 'default',
});

async function convergedOnce(daemon: DaemonChild): Promise<void> {
  await waitForCycle(daemon, 0, (s) => s.last_reconcile?.result === 'converged', 15_000);
}

describe('edgesync run (child process): signals and restarts', () => {
  it('SIGTERM during an apply finishes the write in flight, starts no other, exits 0', async () => {
    const daemon = await startDaemonChild({
      args: [
        edges,
        '--interval',
        '1h',
        '--debounce',
        '50ms',
        '--grace',
        '5s',
        '--concurrency',
        '1',
      ],
      cwd: tmp.dir,
      env: external(),
    });
    // First cycle creates; the file edit below makes a second, file-triggered one.
    await waitForCycle(daemon, 0, (s) => s.last_reconcile?.result === 'changed');

    server.knobs.latencyMs = { min: 1500, max: 1500 };
    await writeYaml(path.join(edges, 'tcp.yaml'), [
      tlsEdge('db', { description: 'edited' }),
      tlsEdge('cache', { description: 'edited' }),
      tlsEdge('mq', { description: 'edited' }),
    ]);
    const inFlight = await waitFor('a PATCH in flight', () =>
      proxy.seen.find((r) => r.method === 'PATCH' && r.status === undefined),
    );
    const termAt = Date.now();
    daemon.child.kill('SIGTERM');
    const exit = await daemon.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    // The write in flight was finished, not cut off: the server answered it.
    expect(inFlight.status).toBe(200);
    // Nothing new started after the signal.
    expect(proxy.seen.filter((r) => r.at > termAt)).toEqual([]);
    const stopped = daemon.logLines().find((l) => l.msg === 'daemon stopped');
    expect(stopped).toMatchObject({ in_time: true });
    const interrupted = daemon.logLines().find((l) => l.msg === 'reconcile error');
    expect(String(interrupted?.error)).toContain('aborted');
    expect(daemon.stderr()).not.toMatch(/internal error|Error:|at .*\.js:\d+/);
  });

  it('a write still hanging when the grace period ends does not hold the exit', async () => {
    const daemon = await startDaemonChild({
      args: [edges, '--interval', '1h', '--debounce', '50ms', '--grace', '1s'],
      cwd: tmp.dir,
      env: external(),
    });
    await waitForCycle(daemon, 0, (s) => s.last_reconcile?.result === 'changed');
    // A write that hangs far longer than the grace period (held by the proxy; reads stay fast).
    proxy.delayWritesMs = 20_000;
    await writeYaml(path.join(edges, 'tcp.yaml'), [
      tlsEdge('db', { description: 'slow' }),
      tlsEdge('cache'),
      tlsEdge('mq'),
    ]);
    const hanging = await waitFor('a PATCH in flight', () =>
      proxy.seen.find((r) => r.method === 'PATCH'),
    );
    const termAt = Date.now();
    daemon.child.kill('SIGTERM');
    const exit = await daemon.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    // The process left while the write was still unanswered: the grace period, not the 20 s
    // answer, bounded the exit.
    expect(hanging.status).toBeUndefined();
    expect(daemon.logLines().find((l) => l.msg === 'daemon stopped')).toMatchObject({
      in_time: false,
    });
    expect(proxy.seen.filter((r) => r.at > termAt)).toEqual([]);
  });

  it('after kill -9, a restart with unchanged manifests makes zero writes', async () => {
    const args = [edges, '--interval', '300ms', '--debounce', '50ms'];
    const first = await startDaemonChild({ args, cwd: tmp.dir, env: external() });
    await convergedOnce(first);
    expect(proxy.writes()).toHaveLength(3);

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const restartedAt = Date.now();
    // The restart needs no process of its own: only the killed one had to be a process.
    const second = await startDaemon({ args, cwd: tmp.dir, env: external() });
    // Startup and at least two resyncs, every one converged with nothing to write.
    await waitFor(
      'three converged cycles after the restart',
      async () => metricSum(await second.metrics(), 'edgesync_reconcile_total') >= 3,
    );
    const metrics = await second.metrics();
    expect(metricSum(metrics, 'edgesync_reconcile_total')).toBe(
      metricSum(metrics, 'edgesync_reconcile_total', { result: 'converged' }),
    );
    expect(proxy.writes().filter((w) => w.at >= restartedAt)).toEqual([]);
    expect(proxy.seen.filter((w) => w.at >= restartedAt).length).toBeGreaterThanOrEqual(9);
  });

  it('after kill -9, the embedded server kept every write: the restart makes zero writes', async () => {
    const args = [
      edges,
      '--interval',
      '300ms',
      '--debounce',
      '50ms',
      '--embedded-port',
      '0',
      '--state-dir',
      path.join(tmp.dir, 'state'),
    ];
    const first = await startDaemonChild({ args, cwd: tmp.dir });
    await convergedOnce(first);
    const writes = (m: string) =>
      ['POST', 'PATCH', 'PUT', 'DELETE'].reduce(
        (n, method) => n + metricSum(m, 'edgesync_api_requests_total', { method }),
        0,
      );
    expect(writes(await first.metrics())).toBe(3);

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const second = await startDaemon({ args, cwd: tmp.dir });
    await waitFor(
      'three cycles after the restart',
      async () => metricSum(await second.metrics(), 'edgesync_reconcile_total') >= 3,
    );
    const metrics = await second.metrics();
    expect(metricSum(metrics, 'edgesync_reconcile_total', { result: 'converged' })).toBe(
      metricSum(metrics, 'edgesync_reconcile_total'),
    );
    expect(writes(metrics)).toBe(0);
    expect(metricSum(metrics, 'edgesync_managed_resources', { kind: 'tls_edge' })).toBe(3);
  });
});
