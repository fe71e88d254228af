/**
 * Incremental daemon cycles (`createReconciler` in-process, local server over HTTP): after a
 * converged cycle, a file event reads only the edges its plan touches, by ID; everything else
 * (and anything after a cycle that did not converge) lists the whole account.
 */

import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { NO_CALLS } from '../../../src/api/index.js';
import { newEngineState, planOptionsOf } from '../../../src/engine/context.js';
import {
  createReconciler,
  INCREMENTAL_MAX_READS,
  type ReconcileInput,
  type TriggerReason,
} from '../../../src/engine/index.js';
import { fullPreparation } from '../../../src/engine/preparation.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildPlan, type LiveState } from '../../../src/plan/plan.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import {
  cycleInput,
  httpsEdge,
  openScene,
  type ReconcilerScene,
  tlsEdge,
  writeYaml,
} from './helpers.js';

/** One list per registered kind (and child collection). */
const LISTS = Object.keys(NO_CALLS).length;

let scene: ReconcilerScene;
let server: ReconcilerScene['server'];
let client: ApiClient;
let dir: string;

beforeEach(async () => {
  scene = await openScene(11);
  ({ server, client, dir } = scene);
});
afterEach(() => scene.close());

const calls = () => Object.values(server.requests).reduce((a, b) => a + b, 0);

const reconciler = () =>
  createReconciler(reconcilerOptions({ client, maxDeletes: 50, concurrency: 4 }));

const input = (reason: TriggerReason): ReconcileInput => cycleInput(dir, reason);

/** 250 TLS edges in 5 files, and one HTTPS edge with a route in its own file. */
async function writeAccount(edit: (i: number) => Record<string, unknown> = () => ({})) {
  for (let f = 0; f < 5; f++) {
    const docs = Array.from({ length: 50 }, (_, k) => {
      const i = f * 50 + k;
      return tlsEdge(`e${i}`, edit(i));
    });
    await writeYaml(path.join(dir, `tls-${f}.yaml`), docs);
  }
}

