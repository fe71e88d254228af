/**
 * `edgesync run` as a child process, its manifest directory a git-sync style symlink: 200
 * revisions published by atomic swaps (`ln -s rev-N tmp && mv tmp link`), the old worktree
 * deleted right after each swap, and every tenth swap leaving the link missing for a moment.
 * Every revision holds the same six edges (their descriptions change), fewer than
 * `--max-deletes`, so only the daemon's own care stands between a half-deleted worktree and a
 * DELETE. The server (behind a recording proxy) must never see one, and the daemon must end on
 * the last revision, converged. With clean swaps only, a cycle cut short by a swap is
 * `superseded`: no error metric and no warning.
 */
import { mkdir, rename, rm, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, it, type TestContext } from 'vitest';
import {
  type RecordingProxy,
  startDaemonChild,
  startRecordingProxy,
  stopChildren,
  waitFor,
} from '../../../bench/harness.js';
import type { ApiClient } from '../../../src/api/index.js';
import { startTestServer } from '../../helpers/server.js';
import {
  apiClient,
  assertBuilt,
  httpsEdge,
  liveState,
  ownedEdges,
  sleep,
  tempDir,
  tlsEdge,
  writeYaml,
} from '../../integration/run/helpers.js';

const SWAPS = 200;
const MISSING_EVERY = 10;

interface Scene {
  readonly server: Awaited<ReturnType<typeof startTestServer>>;
  readonly proxy: RecordingProxy;
  readonly client: ApiClient;
  readonly tmp: Awaited<ReturnType<typeof tempDir>>;
}

beforeAll(() => assertBuilt());
afterAll(() => stopChildren());

/**
 * A server, its recording proxy and a directory of the scenario's own: the two scenarios run
 * side by side (they wait on the daemon, not the CPU), so nothing here is shared.
 */
async function scene(onTestFinished: TestContext['onTestFinished']): Promise<Scene> {
  const server = await startTestServer();
  const proxy = await startRecordingProxy(server.url);
  const client = apiClient(server.url, server.apiKey);
  const tmp = await tempDir();
  onTestFinished(async () => {
    await client.close();
    await proxy.close();
    await server.close();
    await tmp.cleanup();
  });
  return { server, proxy, client, tmp };
}

