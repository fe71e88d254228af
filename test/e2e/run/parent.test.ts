/**
 * The documented way to run the daemon, `npx edgesync run`, stops with its parent: npx does not
 * pass SIGTERM on to the CLI it starts, so `kill -TERM <npx pid>` used to leave the daemon
 * running, reparented. Now the daemon sees its parent go and stops as on SIGTERM. Real npx (in
 * this repository it runs bin/edgesync.js, offline), a real daemon process, the local server.
 */
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, startDaemonChild, stopChildren, waitFor } from '../../../bench/harness.js';
import { startTestServer } from '../../helpers/server.js';
import { assertBuilt, tempDir, tlsEdge, writeYaml } from '../../integration/run/helpers.js';

let server: Awaited<ReturnType<typeof startTestServer>>;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(() => assertBuilt());
beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir();
});
afterEach(async () => {
  await stopChildren();
  await server.close();
  await tmp.cleanup();
});

/** True once nothing answers at `base` any more (the daemon's HTTP server is gone). */
async function gone(base: string): Promise<boolean> {
  return fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
    () => false,
    () => true,
  );
}

describe('npx edgesync run', () => {
  it('kill -TERM of npx (which does not pass it on) stops the daemon too', async () => {
    const edges = path.join(tmp.dir, 'edges');
    await writeYaml(path.join(edges, 'tcp.yaml'), [tlsEdge('db')]);
    const daemon = await startDaemonChild({
      command: ['npx', '--offline', 'edgesync'],
      args: [edges, '--interval', '1h'],
      cwd: ROOT,
      env: {
        HOME: process.env.HOME,
        npm_config_offline: 'true',
        EDGESYNC_API_URL: server.url,
        EDGESYNC_API_KEY: server.apiKey,
        EDGESYNC_OWNER: 'default',
      },
      timeoutMs: 60_000,
    });
    expect(await gone(daemon.base)).toBe(false);
    // Only npx, as `kill -TERM <pid>` does: not its process group.
    process.kill(daemon.pid, 'SIGTERM');
    await daemon.exited;
    await waitFor('the daemon to stop after npx is gone', () => gone(daemon.base), 15_000);
  }, 90_000);
});
