/**
 * Cloud endpoints survive `kill -9` of the real `edgesync server` process like edges do: every
 * acknowledged create is there after a restart on the same data directory. The command's
 * `--agent-endpoint` flag seeds its read-only agent endpoint again at each start, exactly once,
 * and the API refuses to change it. Runs the compiled CLI (`npm run build` first).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';
import { clientFor } from './client.js';

const BIN = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bin/edgesync.js');
const KEY = 'endpoints-crash-key';
const AGENT = 'https://agent.example.com';
const POLICY = '{"on_http_request":[{"actions":[{"type":"deny"}]}]}';

let dir: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-ep-crash-'));
});
afterEach(async () => {
  for (const c of children.splice(0))
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

async function spawnServer(): Promise<{ child: ChildProcess; url: string }> {
  assertFreshBuild();
  const args = [
    BIN,
    'server',
    '--port',
    '0',
    '--data',
    dir,
    '--api-key',
    KEY,
    '--agent-endpoint',
    AGENT,
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, EDGESYNC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const url = await vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`server exited: ${err}`);
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m?.[1] === undefined) throw new Error(`not listening yet: ${err}`);
      return m[1];
    },
    { timeout: 15_000, interval: 20 },
  );
  return { child, url };
}

it('acknowledged endpoint creates survive kill -9; the agent endpoint is seeded once per start', async () => {
  const first = await spawnServer();
  const call1 = clientFor({ url: first.url }, KEY);
  const acked = new Map<string, string>();
  let killed = false;
  const worker = async (w: number) => {
    for (let i = 0; !killed; i++) {
      const url = `https://w${w}-${i}.example.com`;
      try {
        const r = await call1('POST', '/endpoints', { url, traffic_policy: POLICY });
        if (r.status === 201) acked.set(r.json.id, url);
        else if (!killed) throw new Error(`unexpected ${r.status}: ${r.text}`);
      } catch (err) {
        if (!killed) throw err;
        return;
      }
    }
  };
  const workers = Array.from({ length: 8 }, (_, w) => worker(w));
  await vi.waitFor(() => expect(acked.size).toBeGreaterThanOrEqual(150), {
    timeout: 20_000,
    interval: 10,
  });
  killed = true;
  first.child.kill('SIGKILL');
  await Promise.all(workers);

  const second = await spawnServer();
  const call2 = clientFor({ url: second.url }, KEY);
  for (const [id, url] of acked) {
    const r = await call2('GET', `/endpoints/${id}`);
    expect(r.status, id).toBe(200);
    expect(r.json.url).toBe(url);
  }
  const agents = await call2(
    'GET',
    `/endpoints?filter=${encodeURIComponent('obj.type == "agent"')}`,
  );
  expect(agents.json.endpoints.map((e: { url: string }) => e.url)).toEqual([AGENT]);
  const agentId = agents.json.endpoints[0].id as string;
  expect((await call2('DELETE', `/endpoints/${agentId}`)).status).toBe(400);
  expect((await call2('GET', `/endpoints/${agentId}`)).status).toBe(200);
  second.child.kill('SIGTERM');
  await new Promise((resolve) => second.child.once('exit', resolve));
  expect(second.child.exitCode).toBe(0);
});

it('refuses to start with an agent endpoint URL the API would refuse', async () => {
  assertFreshBuild();
  const child = spawn(
    process.execPath,
    [BIN, 'server', '--port', '0', '--agent-endpoint', 'ftp://x.example.com'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.push(child);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code).toBe(1);
  expect(err).toContain('agent endpoint "ftp://x.example.com": url: scheme "ftp" is not one of');
});
