/**
 * One process per data directory: a second server (a real process, or one in-process, or a
 * second `edgesync run` daemon on the same state directory) refuses to start, naming the
 * holder's pid and the directory; the lock of a dead process (kill -9, a stale file) is taken
 * over, by exactly one of several starters racing for it. Runs the compiled CLI (`npm run
 * build`; `npm test` builds first).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnCli, stopChildren, waitForLine } from '../../../bench/harness.js';
import { lockDirectory } from '../../../src/server/lock.js';
import { assertFreshBuild } from '../../helpers/built.js';
import { startTestServer } from '../../helpers/server.js';
import { runCli } from '../../integration/apply/helpers.js';
import { clientFor } from '../../integration/server/client.js';

const KEY = 'lock-test-key';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-lock-'));
});
afterEach(async () => {
  await stopChildren();
  await rm(dir, { recursive: true, force: true });
});

interface Started {
  readonly child: ChildProcess;
  /** Resolves with the URL once listening, or with the exit code and stderr if it exits. */
  readonly outcome: Promise<{ url: string } | { code: number | null; stderr: string }>;
}

function start(args: string[], ready: RegExp): Started {
  assertFreshBuild();
  const cli = spawnCli(args, {
    env: { EDGESYNC_LOG_LEVEL: 'warn', EDGESYNC_RATE_LIMIT: 'none' },
  });
  const outcome = waitForLine(cli, ready, 'the process to be ready', 30_000).then(
    (url) => ({ url }),
    async () => ({ code: (await cli.exited).code, stderr: cli.stderr() }),
  );
  return { child: cli.child, outcome };
}

const LISTENING = /listening on (http:\/\/\S+)/;
const server = () => start(['server', '--port', '0', '--data', dir, '--api-key', KEY], LISTENING);

/** A pid that belonged to a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

async function locks(): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith('lock')).sort();
}

describe('one process per data directory', () => {
  it('a second server process refuses to start, naming the holder pid and the directory', async () => {
    const first = server();
    const up = await first.outcome;
    expect(up).toHaveProperty('url');
    const second = await server().outcome;
    expect(second).not.toHaveProperty('url');
    const { code, stderr } = second as { code: number; stderr: string };
    expect(code).not.toBe(0);
    expect(stderr).toContain(`${dir} is in use by process ${first.child.pid}`);
    // The holder is unaffected.
    const call = clientFor(up as { url: string }, KEY);
    expect((await call('POST', '/bot_users', { name: 'still-mine' })).status).toBe(201);
  });

  it('a server killed with -9 leaves a lock that the next start takes over', async () => {
    const first = server();
    expect(await first.outcome).toHaveProperty('url');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    // The next start needs no process of its own: only the killed holder had to be one.
    const second = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
    try {
      expect(await locks()).toEqual(['lock.2']);
      expect(await readlink(join(dir, 'lock.2'))).toMatch(new RegExp(`^${process.pid}@`));
    } finally {
      await second.close();
    }
  });

  it('a stale lock (dead pid) is taken over by exactly one of several racing starters', async () => {
    await symlink(`${await deadPid()}@${hostname()}#0123456789ab`, join(dir, 'lock.1'));
    const racers = Array.from({ length: 4 }, () => server());
    const outcomes = await Promise.all(racers.map((r) => r.outcome));
    const winners = outcomes.filter((o) => 'url' in o);
    expect(winners).toHaveLength(1);
    const winner = racers[outcomes.findIndex((o) => 'url' in o)] as Started;
    for (const o of outcomes.filter((x) => !('url' in x))) {
      expect(o).toMatchObject({ stderr: expect.stringContaining(`process ${winner.child.pid}`) });
    }
    expect(await locks()).toEqual(['lock.2']);
  });

  it('in one process too: a second server on the directory is refused; a lock naming this pid but not held here is a previous incarnation', async () => {
    await symlink(`${process.pid}@${hostname()}#0123456789ab`, join(dir, 'lock.7'));
    const first = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
    try {
      expect(await locks()).toEqual(['lock.8']);
      await expect(startTestServer({ dataDir: dir, apiKeys: [KEY] })).rejects.toThrow(
        `${dir} is in use by process ${process.pid}`,
      );
    } finally {
      await first.close();
    }
    // Closed: the lock is gone and the next start takes it at once.
    expect(await locks()).toEqual([]);
    const again = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
    await again.close();
  });

  it('concurrent claims in one process: exactly one wins', async () => {
    await symlink(`${await deadPid()}@${hostname()}#0123456789ab`, join(dir, 'lock.3'));
    const claims = await Promise.allSettled(Array.from({ length: 8 }, () => lockDirectory(dir)));
    const won = claims.filter((c) => c.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const c of claims) {
      if (c.status === 'rejected') expect(String(c.reason)).toContain('is in use by process');
    }
    await (won[0] as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
    expect(await locks()).toEqual([]);
  });

  it('two `edgesync run` daemons on one state directory: the second exits non-zero, naming the first', async () => {
    const edges = join(dir, 'edges');
    const state = join(dir, 'state');
    await mkdir(edges);
    const daemon = (port: string) =>
      start(
        [
          'run',
          edges,
          '--state-dir',
          state,
          '--embedded-port',
          '0',
          '--listen',
          `127.0.0.1:${port}`,
        ],
        /status on (http:\/\/\S+)\/status/,
      );
    const first = daemon('0');
    expect(await first.outcome).toHaveProperty('url');
    // The second, in-process: the holder is another process all the same.
    const second = await runCli(
      ['run', edges, '--state-dir', state, '--embedded-port', '0', '--listen', '127.0.0.1:0'],
      { cwd: dir, env: { EDGESYNC_LOG_LEVEL: 'warn', EDGESYNC_RATE_LIMIT: 'none' } },
    );
    expect(second.code).not.toBe(0);
    expect(second.stderr).not.toContain('status on');
    expect(second.stderr).toContain(
      `${join(state, 'server')} is in use by process ${first.child.pid}`,
    );
  });
});
