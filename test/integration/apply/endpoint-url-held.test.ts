/**
 * A URL held by a live endpoint that is not ours (an agent's, another owner's, an unowned one),
 * against the local server over HTTP: `plan` shows the manifest for that URL blocked as a
 * conflict instead of a create, and `apply` sends no request for it (the service would answer
 * 400 ERR_SVC_18009); the rest of the directory is applied.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const endpoint = (name: string, url: string) => `kind: CloudEndpoint
name: ${name}
url: ${url}
traffic_policy:
  on_http_request:
    - actions:
        - type: deny
`;

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;
beforeEach(async () => {
  server = await startTestServer({ agentEndpoints: [{ url: 'https://agent.example.com' }] });
  tmp = await tempDir('edgesync-url-held-');
  dir = path.join(tmp.dir, 'manifests');
  await mkdir(dir);
  const client = apiClient(server.url, server.apiKey);
  try {
    await client.createEndpoint({
      url: 'https://foreign.example.com',
      traffic_policy: JSON.stringify({ on_http_request: [{ actions: [{ type: 'deny' }] }] }),
      metadata: storedMetadata({}, { owner: 'other-team', name: 'shop', protect: false }),
    });
  } finally {
    await client.close();
  }
});
afterEach(async () => {
  await server.close();
  await tmp.cleanup();
});

it('plan blocks the endpoints whose URL another holds; apply sends nothing for them', async () => {
  await writeFile(path.join(dir, 'shop.yaml'), endpoint('shop', 'https://Foreign.example.com:443'));
  await writeFile(path.join(dir, 'agent.yaml'), endpoint('agent', 'https://agent.example.com'));
  await writeFile(path.join(dir, 'free.yaml'), endpoint('free', 'https://free.example.com'));
  const env = apiEnv(server.url, server.apiKey);
  const before = writesAt(server);

  const plan = await runCli(['plan', '--output', 'json', dir], { env });
  expect(plan.code, plan.stderr).toBe(0);
  const planned = JSON.parse(plan.stdout) as {
    changes: { address: string; action: string }[];
    blocked: { address: string; kind: string; reason: string }[];
  };
  expect(planned.changes.map((c) => [c.address, c.action])).toEqual([
    ['cloud_endpoint.free', 'create'],
  ]);
  expect(planned.blocked.map((b) => [b.address, b.kind])).toEqual([
    ['cloud_endpoint.agent', 'conflict'],
    ['cloud_endpoint.shop', 'conflict'],
  ]);
  expect(planned.blocked[1]?.reason).toMatch(
    /^url https:\/\/foreign\.example\.com \(public\) is held by endpoint ep_\w+ which belongs to owner "other-team"/,
  );

  const apply = await runCli(['apply', '--yes', dir], { env });
  expect(apply.stderr).not.toContain('18009');
  // One create (free); none for the held URLs, so no 400 either.
  expect(writesAt(server) - before).toBe(1);
  expect(server.statuses[400] ?? 0).toBe(0);
  const live = await snapshotOf(server.url, server.apiKey);
  expect(live.cloudEndpoints.map((e) => e.url).sort()).toEqual([
    'https://agent.example.com',
    'https://foreign.example.com',
    'https://free.example.com',
  ]);
  // Not converged: the held URLs stay blocked.
  expect(apply.code).toBe(1);
  expect(apply.stderr).toContain('cloud_endpoint.shop');
});