/** A small deterministic generator (the pacing must not vary from run to run). */
function lcg(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

const revName = (n: number) => `rev-${String(n).padStart(4, '0')}`;
const EXPECTED = ['https:api', 'https:web', 'tls:cache', 'tls:db', 'tls:mq', 'tls:search'];

/** Revision `n`: six edges in three files (one in a sub-directory), descriptions tagged `n`. */
async function writeRevision(root: string, n: number): Promise<void> {
  const dir = path.join(root, 'revs', revName(n));
  const tag = { description: `revision ${n}` };
  await writeYaml(path.join(dir, 'data.yaml'), [tlsEdge('db', tag), tlsEdge('cache')]);
  await writeYaml(path.join(dir, 'tcp', 'more.yaml'), [tlsEdge('mq'), tlsEdge('search', tag)]);
  await writeYaml(path.join(dir, 'web.yaml'), [httpsEdge('web', tag), httpsEdge('api')]);
}

/**
 * Publishes SWAPS revisions under a running daemon, every `missingEvery`-th one a botched publish
 * that leaves the link missing for a moment (0: none), then waits for the daemon to settle on
 * the last one and checks that nothing was ever deleted.
 */
async function swapScenario(missingEvery: number, { expect, onTestFinished }: TestContext) {
  const { server, proxy, client, tmp } = await scene(onTestFinished);
  const root = tmp.dir;
  const link = path.join(root, 'current');
  await mkdir(path.join(root, 'revs'));
  await writeRevision(root, 0);
  await symlink(path.join('revs', revName(0)), link);

  const daemon = await startDaemonChild({
    args: [link, '--interval', '1s', '--debounce', '50ms'],
    cwd: root,
    env: {
      EDGESYNC_API_URL: proxy.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
    },
  });
  // The test's hooks run last-registered first: the daemon stops before its server closes.
  onTestFinished(() => daemon.stop('SIGKILL').then(() => undefined));
  await waitFor('the first revision applied', async () => {
    const s = await daemon.status();
    return s.last_reconcile?.result === 'changed' && s.revision === revName(0);
  });
  expect(ownedEdges(await liveState(client))).toEqual(EXPECTED);

  const random = lcg(42);
  let missingWindows = 0;
  for (let n = 1; n <= SWAPS; n++) {
    await writeRevision(root, n);
    const old = path.join(root, 'revs', revName(n - 1));
    if (missingEvery > 0 && n % missingEvery === 0) {
      // A botched publish: the link is gone for a moment, the old worktree already deleted.
      await unlink(link);
      await rm(old, { recursive: true, force: true });
      await sleep(20 + Math.floor(random() * 100));
      await symlink(path.join('revs', revName(n)), link);
      missingWindows += 1;
    } else {
      // git-sync: new link beside the old one, renamed over it, then the old worktree deleted.
      const tmpLink = path.join(root, `.tmp-link-${n}`);
      await symlink(path.join('revs', revName(n)), tmpLink);
      await rename(tmpLink, link);
      await rm(old, { recursive: true, force: true });
    }
    // Between a few ms and a bit over the debounce: some swaps land mid-cycle, some between.
    await sleep(Math.floor(random() * 80));
  }

  const last = revName(SWAPS);
  const final = await waitFor(
    'the daemon to settle on the last revision',
    async () => {
      const s = await daemon.status();
      const ok =
        s.revision === last &&
        s.last_reconcile?.revision === last &&
        (s.last_reconcile.result === 'converged' || s.last_reconcile.result === 'changed');
      return ok ? s : undefined;
    },
    15_000,
  );
  expect(final.consecutive_failures).toBe(0);

  const deletes = proxy.seen.filter((r) => r.method === 'DELETE');
  expect(deletes).toEqual([]);
  const live = await liveState(client);
  expect(ownedEdges(live)).toEqual(EXPECTED);
  const tagged = [...live.tlsEdges, ...live.httpsEdges].filter((e) =>
    (e.description ?? '').startsWith('revision '),
  );
  expect(tagged.map((e) => e.description)).toEqual(Array(3).fill(`revision ${SWAPS}`));
  const cycles = daemon
    .logLines()
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('reconcile '));
  const results = cycles.map((l) => String(l.result));
  expect(results.filter((r) => r === 'changed').length).toBeGreaterThan(10);
  // A worktree deleted under the loader is a superseded cycle, never "invalid manifests":
  // every revision here is valid, so no cycle may report manifest errors.
  expect(results).not.toContain('invalid');
  return { daemon, cycles, results, missingWindows };
}

describe.concurrent('edgesync run (child process) under git-sync symlink swaps', () => {
  it(`never deletes anything across ${SWAPS} swaps, some leaving the link missing`, async (ctx) => {
    const { expect } = ctx;
    const { results, missingWindows } = await swapScenario(MISSING_EVERY, ctx);
    expect(missingWindows).toBe(SWAPS / MISSING_EVERY);
    // A missing link is "desired state unknown": an error, rightly.
    expect(results).toContain('error');
  }, 60_000);

  it(`${SWAPS} clean swaps are superseded cycles: no error metric, no warning`, async (ctx) => {
    const { expect } = ctx;
    const { daemon, cycles, results } = await swapScenario(0, ctx);
    // Only success and superseded: a swap is not a failure.
    const failures = cycles.filter((l) => l.result === 'error' || l.result === 'invalid');
    expect(new Set(results), JSON.stringify(failures.map((l) => l.error))).toEqual(
      new Set(results.filter((r) => ['converged', 'changed', 'superseded'].includes(r))),
    );
    expect(cycles.filter((l) => l.result === 'superseded').every((l) => l.level === 30)).toBe(true);
    // No warning or error at all, from any module, over the whole run.
    expect(daemon.logLines().filter((l) => Number(l.level) >= 40)).toEqual([]);
    const metrics = await daemon.metrics();
    expect(metrics).toMatch(/^edgesync_reconcile_total\{result="error"\} 0$/m);
    expect(metrics).toMatch(/^edgesync_reconcile_total\{result="invalid"\} 0$/m);
    const superseded = Number(
      /^edgesync_reconcile_total\{result="superseded"\} (\d+)$/m.exec(metrics)?.[1],
    );
    expect(superseded).toBe(results.filter((r) => r === 'superseded').length);
    // The swaps really raced the daemon.
    expect(superseded).toBeGreaterThan(0);
  }, 60_000);
});
