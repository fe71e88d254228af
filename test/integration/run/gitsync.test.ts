/**
 * `edgesync run` as a child process, its manifest directory a git-sync style symlink: 200
 * revisions published by atomic swaps (`ln -s rev-N tmp && mv tmp link`), the old worktree
 * deleted right after each swap, and every tenth swap leaving the link missing for a moment.
 * Every revision holds the same six edges (their descriptions change), fewer than
 * `--max-deletes`, so only the daemon's own care stands between a half-deleted worktree and a
 * DELETE. The server (behind a recording proxy) must never see one, and the daemon must end on
 * the last revision, converged.
 */
import { mkdir, rename, rm, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { startTestServer } from '../../helpers/server.js';
import {
  apiClient,
  assertBuilt,
  httpsEdge,
  killChildren,
  liveState,
  ownedEdges,
  type RecordingProxy,
  sleep,
  startDaemon,
  startRecordingProxy,
  tempDir,
  tlsEdge,
  waitFor,
  writeYaml,
} from './helpers.js';

const SWAPS = 200;
const MISSING_EVERY = 10;

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
let proxy: RecordingProxy;
let client: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(() => assertBuilt());

beforeEach(async () => {
  server = await startTestServer();
  proxy = await startRecordingProxy(server.url);
  client = apiClient(server.url, server.apiKey);
  tmp = await tempDir();
});

afterEach(async () => {
  await killChildren();
  await client.close();
  await proxy.close();
  await server.close();
  await tmp.cleanup();
});

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

describe('edgesync run (child process) under git-sync symlink swaps', () => {
  it(`never deletes anything across ${SWAPS} swaps, some leaving the link missing`, async () => {
    const root = tmp.dir;
    const link = path.join(root, 'current');
    await mkdir(path.join(root, 'revs'));
    await writeRevision(root, 0);
    await symlink(path.join('revs', revName(0)), link);

    const daemon = await startDaemon({
      args: [link, '--interval', '1s', '--debounce', '50ms'],
      cwd: root,
      env: { EDGESYNC_API_URL: proxy.url, EDGESYNC_API_KEY: server.apiKey },
    });
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
      if (n % MISSING_EVERY === 0) {
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
    // The swaps really raced the daemon: cycles were superseded or found the link missing.
    const results = daemon
      .logLines()
      .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('reconcile '))
      .map((l) => String(l.result));
    expect(missingWindows).toBe(SWAPS / MISSING_EVERY);
    expect(results.filter((r) => r === 'changed').length).toBeGreaterThan(10);
    expect(results).toContain('error');
    // A worktree deleted under the loader is a superseded cycle, never "invalid manifests":
    // every revision here is valid, so no cycle may report manifest errors.
    expect(results).not.toContain('invalid');
  }, 60_000);
});
