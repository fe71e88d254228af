/**
 * The daemon reads ahead of a change's cycle (real chokidar, a recording reconcile step and a
 * recording `anticipate`): each watcher event counts one generation; the read ahead starts at
 * the event, one at a time; the cycle waits for the one in flight and hands the reconcile step
 * the generation it began at, so the step takes the read over only when no change came since.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import type { AnticipateInput } from '../../../src/engine/index.js';
import {
  CONVERGED,
  gate,
  logCapture,
  makeTempDir,
  recorder,
  removeDir,
  waitFor,
} from './helpers.js';

let tmp: string;
let dir: string;
let daemon: Daemon | undefined;
let rec: ReturnType<typeof recorder>;
let reads: AnticipateInput[];
let log: ReturnType<typeof logCapture>;

beforeEach(async () => {
  tmp = await makeTempDir('daemon-ahead');
  dir = path.join(tmp, 'manifests');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a\n');
  rec = recorder();
  reads = [];
  log = logCapture();
});

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await removeDir(tmp);
});

async function start(anticipate: (input: AnticipateInput) => Promise<void>): Promise<void> {
  daemon = createDaemon({
    dir,
    reconcile: rec.reconcile,
    anticipate: async (input) => {
      reads.push(input);
      await anticipate(input);
    },
    listen: false,
    debounceMs: 30,
    logger: pino({ level: 'debug' }, log.destination),
    metrics: createDaemonMetrics({ defaultMetrics: false }),
  });
  await daemon.start();
  await waitFor('the startup cycle', () => rec.calls.length === 1);
  await waitFor('idle', () => daemon?.status().in_flight === false);
}

const fileCycles = () => rec.calls.filter((c) => c.reason === 'file');

describe('reading ahead of a change', () => {
  it('starts at the event, and the cycle gets the generation the last read began at', async () => {
    await start(async () => undefined);
    // The start-up cycle had no change before it.
    expect(rec.calls[0]?.generation).toBe(0);
    expect(reads).toEqual([]);
    await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a2\n');
    await waitFor('the file cycle', () => fileCycles().length === 1);
    await waitFor('idle', () => daemon?.status().in_flight === false);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.at(-1)).toMatchObject({ dir: await fs.realpath(dir), revision: undefined });
    expect(fileCycles()[0]?.generation).toBe(reads.at(-1)?.generation);
    expect(reads.at(-1)?.generation).toBeGreaterThan(0);
  });

  it('the cycle waits for the read in flight; a change during it gives the cycle a later generation', async () => {
    const held = gate();
    await start(() => held.promise);
    await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a2\n');
    await waitFor('the read ahead', () => reads.length === 1);
    // The debounce ends; the cycle starts and waits for the read.
    await waitFor('the cycle', () => daemon?.status().in_flight === true);
    await fs.writeFile(path.join(dir, 'b.yaml'), 'kind: TLSEdge\nname: b\n');
    await waitFor('the second change seen', () =>
      log.lines.some((l) => l.msg === 'manifest change seen' && String(l.file).endsWith('b.yaml')),
    );
    // The cycle has not reconciled, and no second read started while one was in flight.
    expect(fileCycles()).toHaveLength(0);
    expect(reads).toHaveLength(1);
    held.open();
    await waitFor('the file cycle', () => fileCycles().length >= 1);
    // The cycle began after the second change: the read (made before it) is not taken over.
    expect(fileCycles()[0]?.generation).toBeGreaterThan(reads[0]?.generation ?? 0);
  });

  it('no read starts while a cycle runs: that cycle, or the one queued behind it, reads for itself', async () => {
    const held = gate();
    rec = recorder(async (input) => {
      if (input.reason === 'file') await held.promise;
      return CONVERGED;
    });
    await start(async () => undefined);
    await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a2\n');
    await waitFor('the file cycle', () => fileCycles().length === 1);
    const before = reads.length;
    await fs.writeFile(path.join(dir, 'b.yaml'), 'kind: TLSEdge\nname: b\n');
    await waitFor('the change seen', () =>
      log.lines.some((l) => l.msg === 'manifest change seen' && String(l.file).endsWith('b.yaml')),
    );
    expect(reads).toHaveLength(before);
    held.open();
    await waitFor('the queued cycle', () => fileCycles().length === 2);
  });

  it('a read that fails is only logged; the cycle runs', async () => {
    await start(async () => {
      throw new Error('boom');
    });
    await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a2\n');
    await waitFor('the file cycle', () => fileCycles().length === 1);
    expect(reads.length).toBeGreaterThan(0);
    expect(log.lines.some((l) => l.msg === 'reading ahead failed; the cycle reads again')).toBe(
      true,
    );
  });
});
