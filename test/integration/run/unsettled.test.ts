/**
 * A cycle acts only on finished files (`createReconciler` in-process, local server over HTTP,
 * time injected): a file saved after it was read, or one that got smaller since the last read a
 * cycle went on with, makes the cycle write nothing and end `superseded` with `reread`, never
 * `converged`; a smaller file is acted on once a read `settleMs` later finds it unchanged.
 */
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createReconciler } from '../../../src/engine/index.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import {
  cycleInput,
  liveState,
  openScene,
  ownedEdges,
  type ReconcilerScene,
  tlsEdge,
  writeYaml,
} from './helpers.js';

let scene: ReconcilerScene;
let t = 0;

beforeEach(async () => {
  scene = await openScene(35);
  t = 1_000_000;
});
afterEach(() => scene.close());

const step = () =>
  createReconciler(
    reconcilerOptions({ client: scene.client, maxDeletes: 50, settleMs: 250, now: () => t }),
  );

async function names(): Promise<string[]> {
  return ownedEdges(await liveState(scene.client));
}

it('a save after the read (an empty plan) is not reported converged: the cycle asks to read again', async () => {
  const file = path.join(scene.dir, 'a.yaml');
  await writeYaml(file, [tlsEdge('a', { description: 'v1' })]);
  const reconcile = step();
  expect((await reconcile(cycleInput(scene.dir, 'startup'))).result).toBe('changed');
  // Read ahead: nothing to do. The save lands after the read, before the cycle.
  await reconcile.anticipate({ dir: scene.dir, revision: undefined, generation: 1 });
  await writeYaml(file, [tlsEdge('a', { description: 'v2' })]);
  const report = await reconcile(cycleInput(scene.dir, 'file', { generation: 1 }));
  expect(report).toMatchObject({ result: 'superseded', reread: true, writes: 0 });
  // The cycle it asked for reads the save and applies it.
  expect(await reconcile(cycleInput(scene.dir, 'file', { generation: 2 }))).toMatchObject({
    result: 'changed',
    writes: 1,
  });
  expect((await liveState(scene.client)).tlsEdges[0]?.description).toBe('v2');
});

it('a file that got smaller deletes nothing until a read a debounce later finds it unchanged', async () => {
  const file = path.join(scene.dir, 'a.yaml');
  await writeYaml(file, [tlsEdge('a1'), tlsEdge('a2')]);
  await writeYaml(path.join(scene.dir, 'b.yaml'), [tlsEdge('b')]);
  const reconcile = step();
  expect((await reconcile(cycleInput(scene.dir, 'startup'))).result).toBe('changed');
  // Emptied (as `generator > a.yaml` leaves it until it writes), then read: held.
  await (await open(file, 'w')).close();
  const held = { result: 'superseded', reread: true, writes: 0 };
  expect(await reconcile(cycleInput(scene.dir, 'file'))).toMatchObject(held);
  // Read again sooner than the debounce: still held, whatever the trigger.
  t += 100;
  expect(await reconcile(cycleInput(scene.dir, 'resync'))).toMatchObject(held);
  expect(await names()).toEqual(['tls:a1', 'tls:a2', 'tls:b']);
  // A debounce after the first read, unchanged: emptied on purpose, acted on.
  t += 150;
  expect(await reconcile(cycleInput(scene.dir, 'file'))).toMatchObject({
    result: 'changed',
    writes: 2,
  });
  expect(await names()).toEqual(['tls:b']);
});

it('a truncated file that changes again starts its wait over; the finished file is applied as written', async () => {
  const file = path.join(scene.dir, 'a.yaml');
  await writeYaml(file, [tlsEdge('a1'), tlsEdge('a2', { description: 'two' })]);
  const reconcile = step();
  expect((await reconcile(cycleInput(scene.dir, 'startup'))).result).toBe('changed');
  const ids = (await liveState(scene.client)).tlsEdges.map((e) => e.id).sort();
  // Cut after the first document: valid YAML, one edge fewer.
  await writeYaml(file, [tlsEdge('a1')]);
  const held = { result: 'superseded', reread: true, writes: 0 };
  expect(await reconcile(cycleInput(scene.dir, 'file'))).toMatchObject(held);
  t += 300;
  // Written further meanwhile: still smaller, but not the file first read: the wait starts over.
  await writeFile(file, `${stringify(tlsEdge('a1'))}# more to come\n`);
  expect(await reconcile(cycleInput(scene.dir, 'file'))).toMatchObject(held);
  // The writer finishes: the file is whole again, nothing to delete.
  await writeYaml(file, [tlsEdge('a1'), tlsEdge('a2', { description: 'two, regenerated' })]);
  expect(await reconcile(cycleInput(scene.dir, 'file'))).toMatchObject({
    result: 'changed',
    writes: 1,
  });
  expect((await liveState(scene.client)).tlsEdges.map((e) => e.id).sort()).toEqual(ids);
});
