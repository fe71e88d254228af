/**
 * git-sync style publishing against the real file system and real chokidar: each revision is a
 * fresh directory, published by an atomic symlink swap (`ln -s new tmp-link && mv -T tmp-link
 * current`) and followed by deletion of the old one, as git-sync v4 does. The fake reconcile step
 * reads the whole set like the loader would, then calls `assertCurrent()` before it would write:
 * a set that passes must be complete, and no call may ever see a missing directory.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import type { DaemonStatus, ReconcileReport } from '../../../src/daemon/types.js';
import type { ReconcileInput } from '../../../src/engine/index.js';
import { MISSING_DIR_MESSAGE } from '../../../src/manifest/resolve.js';
import { CONVERGED, makeTempDir, recorder, removeDir, sleep, waitFor } from './helpers.js';

const FILES_PER_REVISION = 3;

let tmp: string | undefined;
let daemon: Daemon | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await removeDir(tmp);
  tmp = undefined;
});

const revName = (n: number) => `rev-${String(n).padStart(4, '0')}`;

/** Writes revision `n` under `root/revs/`, with the manifests in `sub` (may be ''). */
async function writeRevision(root: string, n: number, sub: string): Promise<void> {
  const dir = path.join(root, 'revs', revName(n), sub);
  await fs.mkdir(dir, { recursive: true });
  for (let f = 0; f < FILES_PER_REVISION; f++) {
    await fs.writeFile(path.join(dir, `edge-${f}.yaml`), `revision: ${revName(n)}\nfile: ${f}\n`);
  }
}

/** Publishes revision `n` the way git-sync does: new link beside, renamed over the old one. */
async function swapTo(root: string, n: number): Promise<void> {
  await fs.symlink(path.join('revs', revName(n)), path.join(root, 'tmp-link'));
  await fs.rename(path.join(root, 'tmp-link'), path.join(root, 'current'));
}

interface Findings {
  violations: string[];
  complete: number;
  superseded: number;
  unreadable: number;
}

/** The fake reconcile: read everything, assert the link did not move, check the set. */
function gitSyncReconcile(root: string, sub: string, findings: Findings) {
  return async (input: ReconcileInput): Promise<ReconcileReport> => {
    const { dir, revision } = input;
    if (revision === undefined || !/^rev-\d{4}$/.test(revision)) {
      findings.violations.push(`bad revision ${String(revision)}`);
    } else if (dir !== path.join(root, 'revs', revision, sub)) {
      findings.violations.push(`dir ${dir} is not revision ${revision}'s`);
    }
    let contents: string[];
    try {
      const names = (await fs.readdir(dir)).filter((n) => n.endsWith('.yaml')).sort();
      contents = await Promise.all(names.map((n) => fs.readFile(path.join(dir, n), 'utf8')));
    } catch {
      // The old worktree was deleted after a swap: the loader fails, nothing is written.
      findings.unreadable += 1;
      contents = [];
    }
    try {
      await input.assertCurrent();
    } catch (err) {
      findings.superseded += 1;
      return { ...CONVERGED, result: 'error', error: (err as Error).message };
    }
    // assertCurrent passed: this set is what a real cycle would apply. It must be whole.
    const expected = Array.from(
      { length: FILES_PER_REVISION },
      (_, f) => `revision: ${revision}\nfile: ${f}\n`,
    );
    if (JSON.stringify(contents) !== JSON.stringify(expected)) {
      findings.violations.push(
        `partial or foreign set accepted for ${revision}: ${contents.length} files`,
      );
    } else {
      findings.complete += 1;
    }
    return CONVERGED;
  };
}

async function getStatus(base: string): Promise<DaemonStatus> {
  return (await (await fetch(`${base}/status`)).json()) as DaemonStatus;
}

