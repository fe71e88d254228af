/**
 * Crash safety of the real `edgesync server` process: a burst of concurrent writes, `kill -9`
 * in the middle of it, a restart on the same data directory, and every write that was
 * acknowledged (201 received) must be there, with the store fully readable. Also checks the
 * command's clean SIGTERM shutdown (exit 0). Runs the compiled CLI (`npm run build`; `npm test`
 * builds first).
 */

import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  type ServerChild,
  startServerChild,
  stopChildren,
  waitFor,
} from '../../../bench/harness.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { type Call, clientFor } from '../../integration/server/client.js';

const KEY = 'crash-test-key';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-crash-'));
});
afterEach(async () => {
  await stopChildren();
  await rm(dir, { recursive: true, force: true });
});

function spawnServer(): Promise<ServerChild> {
  assertFreshBuild();
  return startServerChild({ apiKeys: [KEY], dataDir: dir });
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

it('every acknowledged write survives kill -9 mid-burst', async () => {
  const first = await spawnServer();
  const call1 = clientFor({ url: first.url }, KEY);
  const acked = new Map<string, { path: string; name: string }>();
  let stop = false;
  let killed = false;
  const worker = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const name = `w${w}-${i}`;
      const [path, body] =
        i % 2 === 0
          ? ['/bot_users', { name }]
          : ['/edges/tls', { description: name, hostports: [`${name}.example.com:443`] }];
      try {
        const r = await call1('POST', path, body);
        if (r.status === 201) acked.set(r.json.id, { path, name });
        else if (!killed) throw new Error(`unexpected ${r.status}: ${r.text}`);
      } catch (err) {
        if (!killed) throw err;
        return;
      }
    }
  };
  const workers = Array.from({ length: 16 }, (_, w) => worker(w));
  // Kill once a good number of writes are acknowledged and more are in flight; a slow machine
  // that acknowledges fewer within 20 s is killed then all the same.
  await waitFor('400 acknowledged writes', () => acked.size >= 400, 20_000).catch(() => undefined);
  killed = true;
  first.child.kill('SIGKILL');
  await exited(first.child);
  stop = true;
  await Promise.all(workers);
  expect(acked.size).toBeGreaterThanOrEqual(400);

  const second = await spawnServer();
  const call2: Call = clientFor({ url: second.url }, KEY);
  for (const [id, { path, name }] of acked) {
    const r = await call2('GET', `${path}/${id}`);
    expect(r.status, `${path}/${id}`).toBe(200);
    expect(path === '/bot_users' ? r.json.name : r.json.description).toBe(name);
  }
  // The whole store still reads, page by page, and holds at least the acknowledged writes.
  let listed = 0;
  for (const [path, key] of [
    ['/bot_users', 'bot_users'],
    ['/edges/tls', 'tls_edges'],
  ] as const) {
    let next: string | null = `${path}?limit=100`;
    while (next !== null) {
      const r = await call2('GET', next);
      expect(r.status).toBe(200);
      listed += r.json[key].length;
      next = r.json.next_page_uri === null ? null : r.json.next_page_uri.replace(second.url, '');
    }
  }
  expect(listed).toBeGreaterThanOrEqual(acked.size);
  // Writes keep working after recovery.
  expect((await call2('POST', '/bot_users', { name: 'after' })).status).toBe(201);

  second.child.kill('SIGTERM');
  expect(await exited(second.child)).toBe(0);
});
