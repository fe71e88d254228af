/**
 * Crashes: the `edgesync apply` process is killed with SIGKILL at 20 random points (after a
 * random number of its operations, others in flight) against a persistent child server. Each
 * rerun converges, and no edge, route or bot user is ever duplicated. Runs the compiled CLI
 * (`npm test` builds first; a stale build of this area is rebuilt here).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../../src/server/index.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { apiEnv, duplicates, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin', 'edgesync.js');

function manifests(version: number): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [];
  // A sliding window of edge names: each version creates some, deletes some, updates the rest.
  for (let j = version % 4; j < (version % 4) + 8; j++) {
    docs.push({
      kind: 'HTTPSEdge',
      name: `e${j}`,
      description: `v${version}`,
      hostports: [`e${(j + version) % 12}.example.com:443`],
      routes: [
        { match_type: 'path_prefix', match: '/', backend: { backend_id: `bkdhr_v${version % 3}` } },
        { match_type: 'exact_path', match: `/r${version % 2}`, compression: {} },
      ],
    });
  }
  docs.push({
    kind: 'TLSEdge',
    name: `t${version % 2}`,
    hostports: [`10.0.0.9:${9000 + version}`],
  });
  docs.push({ kind: 'BotUser', name: `bot${version % 3}` });
  return docs;
}

async function startChildServer(
  dataDir: string,
  apiKey: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [BIN, 'server', '--port', '0', '--api-key', apiKey, '--data', dataDir, '--latency', '2-6'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 15_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', () => reject(new Error(`server exited: ${text}`)));
  });
  return { child, url };
}

/** Runs `edgesync apply` and SIGKILLs it once it has logged `killAfter` operations. */
function applyAndKill(
  dir: string,
  env: Record<string, string>,
  killAfter: number,
): Promise<{ killed: boolean; operations: number }> {
  const child = spawn(process.execPath, [BIN, 'apply', dir, '--yes'], {
    env: { ...env, PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let operations = 0;
  let killed = false;
  let buffered = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (line.includes('"msg":"operation"')) operations += 1;
      if (!killed && operations >= killAfter) {
        killed = child.kill('SIGKILL');
      }
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('apply child did not finish in time'));
    }, 30_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve({ killed, operations });
    });
  });
}

describe('apply killed with SIGKILL', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let server: { child: ChildProcess; url: string };
  const apiKey = generateApiKey();

  beforeAll(async () => {
    assertFreshBuild();
    tmp = await tempDir();
    server = await startChildServer(path.join(tmp.dir, 'data'), apiKey);
  }, 120_000);
  afterAll(async () => {
    if (server?.child.exitCode === null) {
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
    await tmp?.cleanup();
  });

  it('converges on every rerun, with no duplicates, at 20 random kill points', async () => {
    const env = apiEnv(server.url, apiKey);
    const dir = path.join(tmp.dir, 'manifests');
    let kills = 0;
    for (let i = 0; i < 20; i++) {
      await writeManifests(dir, manifests(i));
      // Point: after 0..30 logged operations (a cold version has about 27), others in flight.
      const killAfter = Math.floor(Math.random() * 31);
      const crashed = await applyAndKill(dir, env, killAfter);
      if (crashed.killed) kills += 1;
      expect(duplicates(await snapshotOf(server.url, apiKey))).toEqual([]);

      const rerun = await runCli(['apply', dir, '--yes'], { env });
      expect(rerun.stderr).toMatch(/converged/);
      expect(rerun.code).toBe(0);
      expect(duplicates(await snapshotOf(server.url, apiKey))).toEqual([]);
    }
    // Most points fall inside the apply (the rest are after it finished).
    expect(kills).toBeGreaterThan(10);
  }, 120_000);
});