describe('incremental cycles', () => {
  it('one changed module costs 3 calls: GET the edge, write the module, GET to verify', async () => {
    await writeAccount();
    await writeYaml(path.join(dir, 'shop.yaml'), [httpsEdge('shop')]);
    const step = reconciler();
    expect((await step(input('startup'))).result).toBe('changed');
    expect((await step(input('resync'))).result).toBe('converged');

    // The route's compression module goes: one module DELETE.
    await writeYaml(path.join(dir, 'shop.yaml'), [
      httpsEdge('shop', {
        routes: [
          {
            match_type: 'path_prefix',
            match: '/',
            backend: { backend_id: 'bkdhr_web' },
          },
        ],
      }),
    ]);
    const before = calls();
    const report = await step(input('file'));
    expect(report).toMatchObject({ result: 'changed', mode: 'incremental' });
    expect(report.listCalls).toBeUndefined();
    expect(report.writes).toBe(1);
    expect(calls() - before).toBe(3);
    expect(server.requests.GET).toBeGreaterThan(0);

    // The next resync lists everything, and finds the account converged.
    const resync = await step(input('resync'));
    expect(resync).toMatchObject({ result: 'converged', mode: 'full' });
    // TLS edges (3 pages), then one page of every other kind.
    expect(resync.listCalls).toBe(3 + LISTS - 1);
  });

  it('a new file creates without reading anything first; a removed one deletes by ID', async () => {
    await writeAccount();
    const step = reconciler();
    await step(input('startup'));
    await writeYaml(path.join(dir, 'new.yaml'), [tlsEdge('fresh')]);
    let before = calls();
    expect(await step(input('file'))).toMatchObject({ result: 'changed', mode: 'incremental' });
    // POST, then GET to verify.
    expect(calls() - before).toBe(2);

    const { rm } = await import('node:fs/promises');
    await rm(path.join(dir, 'new.yaml'));
    before = calls();
    expect(await step(input('file'))).toMatchObject({ result: 'changed', mode: 'incremental' });
    // GET (current state), DELETE, GET (404: gone).
    expect(calls() - before).toBe(3);
    expect((await step(input('resync'))).result).toBe('converged');
  });

  it('a change touching many edges, or following drift, is a full cycle', async () => {
    await writeAccount();
    const step = reconciler();
    await step(input('startup'));
    await writeAccount((i) => (i <= INCREMENTAL_MAX_READS ? { description: 'edited' } : {}));
    const report = await step(input('file'));
    expect(report).toMatchObject({ result: 'changed', mode: 'full' });

    // Drift made behind the controller's back is only seen by a listing: a file event right
    // after a converged cycle does not see it (no read for an untouched edge)...
    const victim = (await client.listTlsEdges()).items[0];
    if (victim === undefined) throw new Error('no edge');
    await client.updateTlsEdge(victim.id, { description: 'changed by hand' });
    await writeYaml(path.join(dir, 'new.yaml'), [tlsEdge('fresh')]);
    expect(await step(input('file'))).toMatchObject({ result: 'changed', mode: 'incremental' });
    // ...and the periodic resync does, and repairs it.
    expect(await step(input('resync'))).toMatchObject({ result: 'changed', mode: 'full' });
    expect((await client.getTlsEdge(victim.id)).description).not.toBe('changed by hand');
  });

  it('a git-sync revision (link) is incremental too; a webhook lists', async () => {
    await writeAccount();
    const step = reconciler();
    await step(input('startup'));
    await writeYaml(path.join(dir, 'new.yaml'), [tlsEdge('fresh')]);
    const before = calls();
    expect(await step(input('link'))).toMatchObject({ result: 'changed', mode: 'incremental' });
    expect(calls() - before).toBe(2);
    expect(await step(input('webhook'))).toMatchObject({ result: 'converged', mode: 'full' });
  });

  it('plans again from what it read: an edge deleted by hand since the snapshot is created', async () => {
    await writeAccount();
    const step = reconciler();
    await step(input('startup'));
    const victim = (await client.listTlsEdges()).items.find((e) =>
      e.hostports[0]?.startsWith('e3.'),
    );
    if (victim === undefined) throw new Error('no edge e3');
    await client.deleteTlsEdge(victim.id);
    await writeAccount((i) => (i === 3 ? { description: 'edited' } : {}));
    const report = await step(input('file'));
    // The plan on the kept snapshot said PATCH; the GET found it gone: the plan made again
    // from that view creates it.
    expect(report).toMatchObject({
      result: 'changed',
      mode: 'incremental',
      summary: { create: 1 },
    });
    const again = (await client.listTlsEdges()).items.filter((e) =>
      e.hostports[0]?.startsWith('e3.'),
    );
    expect(again.map((e) => e.description)).toEqual(['edited']);
  });
});

describe('a full cycle plans with the options of the edits after it', () => {
  it('so the first edit after a listing is planned from its plan, not the whole set again', async () => {
    await writeAccount();
    expect((await reconciler()(input('startup'))).result).toBe('changed');
    const options = reconcilerOptions({ client, maxDeletes: 50, concurrency: 4 });
    const state = newEngineState();
    const full = fullPreparation(options, state);
    await full.prepare(input('startup'));
    const basis = state.memo.basis;
    expect(basis?.options.policyPreview).toBe(false);
    // An edit's plan, with the options an incremental cycle plans with, reuses that basis.
    const desired = basis?.desired as DesiredSet;
    const edited = {
      ...desired,
      tlsEdges: desired.tlsEdges.map((m, i) => (i === 0 ? { ...m, description: 'edited' } : m)),
    };
    buildPlan(edited, basis?.live as LiveState, planOptionsOf(options, state));
    expect(state.memo.basis?.holders).toBe(basis?.holders);
  });
});
