/**
 * The Kubernetes Lease store through the real client library (@kubernetes/client-node) against
 * the wire-level fake of the Lease endpoints (test/helpers/lease-server.ts), via kubeconfigs.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseAccessError, LeaseConflictError, LeaseError } from '../../../src/errors.js';
import type { LeaseSpec } from '../../../src/lease/elector.js';
import { createKubernetesLeaseStore, defaultLeaseNamespace } from '../../../src/lease/k8s.js';
import { type LeaseServer, startLeaseServer } from '../../helpers/lease-server.js';

let fake: LeaseServer;
let dir: string;

beforeEach(async () => {
  fake = await startLeaseServer(['a', 'b']);
  dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-lease-'));
});
afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

async function store(token: string, timeoutMs = 2000) {
  const kc = new KubeConfig();
  kc.loadFromFile(await fake.kubeconfig(dir, token, 'prod'));
  return createKubernetesLeaseStore({
    name: 'edgesync-default',
    namespace: 'prod',
    timeoutMs,
    kubeConfig: kc,
  });
}

const spec = (holder: string): LeaseSpec => ({
  holder,
  leaseDurationSeconds: 15,
  acquireTime: new Date('2026-11-25T07:00:00.123Z'),
  renewTime: new Date('2026-11-25T07:00:01.456Z'),
  transitions: 0,
});

describe('Kubernetes Lease store', () => {
  it('get is undefined before the Lease exists; create and replace round-trip it', async () => {
    const a = await store('a');
    expect(await a.get()).toBeUndefined();
    const created = await a.create(spec('a'));
    expect(created).toMatchObject({ holder: 'a', leaseDurationSeconds: 15, transitions: 0 });
    // Written as MicroTime: exactly six fractional digits, as the API server requires.
    expect(fake.lease('prod', 'edgesync-default')?.spec.renewTime).toBe(
      '2026-11-25T07:00:01.456000Z',
    );
    const replaced = await a.replace({ ...spec('a'), transitions: 1 }, created.version);
    expect(replaced.version).not.toBe(created.version);
    expect((await a.get())?.renewTime?.toISOString()).toBe('2026-11-25T07:00:01.456Z');
  });

  it('a stale resourceVersion and a second create are conflicts', async () => {
    const a = await store('a');
    const b = await store('b');
    const created = await a.create(spec('a'));
    await expect(b.create(spec('b'))).rejects.toBeInstanceOf(LeaseConflictError);
    await expect(b.create(spec('b'))).rejects.toMatchObject({ code: 'ES_LEASE_CONFLICT' });
    await a.replace(spec('a'), created.version);
    await expect(b.replace(spec('b'), created.version)).rejects.toBeInstanceOf(LeaseConflictError);
  });

  it('403 is a LeaseAccessError naming the RBAC rule', async () => {
    fake.knobs.forbidden.add('a');
    const err = await (await store('a')).get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseAccessError);
    expect(err).toMatchObject({ code: 'ES_LEASE_ACCESS', status: 403 });
    expect((err as Error).message).toContain(
      'grant the service account the verbs get, create and update on leases.coordination.k8s.io in namespace prod',
    );
  });

  it('5xx and a silent server are ordinary failures', async () => {
    const a = await store('a', 300);
    fake.knobs.failNext = 1;
    const failed = await a.get().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LeaseError);
    expect(failed).toMatchObject({ code: 'ES_LEASE', message: expect.stringMatching(/HTTP 503/) });
    fake.knobs.cutOff.add('a');
    const silent = await a.get().catch((e: unknown) => e);
    expect(silent).toBeInstanceOf(LeaseError);
    expect(silent).toMatchObject({
      code: 'ES_LEASE',
      message: expect.stringMatching(/no answer in 300 ms/),
    });
  });

  it('401 (a token the API server does not know) is a LeaseAccessError too', async () => {
    const err = await (await store('stranger')).get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseAccessError);
    expect((err as LeaseAccessError).status).toBe(401);
  });

  it('cutting off one client leaves the others answered', async () => {
    const a = await store('a', 300);
    const b = await store('b', 300);
    const created = await b.create(spec('b'));
    fake.knobs.cutOff.add('a');
    await expect(a.get()).rejects.toThrow(/no answer in 300 ms/);
    expect((await b.replace(spec('b'), created.version)).holder).toBe('b');
  });

  it('latency within the timeout is only slow; beyond it, an ordinary failure', async () => {
    const a = await store('a', 400);
    fake.knobs.latencyMs = 100;
    expect(await a.get()).toBeUndefined();
    fake.knobs.latencyMs = 1000;
    const err = await a.get().catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(LeaseAccessError);
    expect((err as Error).message).toMatch(/no answer in 400 ms/);
  });

  it('the namespace defaults to the in-cluster one, else default', async () => {
    expect(defaultLeaseNamespace(path.join(dir, 'none'))).toBe('default');
    const file = path.join(dir, 'namespace');
    await writeFile(file, 'edge-system\n');
    expect(defaultLeaseNamespace(file)).toBe('edge-system');
  });
});
