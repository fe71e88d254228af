/**
 * An account without access to edges (the local server started with `edgeAccess: 'no-access'`,
 * as `edgesync server --no-edge-access`): its edge lists answer 403 ERR_SVC_7302. Cloud
 * endpoints and bot users are still managed: plan, apply and a daemon cycle read the live edges
 * as none, and refuse only a directory that declares edges, naming their files.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { NO_CALLS, observe } from '../../../src/api/index.js';
import { run as serverCommand } from '../../../src/cli/commands/server.js';
import { generateApiKey } from '../../../src/server/index.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { waitFor } from '../daemon/helpers.js';
import { apiClient, apiEnv, runCli, tempDir } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const ENDPOINT = {
  kind: 'CloudEndpoint',
  name: 'web',
  url: 'https://web.example.com',
  traffic_policy: {
    on_http_request: [{ actions: [{ type: 'deny', config: { status_code: 404 } }] }],
  },
};
const BOT = { kind: 'BotUser', name: 'ci' };
const EDGE = { kind: 'TLSEdge', name: 'db', hostports: ['db.example.com:443'] };

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;

async function write(files: Record<string, readonly Record<string, unknown>[]>): Promise<void> {
  for (const [name, docs] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), docs.map((d) => stringify(d)).join('---\n'));
  }
}

beforeEach(async () => {
  server = await startTestServer({ edgeAccess: 'no-access' });
  tmp = await tempDir();
  dir = path.join(tmp.dir, 'manifests');
});
afterEach(async () => {
  await stopDaemons();
  await server.close();
  await tmp.cleanup();
});

describe('an account with no access to edges', () => {
  it('observe reads the edges as none and unavailable; the refused lists count as calls', async () => {
    const client = apiClient(server.url, server.apiKey);
    try {
      const live = await observe(client);
      expect(live.edgesUnavailable).toBe(true);
      expect(live.tlsEdges).toEqual([]);
      expect(live.httpsEdges).toEqual([]);
      // One call per kind, the two refused edge lists included.
      expect(live.calls).toEqual(Object.fromEntries(Object.keys(NO_CALLS).map((k) => [k, 1])));
      expect(server.statuses[403]).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('plan and apply manage endpoints and bot users, and the next plan is empty', async () => {
    await write({ 'web.yaml': [ENDPOINT], 'bots.yaml': [BOT] });
    const env = apiEnv(server.url, server.apiKey);
    const plan = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('cloud_endpoint.web');
    expect(plan.stdout).toContain('no access to edges');
    expect(writesAt(server)).toBe(0);

    const apply = await runCli(['apply', '--yes', dir], { env });
    expect(apply.stderr).not.toContain('ERR_SVC_7302');
    expect(apply.code).toBe(0);
    expect(writesAt(server)).toBe(2);
    const client = apiClient(server.url, server.apiKey);
    try {
      const live = await observe(client);
      expect(live.cloudEndpoints.map((e) => e.url)).toEqual(['https://web.example.com']);
      expect(live.botUsers.map((b) => b.name)).toEqual(['ci']);
    } finally {
      await client.close();
    }
    const again = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect(again.code).toBe(0);
  });

  it('a directory that declares edges is refused, naming their files; nothing is written', async () => {
    await write({ 'web.yaml': [ENDPOINT], 'edges/db.yaml': [EDGE] });
    const env = apiEnv(server.url, server.apiKey);
    for (const command of [['plan'], ['apply', '--yes']]) {
      const run = await runCli([...command, dir], { env });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('the account has no access to edges');
      expect(run.stderr).toContain('edges/db.yaml');
      expect(run.stderr).toContain('tls_edge.db');
    }
    expect(writesAt(server)).toBe(0);
  });

  it('a daemon cycle creates the endpoint; an edge saved later is refused, naming its file', async () => {
    await write({ 'web.yaml': [ENDPOINT] });
    const daemon = await startDaemon({
      args: [dir, '--interval', '1h', '--debounce', '20ms'],
      cwd: tmp.dir,
      env: { ...apiEnv(server.url, server.apiKey) },
    });
    const status = await waitFor('the first cycle', async () => {
      const s = await daemon.status();
      return s.last_reconcile !== null ? s : undefined;
    });
    expect(status.last_reconcile).toMatchObject({ result: 'changed', writes: 1 });
    expect(await daemon.resources()).toEqual([
      expect.objectContaining({ address: 'cloud_endpoint.web', state: 'in_sync' }),
    ]);
    expect(writesAt(server)).toBe(1);
    // The next cycle plans the saved file against the kept snapshot (no listing): refused too.
    await write({ 'edges/db.yaml': [EDGE] });
    const refused = await waitFor('the cycle after the save', async () => {
      const s = await daemon.status();
      return s.last_reconcile?.reason === 'file' ? s.last_reconcile : undefined;
    });
    expect(refused).toMatchObject({ result: 'error', writes: 0 });
    const { last_error } = await daemon.status();
    expect(last_error?.message).toContain('the account has no access to edges');
    expect(last_error?.message).toContain('edges/db.yaml');
    expect(writesAt(server)).toBe(1);
  });

  it('against `edgesync server --no-edge-access` itself: apply, then an empty plan', async () => {
    const key = generateApiKey();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const stdout = new PassThrough().resume();
    const controller = new AbortController();
    const done = serverCommand({
      argv: ['--port', '0', '--api-key', key, '--no-edge-access'],
      stdout,
      stderr,
      env: { EDGESYNC_LOG_LEVEL: 'silent' },
      cwd: tmp.dir,
      signal: controller.signal,
    });
    try {
      const url = await waitFor(
        'the server to listen',
        () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1],
      );
      await write({ 'web.yaml': [ENDPOINT], 'bots.yaml': [BOT] });
      const env = apiEnv(url, key);
      const apply = await runCli(['apply', '--yes', dir], { env });
      expect(apply.stderr).not.toContain('ERR_SVC_7302');
      expect(apply.code).toBe(0);
      expect((await runCli(['plan', '--detailed-exitcode', dir], { env })).code).toBe(0);
      const client = apiClient(url, key);
      try {
        const live = await observe(client);
        expect(live.edgesUnavailable).toBe(true);
        expect(live.cloudEndpoints.map((e) => e.url)).toEqual(['https://web.example.com']);
      } finally {
        await client.close();
      }
    } finally {
      controller.abort();
      expect(await done).toBe(0);
    }
  });
});