describe('git-sync symlink swaps (real file system, real chokidar)', () => {
  it.each([
    ['the link itself', '', 200],
    ['a folder inside the link', 'edges', 40],
  ])(
    'follows %s (sub-path %j) across %i swaps, a missing link included, never accepting a partial set',
    async (_name, sub, swaps) => {
      tmp = await makeTempDir('daemon-gitsync');
      const root = tmp;
      await writeRevision(root, 0, sub);
      await fs.symlink(path.join('revs', revName(0)), path.join(root, 'current'));
      const findings: Findings = { violations: [], complete: 0, superseded: 0, unreadable: 0 };
      const { calls, reconcile } = recorder(gitSyncReconcile(root, sub, findings));
      daemon = createDaemon({
        dir: path.join(root, 'current', sub),
        reconcile,
        listen: { host: '127.0.0.1', port: 0 },
        debounceMs: 10,
        backoff: { baseMs: 20, maxMs: 100 },
        metrics: createDaemonMetrics({ defaultMetrics: false }),
      });
      await daemon.start();
      const base = `http://127.0.0.1:${daemon.address?.port}`;
      await waitFor('the startup cycle', () => calls.length === 1);
      expect(calls[0]?.revision).toBe(revName(0));

      const missingAt = Math.floor(swaps / 2);
      for (let n = 1; n <= swaps; n++) {
        await writeRevision(root, n, sub);
        await swapTo(root, n);
        // git-sync deletes the previous worktree right after publishing the new one.
        await fs.rm(path.join(root, 'revs', revName(n - 1)), { recursive: true, force: true });
        if (n % 5 === 0) await sleep(2);

        if (n === missingAt) {
          // The link vanishes (a broken volume, a hand-made mistake): desired state unknown.
          await fs.unlink(path.join(root, 'current'));
          await waitFor(
            'the missing link in /status',
            async () =>
              (await getStatus(base)).last_error?.message.includes(MISSING_DIR_MESSAGE) === true,
          );
          const callsWhileMissing = calls.length;
          const failures = (await getStatus(base)).consecutive_failures;
          await fetch(`${base}/-/reconcile`, { method: 'POST' });
          await waitFor(
            'another failed cycle',
            async () => (await getStatus(base)).consecutive_failures > failures,
          );
          expect(calls.length).toBe(callsWhileMissing);
          const status = await getStatus(base);
          expect(status.ready).toBe(true); // readiness is sticky once reached
          expect(status.last_reconcile).toMatchObject({ result: 'error', writes: 0 });
          // Back, at the same revision: the anchor watcher sees the link appear.
          await fs.symlink(path.join('revs', revName(n)), path.join(root, 'current'));
          await waitFor('a cycle after the link returns', () => calls.length > callsWhileMissing);
        }
      }

      const last = revName(swaps);
      await waitFor(
        `a converged cycle at ${last}`,
        async () => {
          const s = await getStatus(base);
          return s.revision === last && s.last_reconcile?.result === 'converged' && !s.in_flight;
        },
        10_000,
      );
      expect(findings.violations, JSON.stringify(findings)).toEqual([]);
      expect(calls.at(-1)?.revision).toBe(last);
      expect(findings.complete).toBeGreaterThanOrEqual(2);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/edgesync_reconcile_total\{result="error"\} [1-9]/);
      expect(metrics).toMatch(/edgesync_reconcile_total\{result="converged"\} [1-9]/);
    },
  );

  it('reports basename(readlink) as the revision and reads through a relative or absolute link', async () => {
    tmp = await makeTempDir('daemon-gitsync');
    const root = tmp;
    await writeRevision(root, 7, '');
    await fs.symlink(path.join(root, 'revs', revName(7)), path.join(root, 'current'));
    const { calls, reconcile } = recorder();
    daemon = createDaemon({
      dir: path.join(root, 'current'),
      reconcile,
      listen: false,
      debounceMs: 10,
      metrics: createDaemonMetrics({ defaultMetrics: false }),
    });
    await daemon.start();
    await waitFor('the startup cycle', () => calls.length === 1);
    expect(calls[0]).toMatchObject({
      revision: revName(7),
      dir: path.join(root, 'revs', revName(7)),
    });
    await writeRevision(root, 8, '');
    await swapTo(root, 8);
    await waitFor('a link-triggered cycle', () => calls.some((c) => c.reason === 'link'));
    expect(calls.at(-1)).toMatchObject({
      revision: revName(8),
      dir: path.join(root, 'revs', revName(8)),
    });
    expect(daemon.status().revision).toBe(revName(8));
  });
});
