/**
 * Saves as editors and generators make them, against the daemon in-process (real watcher, real
 * reconciler, local server over HTTP): no save is lost, and a file being written is never acted
 * on as its final content.
 *
 * - A save made in place (open with truncate, a short pause, write) is applied, and `/status`
 *   does not say `converged` before it is.
 * - A file rewritten in place by a slow writer (empty for longer than the debounce) deletes
 *   nothing: its edges keep their IDs.
 * - A file emptied on purpose is acted on once a second read, a debounce later, confirms it.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { waitFor } from '../../../bench/harness.js';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import type { DaemonStatus } from '../../../src/daemon/types.js';
import { createReconciler } from '../../../src/engine/index.js';
import { createLogger } from '../../../src/log.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { logCapture } from '../daemon/helpers.js';
import {
  liveState,
  openScene,
  type ReconcilerScene,
  sleep,
  tlsEdge,
  writeYaml,
} from './helpers.js';

const DEBOUNCE_MS = 250;

let scene: ReconcilerScene;
let daemon: Daemon | undefined;

beforeEach(async () => {
  scene = await openScene(34);
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await scene.close();
});

function yamlOf(docs: readonly Record<string, unknown>[]): string {
  return docs.map((d) => stringify(d)).join('---\n');
}

/** The daemon on the scene's directory, its log captured; resolves after its first cycle. */
async function started() {
  const capture = logCapture();
  const logger = createLogger({ level: 'debug', destination: capture.destination });
  const reconcile = createReconciler(
    reconcilerOptions({ client: scene.client, logger, maxDeletes: 50, settleMs: DEBOUNCE_MS }),
  );
  const d = createDaemon({
    dir: scene.dir,
    reconcile,
    anticipate: reconcile.anticipate,
    listen: false,
    debounceMs: DEBOUNCE_MS,
    intervalMs: 3_600_000,
    logger,
  });
  daemon = d;
  await d.start();
  await waitFor('the first cycle', () => d.status().last_reconcile !== null);
  return { d, lines: capture.lines };
}

/** The live TLS edges by name: description and ID. */
async function live(): Promise<Record<string, { description: string; id: string }>> {
  const out: Record<string, { description: string; id: string }> = {};
  for (const e of (await liveState(scene.client)).tlsEdges) {
    const name = JSON.parse(e.metadata ?? '{}')['edgesync/name'] as string;
    out[name] = { description: e.description ?? '', id: e.id };
  }
  return out;
}

const converged = (s: DaemonStatus) =>
  s.last_reconcile?.result === 'converged' || s.last_reconcile?.result === 'changed';

describe('a save in place', () => {
  it('open with truncate, a pause, write: applied every time, never reported converged before', async () => {
    const file = path.join(scene.dir, 'a.yaml');
    await writeYaml(file, [tlsEdge('a', { description: 'v0' })]);
    await writeYaml(path.join(scene.dir, 'b.yaml'), [tlsEdge('b')]);
    const { d } = await started();
    // Pauses shorter than the watcher library's 50 ms window, in which it reports one change.
    for (const [i, pause] of [10, 20, 30, 40].entries()) {
      const handle = await open(file, 'w');
      await sleep(pause);
      await handle.writeFile(yamlOf([tlsEdge('a', { description: `v${i + 1}` })]));
      await handle.close();
      const v = `v${i + 1}`;
      await waitFor(`save ${v} applied`, async () => (await live()).a?.description === v);
      // Once the daemon says it converged, it is on the saved content.
      await waitFor(`save ${v} reported`, () => converged(d.status()) && !d.status().in_flight);
      expect((await live()).a?.description).toBe(v);
    }
  });
});

describe('a slow writer', () => {
  it('a file empty for longer than the debounce deletes nothing; the finished file is applied', async () => {
    const file = path.join(scene.dir, 'a.yaml');
    const docs = [tlsEdge('a1'), tlsEdge('a2')];
    await writeYaml(file, docs);
    await writeYaml(path.join(scene.dir, 'b.yaml'), [tlsEdge('b')]);
    const { d, lines } = await started();
    const before = await live();
    const writesBefore = scene.server.requests.DELETE ?? 0;
    // `generator > a.yaml`: the shell truncates at once; the output comes only after a cycle
    // (a debounce after the truncation) has read the empty file.
    const truncatedAt = Date.now();
    const handle = await open(file, 'w');
    await waitFor('a cycle to read the empty file', () => {
      const last = d.status().last_reconcile;
      return last !== null && Date.parse(last.at) >= truncatedAt + DEBOUNCE_MS;
    });
    await handle.writeFile(yamlOf(docs.map((e) => ({ ...e, description: 'regenerated' }))));
    await handle.close();
    await waitFor('the regenerated file applied', async () => {
      const now = await live();
      return now.a1?.description === 'regenerated' && now.a2?.description === 'regenerated';
    });
    const after = await live();
    expect(after.a1?.id).toBe(before.a1?.id);
    expect(after.a2?.id).toBe(before.a2?.id);
    expect(scene.server.requests.DELETE ?? 0).toBe(writesBefore);
    expect(d.status().last_reconcile?.result).not.toBe('error');
    expect(lines.some((l) => l.msg === 'a manifest file shrank: waiting to read it again')).toBe(
      true,
    );
  });

  it('a file emptied on purpose is acted on once a second read confirms it', async () => {
    const file = path.join(scene.dir, 'a.yaml');
    await writeYaml(file, [tlsEdge('a1'), tlsEdge('a2')]);
    await writeYaml(path.join(scene.dir, 'b.yaml'), [tlsEdge('b')]);
    const { d, lines } = await started();
    const handle = await open(file, 'w');
    await handle.close();
    await waitFor('the emptied file acted on', async () => Object.keys(await live()).length === 1);
    expect(Object.keys(await live())).toEqual(['b']);
    expect(lines.some((l) => l.msg === 'a manifest file shrank: waiting to read it again')).toBe(
      true,
    );
    await waitFor('converged', () => converged(d.status()) && !d.status().in_flight);
  });
});
