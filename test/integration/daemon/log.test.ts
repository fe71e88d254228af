/**
 * The daemon's cycle log line: an invalid manifest set is logged in full once per change of its
 * findings; its retries (backoff, resyncs, requests) log at debug until the set changes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import type { ReconcileReport } from '../../../src/daemon/types.js';
import { createLogger } from '../../../src/log.js';
import { CONVERGED, logCapture, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

let daemon: Daemon | undefined;
let tmp: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await removeDir(tmp);
  tmp = undefined;
});

function invalid(message: string): ReconcileReport {
  return {
    result: 'invalid',
    summary: { create: 0, update: 0, delete: 0, adopt: 0, noop: 0 },
    writes: 0,
    diagnostics: [{ file: 'a.yaml', line: 3, column: 5, path: 'name', message, severity: 'error' }],
  };
}

it('logs an invalid set once per change of its findings, its retries at debug', async () => {
  tmp = await makeTempDir('daemon-log');
  const dir = path.join(tmp, 'manifests');
  await fs.mkdir(dir, { recursive: true });
  const answers = [
    invalid('bad name'),
    invalid('bad name'),
    invalid('bad name'),
    invalid('another error'),
    CONVERGED,
    invalid('another error'),
  ];
  const { reconcile } = recorder((_input, i) => answers[i] ?? CONVERGED);
  const capture = logCapture();
  daemon = createDaemon({
    dir,
    listen: false,
    watch: false,
    intervalMs: 3_600_000,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    logger: createLogger({ destination: capture.destination, level: 'debug' }),
    reconcile,
  });
  const logged = () => capture.lines.filter((l) => String(l.msg).startsWith('reconcile'));
  await daemon.start();
  for (let i = 1; i < answers.length; i++) {
    await waitFor(`cycle ${i} logged`, () => logged().length === i);
    daemon.trigger('manual');
  }
  await waitFor('the last cycle logged', () => logged().length === answers.length);
  const cycles = logged().map((l) => [
    l.level,
    l.msg,
    (l.first_diagnostics as string[] | undefined)?.[0],
  ]);
  expect(cycles).toEqual([
    [40, 'reconcile invalid', 'a.yaml:3:5 name: bad name'],
    [20, 'reconcile invalid: the same findings as before', 'a.yaml:3:5 name: bad name'],
    [20, 'reconcile invalid: the same findings as before', 'a.yaml:3:5 name: bad name'],
    [40, 'reconcile invalid', 'a.yaml:3:5 name: another error'],
    [30, 'reconcile converged', undefined],
    [40, 'reconcile invalid', 'a.yaml:3:5 name: another error'],
  ]);
});
