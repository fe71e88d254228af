/**
 * The daemon masks every cycle's free text (`DaemonOptions.mask`) before its status, events,
 * notifications, metrics or log see it: an error thrown anywhere in a cycle, a report's error
 * and warnings, diagnostics.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { EventLog } from '../../../src/daemon/events.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import { createLogger } from '../../../src/log.js';
import { CONVERGED, logCapture, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

const SECRET = 'Thrown-Secret-Value-93c2';

let daemon: Daemon | undefined;
let tmp: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  await removeDir(tmp);
});

it('masks thrown errors, report errors, warnings and diagnostics in status, events and log', async () => {
  tmp = await makeTempDir('daemon-mask');
  const dir = path.join(tmp, 'm');
  await fs.mkdir(dir);
  const { calls, reconcile } = recorder((_input, i) => {
    if (i === 0) throw new Error(`API said: bad body {"secret":"${SECRET}"}`);
    return {
      ...CONVERGED,
      result: 'invalid',
      error: `not applied: ${SECRET}`,
      warnings: [`a warning quoting ${SECRET}`],
      diagnostics: [
        { file: 'a.yaml', line: 1, column: 1, path: 'name', message: SECRET, severity: 'error' },
      ],
    };
  });
  const log = logCapture();
  const events = new EventLog();
  daemon = createDaemon({
    dir,
    reconcile,
    listen: false,
    watch: false,
    intervalMs: 3_600_000,
    backoff: { baseMs: 3_600_000, maxMs: 3_600_000 },
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    events,
    logger: createLogger({ level: 'trace', destination: log.destination }),
    mask: (text) => text.replaceAll(SECRET, '(sensitive)'),
  });
  await daemon.start();
  await waitFor(
    'the thrown cycle',
    () => calls.length === 1 && daemon?.status().last_error != null,
  );
  expect(daemon.status().last_error?.message).toContain('(sensitive)');
  daemon.trigger();
  await waitFor('the invalid cycle', () => daemon?.status().last_reconcile?.result === 'invalid');
  const everything = JSON.stringify([daemon.status(), events.list(), log.lines]);
  expect(everything).toContain('(sensitive)');
  expect(everything).not.toContain(SECRET);
});
