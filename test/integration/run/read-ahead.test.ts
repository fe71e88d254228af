/**
 * Reading ahead (`anticipate`, `createReconciler` in-process, local server over HTTP): while
 * the daemon waits out a change's debounce, the reconcile step reads the manifests and plans
 * them against the kept snapshot. The next cycle takes that read over only when it was made at
 * the same watcher generation, from the same directory and revision, against the same kept
 * snapshot; anything else and the cycle reads for itself.
 *
 * A new file written after the read ahead (without a watcher event, so without a new
 * generation) shows which read a cycle used: a cycle that took the read ahead over does not see
 * it; one that read for itself creates it.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import {
  type AnticipateInput,
  createReconciler,
  type ReconcileInput,
  type TriggerReason,
} from '../../../src/engine/index.js';
import { ManifestError } from '../../../src/errors.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import {
  cycleInput,
  liveState,
  openScene,
  ownedEdges,
  type ReconcilerScene,
  tempDir,
  tlsEdge,
  writeYaml,
} from './helpers.js';

let scene: ReconcilerScene;
let client: ApiClient;
let dir: string;

beforeEach(async () => {
  scene = await openScene(23);
  ({ client, dir } = scene);
});
afterEach(() => scene.close());

const reconciler = (incremental = true) =>
  createReconciler(reconcilerOptions({ client, maxDeletes: 50, concurrency: 4, incremental }));

const input = (reason: TriggerReason, generation?: number, revision?: string): ReconcileInput =>
  cycleInput(dir, reason, { generation, revision });

const ahead = (generation: number, extra: Partial<AnticipateInput> = {}): AnticipateInput => ({
  dir,
  revision: undefined,
  generation,
  ...extra,
});

/** The names of the TLS edges the account holds. */
async function names(): Promise<string[]> {
  return ownedEdges(await liveState(client)).map((a) => a.replace(/^tls:/, ''));
}

/** A converged account of two edges, and a reconciler that keeps its snapshot. */
async function converged(incremental = true) {
  await writeYaml(path.join(dir, 'a.yaml'), [tlsEdge('a')]);
  await writeYaml(path.join(dir, 'b.yaml'), [tlsEdge('b')]);
  const step = reconciler(incremental);
  expect((await step(input('startup'))).result).toBe('changed');
  return step;
}

