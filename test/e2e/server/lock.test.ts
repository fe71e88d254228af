/**
 * One process per data directory: a second server (a real process, or one in-process, or a
 * second `edgesync run` daemon on the same state directory) refuses to start, naming the
 * holder's pid and the directory; the lock of a dead process (kill -9, a stale file), or one
 * whose pid another process now has (pid 1 of a restarted container), is taken over, by exactly
 * one of several starters racing for it. Runs the compiled CLI (`npm run
 * build`; `npm test` builds first).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  lutimes,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
} from 'node:fs/promises';
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

/** A live process that is not edgesync: it holds a pid a stale lock names (killed after each test). */
const unrelated: ChildProcess[] = [];
async function unrelatedProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], {
    stdio: 'ignore',
  });
  unrelated.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child.pid as number;
}
afterEach(() => {
  for (const child of unrelated.splice(0)) child.kill('SIGKILL');
});

/** Sets a lock file's own modification time (the link, not a target). */
async function madeAt(name: string, when: Date): Promise<void> {
  await lutimes(join(dir, name), when, when);
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

  it('a lock whose pid now belongs to an unrelated process is stale, in either lock format', async () => {
    // An older edgesync's lock (no start recorded), made an hour before the process of its pid
    // started: that process cannot be its holder.
    const pid = await unrelatedProcess();
    await symlink(`${pid}@${hostname()}#0123456789ab`, join(dir, 'lock.1'));
    await madeAt('lock.1', new Date(Date.now() - 3_600_000));
    const first = await lockDirectory(dir);
    expect(await locks()).toEqual(['lock.2']);
    // This version's lock records its holder's start: the same pid with another start is stale.
    const mine = await readlink(join(dir, 'lock.2'));
    const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    expect(mine).toMatch(new RegExp(`^${process.pid}@[^#]*\\+${boot}:\\d+#[0-9a-f]+$`));
    await first.release();
    await symlink(`${pid}@${hostname()}+${boot}:1#0123456789ab`, join(dir, 'lock.3'));
    const second = await lockDirectory(dir);
    expect(await locks()).toEqual(['lock.4']);
    await second.release();
  });

  it('pid 1 of a restarted container does not hold a lock its previous incarnation made', async () => {
    // Pid 1 is always alive; the lock was made before it started (a previous container), or
    // names another start of it.
    await symlink(`1@${hostname()}#0123456789ab`, join(dir, 'lock.1'));
    await madeAt('lock.1', new Date('2000-01-01T00:00:00Z'));
    const first = await lockDirectory(dir);
    await first.release();
    await symlink(`1@${hostname()}+not-this-boot:24#0123456789ab`, join(dir, 'lock.5'));
    const second = await lockDirectory(dir);
    expect(await locks()).toEqual(['lock.6']);
    await second.release();
  });

  it('an older lock whose process started before it was made is still held', async () => {
    const pid = await unrelatedProcess();
    await symlink(`${pid}@${hostname()}#0123456789ab`, join(dir, 'lock.1'));
    await expect(lockDirectory(dir)).rejects.toThrow(`${dir} is in use by process ${pid}`);
    expect(await locks()).toEqual(['lock.1']);
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
