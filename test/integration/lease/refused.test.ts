/**
 * `edgesync run --leader-elect` in-process against a fake Lease API that answers 403: start-up
 * stops with exit 1, naming the missing RBAC rule. The Kubernetes client reads `KUBECONFIG` from
 * the process environment, so the test sets it there for its duration.
 */
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { type LeaseServer, startLeaseServer } from '../../helpers/lease-server.js';
import { startTestServer } from '../../helpers/server.js';
import { runCli } from '../apply/helpers.js';
import { tempDir, tlsEdge, writeYaml } from '../run/helpers.js';

let lease: LeaseServer | undefined;
let api: Awaited<ReturnType<typeof startTestServer>> | undefined;
let tmp: Awaited<ReturnType<typeof tempDir>> | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await lease?.close();
  await api?.close();
  await tmp?.cleanup();
});

it('a Lease API answering 403 stops start-up with the missing RBAC rule, exit 1', async () => {
  api = await startTestServer();
  tmp = await tempDir();
  const edges = path.join(tmp.dir, 'edges');
  await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db')]);
  lease = await startLeaseServer(['a']);
  lease.knobs.forbidden.add('a');
  vi.stubEnv('KUBECONFIG', await lease.kubeconfig(path.join(tmp.dir, 'kube'), 'a', 'edges'));
  const run = await runCli(
    ['run', edges, '--leader-elect', '--lease-namespace', 'edges', '--listen', '127.0.0.1:0'],
    {
      cwd: tmp.dir,
      env: {
        EDGESYNC_API_URL: api.url,
        EDGESYNC_API_KEY: api.apiKey,
        EDGESYNC_OWNER: 'default',
        EDGESYNC_RATE_LIMIT: 'none',
      },
    },
  );
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(
    'grant the service account the verbs get, create and update on leases.coordination.k8s.io in namespace edges',
  );
  // Refused before it began: it never listened.
  expect(run.stderr).not.toContain('status on');
});