describe('reading ahead of a file event', () => {
  it('the cycle at the same generation takes the read over: a file written after it waits for its own event', async () => {
    const step = await converged();
    await writeYaml(path.join(dir, 'c.yaml'), [tlsEdge('c')]);
    await step.anticipate(ahead(1));
    // Written after the read ahead, with no event: the generation stays 1.
    await writeYaml(path.join(dir, 'd.yaml'), [tlsEdge('d')]);
    const report = await step(input('file', 1));
    expect(report).toMatchObject({ result: 'changed', mode: 'incremental', writes: 1 });
    expect(await names()).toEqual(['a', 'b', 'c']);
    // Its event's cycle (generation 2) reads for itself.
    expect(await step(input('file', 2))).toMatchObject({ result: 'changed', writes: 1 });
    expect(await names()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a change after the read ahead (a later generation) makes the cycle read again', async () => {
    const step = await converged();
    await writeYaml(path.join(dir, 'c.yaml'), [tlsEdge('c')]);
    await step.anticipate(ahead(1));
    await writeYaml(path.join(dir, 'd.yaml'), [tlsEdge('d')]);
    expect(await step(input('file', 2))).toMatchObject({ result: 'changed', writes: 2 });
    expect(await names()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('is taken once: the next cycle at the same generation reads again', async () => {
    const step = await converged();
    await step.anticipate(ahead(1));
    expect(await step(input('file', 1))).toMatchObject({ result: 'converged', writes: 0 });
    await writeYaml(path.join(dir, 'c.yaml'), [tlsEdge('c')]);
    expect(await step(input('file', 1))).toMatchObject({ result: 'changed', writes: 1 });
  });

  it('is dropped when the kept snapshot changed since (a cycle ran in between)', async () => {
    const step = await converged();
    await writeYaml(path.join(dir, 'c.yaml'), [tlsEdge('c')]);
    await step.anticipate(ahead(1));
    // A resync lists the account again: a new kept snapshot, which already has `c`.
    expect(await step(input('resync'))).toMatchObject({ result: 'changed', writes: 1 });
    await rm(path.join(dir, 'c.yaml'));
    // The read ahead still had `c`; the cycle reads for itself and deletes it.
    expect(await step(input('file', 1))).toMatchObject({ result: 'changed', writes: 1 });
    expect(await names()).toEqual(['a', 'b']);
  });

  it('is dropped for another directory or revision, and without a generation', async () => {
    const step = await converged();
    await writeYaml(path.join(dir, 'c.yaml'), [tlsEdge('c')]);
    const other = await tempDir();
    await writeYaml(path.join(other.dir, 'a.yaml'), [tlsEdge('a')]);
    await writeYaml(path.join(other.dir, 'b.yaml'), [tlsEdge('b')]);
    for (const [read, cycle] of [
      [ahead(1, { revision: 'rev-1' }), input('link', 1, 'rev-2')],
      [ahead(1, { dir: other.dir }), input('file', 1)],
      [ahead(1), input('file')],
    ] as const) {
      await step.anticipate(read);
      await writeYaml(path.join(dir, 'd.yaml'), [tlsEdge('d')]);
      const report = await step(cycle);
      expect(report.result).toBe('changed');
      expect(await names()).toContain('d');
      await rm(path.join(dir, 'd.yaml'));
      expect(await step(input('file'))).toMatchObject({ result: 'changed', writes: 1 });
    }
    await other.cleanup();
  });

  it('a read in which a file lost resources (half a save) is not planned ahead: the cycle reads for itself', async () => {
    await writeYaml(path.join(dir, 'a.yaml'), [tlsEdge('a1'), tlsEdge('a2')]);
    const step = reconciler();
    expect((await step(input('startup'))).result).toBe('changed');
    // Truncated after its first document, as a file rewritten in place is mid-save.
    await writeYaml(path.join(dir, 'a.yaml'), [tlsEdge('a1')]);
    await step.anticipate(ahead(1));
    await writeYaml(path.join(dir, 'd.yaml'), [tlsEdge('d')]);
    // The cycle at the same generation read for itself (it sees d), and still waits for the
    // shrunk file to settle before acting on it.
    expect(await step(input('file', 1))).toMatchObject({
      result: 'superseded',
      reread: true,
      writes: 0,
      summary: { create: 1, delete: 1 },
    });
    expect(await names()).toEqual(['a1', 'a2']);
  });

  it('invalid manifests read ahead are reported by the cycle, with their diagnostics', async () => {
    const step = await converged();
    await writeYaml(path.join(dir, 'c.yaml'), [{ ...tlsEdge('c'), hostports: 'nope' }]);
    await step.anticipate(ahead(1));
    const err = await step(input('file', 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).diagnostics[0]).toMatchObject({ file: 'c.yaml' });
    expect(await names()).toEqual(['a', 'b']);
  });

  it('a directory that cannot be read ahead keeps nothing and never throws', async () => {
    const step = await converged();
    await expect(step.anticipate(ahead(1, { dir: path.join(dir, 'gone') }))).resolves.toBe(
      undefined,
    );
    await writeYaml(path.join(dir, 'c.yaml'), [tlsEdge('c')]);
    expect(await step(input('file', 1))).toMatchObject({ result: 'changed', writes: 1 });
  });

  it('with nothing kept (or incremental cycles off), it only fills the file cache: the cycle lists and reads for itself', async () => {
    for (const incremental of [true, false]) {
      const step = reconciler(incremental);
      await writeYaml(path.join(dir, 'a.yaml'), [tlsEdge(`a${incremental}`)]);
      await step.anticipate(ahead(1));
      await writeYaml(path.join(dir, 'd.yaml'), [tlsEdge(`d${incremental}`)]);
      expect(await step(input('file', 1))).toMatchObject({ mode: 'full', result: 'changed' });
      expect(await names()).toContain(`d${incremental}`);
    }
  });
});
