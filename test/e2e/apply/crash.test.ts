/**
 * Crashes: the `edgesync apply` process is killed with SIGKILL at 20 random points (after a
 * random number of its operations, others in flight) against a persistent child server. Each
 * rerun converges, and no edge, route or bot user is ever duplicated. The points run as two
 * sequences of ten side by side, each on an account of its own (an API key is an account): the
 * test waits on its children, not on the CPU. Runs the compiled CLI
 * (`npm test` builds first; a stale build of this area is rebuilt here).
 */

import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type ServerChild, startServerChild } from '../../../bench/harness.js';
import { generateApiKey } from '../../../src/server/index.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { seededRandom } from '../../helpers/server.js';
import {
  apiEnv,
  duplicates,
  runCli,
  snapshotOf,
  tempDir,
  writeManifests,
} from '../../integration/apply/helpers.js';

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

/** Ten kill points from `seed` on one account: returns how many fell inside the apply. */
async function killPoints(url: string, apiKey: string, dir: string, seed: number) {
  const env = apiEnv(url, apiKey);
  let kills = 0;
  const random = seededRandom(seed);
  for (let i = 0; i < 10; i++) {
    await writeManifests(dir, manifests(i));
    // Point: after 0..30 logged operations (a cold version has about 27), others in flight.
    const killAfter = Math.floor(random() * 31);
    const crashed = await applyAndKill(dir, env, killAfter);
    if (crashed.killed) kills += 1;
    expect(duplicates(await snapshotOf(url, apiKey))).toEqual([]);

    const rerun = await runCli(['apply', dir, '--yes'], { env });
    expect(rerun.stderr).toMatch(/converged/);
    expect(rerun.code).toBe(0);
    expect(duplicates(await snapshotOf(url, apiKey))).toEqual([]);
  }
  return kills;
}

describe('apply killed with SIGKILL', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerChild;
  const apiKeys = [generateApiKey(), generateApiKey()];

  beforeAll(async () => {
    assertFreshBuild();
    tmp = await tempDir();
    server = await startServerChild({
      apiKeys,
      dataDir: path.join(tmp.dir, 'data'),
      extraArgs: ['--latency', '2-6'],
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await tmp?.cleanup();
  });

  it('converges on every rerun, with no duplicates, at 20 random kill points', async () => {
    // Seeded: the same kill points on every run.
    const kills = await Promise.all(
      apiKeys.map((key, i) =>
        killPoints(server.url, key, path.join(tmp.dir, `manifests-${i}`), 20261125 + i),
      ),
    );
    // Most points fall inside the apply (the rest are after it finished).
    expect(kills.reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
  }, 120_000);
});
