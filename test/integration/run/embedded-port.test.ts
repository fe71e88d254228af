/**
 * The quick start (`npm start`) must work on a machine where something already holds the
 * embedded server's port (8787 by default): the embedded server falls back to a free port. The
 * test holds a random port and asks the embedded server for it, as 8787 cannot be used here.
 */
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { tempDir, tlsEdge, writeYaml } from './helpers.js';

let holder: Server | undefined;
let tmp: Awaited<ReturnType<typeof tempDir>> | undefined;
afterEach(async () => {
  await stopDaemons();
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  await tmp?.cleanup();
});

describe('edgesync run with the embedded server', () => {
  it('falls back to a free port when the embedded port is taken', async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder?.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as { port: number }).port;
    tmp = await tempDir();
    const edges = path.join(tmp.dir, 'edges');
    await writeYaml(path.join(edges, 'db.yaml'), [tlsEdge('db')]);
    const daemon = await startDaemon({
      args: [edges, '--embedded-port', String(taken)],
      cwd: tmp.dir,
    });
    const s = await waitFor('a converged first cycle', async () => {
      const st = await daemon.status();
      return st.last_reconcile?.result === 'changed' ? st : undefined;
    });
    expect(s.ready).toBe(true);
    expect(
      daemon
        .logLines()
        .some((l) => l.msg === 'embedded server port in use; using a free port instead'),
    ).toBe(true);
  });
});
