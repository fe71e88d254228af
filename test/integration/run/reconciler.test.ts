/**
 * The daemon's reconcile step in-process (`createReconciler`), against the local server over
 * HTTP: how each outcome of a cycle maps to the `ReconcileReport` the daemon records.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { createReconciler, type ReconcileInput } from '../../../src/engine/index.js';
import { GuardError, ManifestError } from '../../../src/errors.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { heldCredentials } from '../../../src/manifest/own-credentials.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { writesAt } from '../../helpers/server.js';
import {
  cycleInput,
  httpsEdge,
  openScene,
  type ReconcilerScene,
  tlsEdge,
  writeYaml,
} from './helpers.js';

let scene: ReconcilerScene;
let server: ReconcilerScene['server'];
let client: ApiClient;
let dir: string;

beforeEach(async () => {
  scene = await openScene(7);
  ({ server, client, dir } = scene);
});
afterEach(() => scene.close());

const reconciler = (maxDeletes = 10) =>
  createReconciler(reconcilerOptions({ client, maxDeletes, concurrency: 2 }));

const input = (extra: Partial<ReconcileInput> = {}): ReconcileInput =>
  cycleInput(dir, 'manual', extra);

describe('createReconciler', () => {
  it('changed, then converged, with managed counts and no writes the second time', async () => {
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db'), httpsEdge('shop')]);
    const first = await reconciler()(input());
    expect(first).toMatchObject({
      result: 'changed',
      summary: { create: 3 },
      managed: { tls_edge: 1, https_edge: 1, bot_user: 0 },
      outOfSync: 0,
    });
    expect(first.writes).toBe(writesAt(server));
    const second = await reconciler()(input());
    expect(second).toMatchObject({ result: 'converged', writes: 0, outOfSync: 0 });
    expect(writesAt(server)).toBe(first.writes);
  });

  it('drift: a hostport held by a foreign edge is reported, the rest applied', async () => {
    await client.createTlsEdge({ hostports: ['db.example.com:443'], metadata: 'theirs' });
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
    const report = await reconciler()(input());
    expect(report.result).toBe('drift');
    expect(report.outOfSync).toBe(1);
    const again = await reconciler()(input());
    expect(again).toMatchObject({ result: 'drift', writes: 0, outOfSync: 1 });
    expect(again.error).toContain('blocked by hostports held by foreign edges');
  });

  it('a guard refusal throws before any write', async () => {
    for (const name of ['a', 'b', 'c']) {
      await client.createTlsEdge({
        hostports: [`${name}.example.com:443`],
        metadata: storedMetadata({}, { owner: 'default', name, protect: false }),
      });
    }
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('keep')]);
    const before = writesAt(server);
    await expect(reconciler(2)(input())).rejects.toBeInstanceOf(GuardError);
    expect(writesAt(server)).toBe(before);
  });

  it('invalid manifests throw ManifestError with located diagnostics', async () => {
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db', { hostports: 'nope' })]);
    const err = await reconciler()(input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).diagnostics[0]).toMatchObject({ file: 'edges.yaml' });
    expect(writesAt(server)).toBe(0);
  });

  it('a reference reading the daemon’s own credentials is refused, in a full and an incremental cycle', async () => {
    const TOKEN = 'the-control-token-0123456789';
    const daemon = createReconciler(
      reconcilerOptions({
        client,
        env: { SOME_VALUE: TOKEN },
        credentials: heldCredentials({ apiKey: server.apiKey, controlToken: TOKEN }),
      }),
    );
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db')]);
    expect((await daemon(input())).result).toBe('changed');
    const writes = writesAt(server);
    await writeYaml(path.join(dir, 'edges.yaml'), [
      tlsEdge('db', { description: { env: 'SOME_VALUE' } }),
    ]);
    for (const reason of ['file', 'manual'] as const) {
      const err = await daemon(cycleInput(dir, reason)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ManifestError);
      const [d] = (err as ManifestError).diagnostics;
      expect(d?.message).toMatch(/SOME_VALUE holds the control token/);
      expect(JSON.stringify((err as ManifestError).diagnostics)).not.toContain(TOKEN);
    }
    expect(writesAt(server)).toBe(writes);
  });

  it("a cloud endpoint whose own policy test fails is not written: the cycle's manifests are invalid", async () => {
    const endpoint = (status: number) => ({
      kind: 'CloudEndpoint',
      name: 'app',
      url: 'https://app.example.com',
      traffic_policy: {
        on_http_request: [
          { actions: [{ type: 'custom-response', config: { status_code: status } }] },
        ],
      },
      tests: [
        { name: 'served', request: { url: 'https://app.example.com/' }, expect: { status: 200 } },
      ],
    });
    await writeYaml(path.join(dir, 'app.yaml'), [endpoint(503)]);
    const err = await reconciler()(input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).diagnostics[0]).toMatchObject({
      file: 'app.yaml',
      path: 'tests[0]',
      message: expect.stringContaining(
        'policy test "served" failed: expected status 200; got answered 503',
      ),
    });
    expect(writesAt(server)).toBe(0);
    await writeYaml(path.join(dir, 'app.yaml'), [endpoint(200)]);
    expect((await reconciler()(input())).result).toBe('changed');
  });

  it('an account whose edges are read-only is one plain error', async () => {
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db')]);
    server.knobs.edgeAccess = 'read-only';
    const report = await reconciler()(input());
    expect(report.result).toBe('error');
    expect(report.error).toMatch(/read-only/i);
    expect(report.writes).toBe(0);
  });

  it('a failed write is an error naming it; the next cycle converges', async () => {
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db')]);
    await reconciler()(input());
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db', { description: 'edited' })]);
    // Someone deletes the edge between the observation and the PATCH: the PATCH gets a 404.
    let deleted = false;
    const failed = await reconciler()(
      input({
        assertCurrent: async () => {
          if (deleted) return;
          deleted = true;
          const { items } = await client.listTlsEdges();
          for (const e of items) await client.deleteTlsEdge(e.id);
        },
      }),
    );
    expect(failed.result).toBe('error');
    expect(failed.error).toContain('tls_edge.db vanished');
    const again = await reconciler()(input());
    expect(again).toMatchObject({ result: 'changed', summary: { create: 1 } });
  });

  it('a swap detected before the first write stops the cycle with nothing written', async () => {
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db')]);
    const moved = new Error('manifest directory changed during the cycle');
    await expect(
      reconciler()(
        input({
          assertCurrent: async () => {
            throw moved;
          },
        }),
      ),
    ).rejects.toBe(moved);
    expect(writesAt(server)).toBe(0);
  });

  it('a manifest saved while it was read is not acted on (superseded, nothing written)', async () => {
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
    await reconciler()(input());
    const before = writesAt(server);
    // The editor's save is half done when the cycle reads: the file holds only its first edge,
    // and the rest lands right after the read.
    await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db')]);
    let saved = false;
    const report = await reconciler()(
      input({
        assertCurrent: async () => {
          if (saved) return;
          saved = true;
          await writeYaml(path.join(dir, 'edges.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
        },
      }),
    );
    expect(report).toMatchObject({ result: 'superseded', writes: 0 });
    expect(writesAt(server)).toBe(before);
    expect((await reconciler()(input())).result).toBe('converged');
  });

  it('a missing directory is an error, never an empty set', async () => {
    await rm(dir, { recursive: true });
    await expect(reconciler()(input())).rejects.toThrow(/desired state unknown/);
    expect(writesAt(server)).toBe(0);
  });
});
