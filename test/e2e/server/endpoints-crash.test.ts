/**
 * Cloud endpoints survive `kill -9` of the real `edgesync server` process like edges do: every
 * acknowledged create is there after a restart on the same data directory. The command's
 * `--agent-endpoint` flag seeds its read-only agent endpoint again at each start, exactly once,
 * and the API refuses to change it. Runs the compiled CLI (`npm run build` first).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import {
  type ServerChild,
  spawnCli,
  startServerChild,
  stopChildren,
} from '../../../bench/harness.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { clientFor } from '../../integration/server/client.js';

const KEY = 'endpoints-crash-key';
const AGENT = 'https://agent.example.com';
const POLICY = '{"on_http_request":[{"actions":[{"type":"deny"}]}]}';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-ep-crash-'));
});
afterEach(async () => {
  await stopChildren();
  await rm(dir, { recursive: true, force: true });
});

function spawnServer(): Promise<ServerChild> {
  assertFreshBuild();
  return startServerChild({ apiKeys: [KEY], dataDir: dir, extraArgs: ['--agent-endpoint', AGENT] });
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
  const server = spawnCli(['server', '--port', '0', '--agent-endpoint', 'ftp://x.example.com']);
  const { code } = await server.exited;
  const err = server.stderr();
  expect(code).toBe(1);
  expect(err).toContain('agent endpoint "ftp://x.example.com": url: scheme "ftp" is not one of');
});
