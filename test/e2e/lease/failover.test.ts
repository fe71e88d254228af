/**
 * `edgesync run --leader-elect` as three child processes sharing one Edge API server (the real
 * local server over HTTP, each process behind its own recording proxy so writes are counted per
 * process) and one fake Kubernetes Lease API (test/helpers/lease-server.ts, driven by the real
 * client library through a kubeconfig per process). Short timings: lease 3s, renew deadline 2s,
 * retry period 500ms.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type DaemonChild,
  type RecordingProxy,
  startDaemonChild,
  startRecordingProxy,
  stopChildren,
  waitFor,
} from '../../../bench/harness.js';
import type { DaemonStatus } from '../../../src/daemon/types.js';
import type { RunningServer } from '../../../src/server/index.js';
import { type LeaseServer, startLeaseServer } from '../../helpers/lease-server.js';
import { startTestServer } from '../../helpers/server.js';
import { assertBuilt, tempDir, tlsEdge, writeYaml } from '../../integration/run/helpers.js';

const LEASE_MS = 3000;
const RETRY_MS = 500;
const TIMINGS = ['--lease-duration', '3s', '--renew-deadline', '2s', '--retry-period', '500ms'];
const NAMES = ['a', 'b', 'c'] as const;

let api: RunningServer & { apiKey: string };
let lease: LeaseServer;
let tmp: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  assertBuilt();
  api = await startTestServer();
});
afterAll(async () => {
  await api.close();
});

interface Replica {
  readonly name: string;
  readonly proxy: RecordingProxy;
  readonly daemon: DaemonChild;
}
let replicas: Replica[] = [];

afterEach(async () => {
  await stopChildren();
  for (const r of replicas) await r.proxy.close();
  replicas = [];
  await lease?.close();
  await tmp?.cleanup();
});

const writesOf = (r: Replica) => r.proxy.seen.filter((q) => q.method !== 'GET');

async function startReplicas(dirs: Record<string, string>, names = NAMES): Promise<Replica[]> {
  lease = await startLeaseServer([...NAMES]);
  const started: Replica[] = [];
  for (const name of names) {
    const proxy = await startRecordingProxy(api.url);
    const kubeconfig = await lease.kubeconfig(path.join(tmp.dir, 'kube'), name, 'edges');
    const daemon = await startDaemonChild({
      args: [
        dirs[name] ?? '',
        '--leader-elect',
        ...TIMINGS,
        '--interval',
        '1s',
        '--debounce',
        '50ms',
      ],
      cwd: tmp.dir,
      env: {
        EDGESYNC_API_URL: proxy.url,
        EDGESYNC_API_KEY: api.apiKey,
        EDGESYNC_OWNER: 'default',
        KUBECONFIG: kubeconfig,
        POD_NAME: name,
        EDGESYNC_LOG_LEVEL: 'warn',
      },
    });
    started.push({ name, proxy, daemon });
  }
  replicas = started;
  return started;
}

async function leaderOf(rs: readonly Replica[]): Promise<Replica> {
  return waitFor(
    'one leader',
    async () => {
      for (const r of rs) {
        if (r.daemon.child.exitCode !== null || r.daemon.child.signalCode !== null) continue;
        const s: DaemonStatus = await r.daemon.status();
        if (s.leader_election?.role === 'leader') return r;
      }
      return undefined;
    },
    15_000,
  );
}

async function edgeNames(): Promise<string[]> {
  const res = await fetch(`${api.url}/edges/tls?limit=100`, {
    headers: { authorization: `Bearer ${api.apiKey}`, 'svc-version': '2' },
  });
  const body = (await res.json()) as { tls_edges: Array<{ metadata: string }> };
  return body.tls_edges.map((e) => String(JSON.parse(e.metadata)['edgesync/name'])).sort();
}

describe('leader election with three replicas', () => {
  it('only the leader writes; after SIGKILL a standby takes over and writes', async () => {
    tmp = await tempDir();
    const edges = path.join(tmp.dir, 'edges');
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db')]);
    const rs = await startReplicas({ a: edges, b: edges, c: edges });
    const leader = await leaderOf(rs);
    await waitFor('the first edge', async () => (await edgeNames()).includes('db'), 15_000);
    // Standbys observe and report, never write.
    for (const r of rs) {
      // A standby is ready once its first observing cycle is done.
      const s = await waitFor(`${r.name} ready`, async () => {
        const st = await r.daemon.status();
        return st.ready ? st : undefined;
      });
      expect(s.leader_election?.role).toBe(r === leader ? 'leader' : 'standby');
      if (r !== leader) {
        expect(writesOf(r)).toEqual([]);
        expect(s.ready).toBe(true);
        expect((await fetch(`${r.daemon.base}/readyz`)).status).toBe(200);
      }
    }
    expect(await leader.daemon.metrics()).toMatch(/^edgesync_leader 1$/m);

    const killedAt = Date.now();
    leader.daemon.child.kill('SIGKILL');
    await leader.daemon.exited;
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
    const next = await leaderOf(rs.filter((r) => r !== leader));
    await waitFor(
      'the new leader to write',
      async () => (await edgeNames()).includes('cache'),
      15_000,
    );
    const takeover = lease.writes.find((w) => w.at > killedAt && w.holder === next.name);
    expect(takeover).toBeDefined();
    const tookMs = (takeover?.at ?? 0) - killedAt;
    console.info(`failover after SIGKILL: lease taken over in ${tookMs} ms`);
    // Lease duration plus one retry period, with slack for a loaded machine.
    expect(tookMs).toBeLessThan(LEASE_MS + RETRY_MS + 2000);
    for (const r of rs) {
      if (r !== leader && r !== next) expect(writesOf(r)).toEqual([]);
    }
    // The promise is about writes: the new leader's first Edge API write, not only
    // its Lease update, comes within the lease duration plus a retry period (and a cycle).
    const firstWrite = writesOf(next).find((w) => w.at > killedAt);
    expect(firstWrite).toBeDefined();
    const writeMs = (firstWrite?.at ?? 0) - killedAt;
    console.info(`failover after SIGKILL: first write by the new leader after ${writeMs} ms`);
    expect(writeMs).toBeLessThan(LEASE_MS + RETRY_MS + 2000);
  });

  it('after SIGTERM the leader releases the Lease and a standby takes over and writes within two seconds', async () => {
    tmp = await tempDir();
    const edges = path.join(tmp.dir, 'edges');
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db')]);
    const rs = await startReplicas({ a: edges, b: edges, c: edges });
    const leader = await leaderOf(rs);
    const termAt = Date.now();
    leader.daemon.child.kill('SIGTERM');
    expect(await leader.daemon.exited).toEqual({ code: 0, signal: null });
    const released = lease.writes.find((w) => w.at >= termAt && w.holder === '');
    expect(released?.token).toBe(leader.name);
    // Something for the next leader to write: its first write is the end of the failover.
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
    const next = await leaderOf(rs.filter((r) => r !== leader));
    const takeover = lease.writes.find((w) => w.at >= termAt && w.holder === next.name);
    const tookMs = (takeover?.at ?? 0) - termAt;
    console.info(`failover after SIGTERM: lease taken over in ${tookMs} ms`);
    expect(tookMs).toBeLessThan(2000);
    await waitFor(
      'the new leader to write',
      async () => (await edgeNames()).includes('cache'),
      15_000,
    );
    const firstWrite = writesOf(next).find((w) => w.at > termAt);
    const writeMs = (firstWrite?.at ?? Number.POSITIVE_INFINITY) - termAt;
    console.info(`failover after SIGTERM: first write by the new leader after ${writeMs} ms`);
    expect(writeMs).toBeLessThan(2000);
    for (const r of rs) {
      if (r !== next) expect(writesOf(r).filter((w) => w.at > termAt)).toEqual([]);
    }
  });

  it('a leader cut off from the Lease API stops writing before its lease expires', async () => {
    tmp = await tempDir();
    const edges = path.join(tmp.dir, 'edges');
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db')]);
    const rs = await startReplicas({ a: edges, b: edges, c: edges });
    const leader = await leaderOf(rs);
    await waitFor('the first edge', async () => (await edgeNames()).includes('db'), 15_000);
    lease.knobs.cutOff.add(leader.name);
    const cutAt = Date.now();
    const lastRenew = Math.max(
      ...lease.writes.filter((w) => w.token === leader.name && w.at <= cutAt).map((w) => w.at),
    );
    // Keep giving the old leader something to write.
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db'), tlsEdge('mq')]);
    await waitFor(
      'the old leader to step down',
      async () => (await leader.daemon.status()).leader_election?.role === 'standby',
      10_000,
    );
    const next = await leaderOf(rs.filter((r) => r !== leader));
    await waitFor(
      'the new leader to write',
      async () => (await edgeNames()).includes('mq'),
      15_000,
    );
    const late = writesOf(leader).filter((w) => w.at >= lastRenew + LEASE_MS);
    expect(late).toEqual([]);
    expect(next).not.toBe(leader);
  });

  it('two replicas on different revisions: writes come from one process only', async () => {
    tmp = await tempDir();
    const v1 = path.join(tmp.dir, 'rev-1');
    const v2 = path.join(tmp.dir, 'rev-2');
    await mkdir(v1, { recursive: true });
    await writeYaml(path.join(v1, 'tcp.yaml'), [tlsEdge('db'), tlsEdge('old')]);
    await writeYaml(path.join(v2, 'tcp.yaml'), [tlsEdge('db'), tlsEdge('new')]);
    const rs = await startReplicas({ a: v1, b: v2 }, ['a', 'b'] as unknown as typeof NAMES);
    const leader = await leaderOf(rs);
    const other = rs.find((r) => r !== leader) as Replica;
    const want = leader.name === 'a' ? 'old' : 'new';
    await waitFor(
      'the leader revision applied',
      async () => (await edgeNames()).includes(want),
      15_000,
    );
    // Several cycles of both (1 s resync): the standby never writes, so nothing flaps.
    const cycles = async (r: Replica) =>
      Date.parse((await r.daemon.status()).last_reconcile?.at ?? '1970-01-01T00:00:00Z');
    const since = Date.now();
    await waitFor(
      'three more cycles of each',
      async () => {
        const [x, y] = [await cycles(leader), await cycles(other)];
        return x > since + 2000 && y > since + 2000;
      },
      15_000,
    );
    expect(writesOf(other)).toEqual([]);
    expect((await other.daemon.status()).last_reconcile?.result).toBe('standby');
    expect(await edgeNames()).toEqual(['db', want]);
  });
});
