/**
 * Bot users with the same name (issue 9): two or more bot users named alike (a person's, or two
 * racing applies') are visible in `plan` and in the daemon's `/status`, the desired `active` is
 * applied to every namesake, `ensure: absent` deletes all of them, and after one apply the next
 * plan is empty. Against the local server over HTTP.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiEnv, runCli } from '../apply/helpers.js';
import { clientFor } from '../server/client.js';
import { tempDir, writeYaml } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  server = await startTestServer();
  tmp = await tempDir();
});
afterEach(async () => {
  await stopDaemons();
});
afterAll(async () => {
  await server.close();
  await tmp.cleanup();
});

async function bots(): Promise<{ name: string; active: boolean }[]> {
  const reply = await clientFor(server, server.apiKey)('GET', '/bot_users');
  return reply.json.bot_users.map((b: { name: string; active: boolean }) => ({
    name: b.name,
    active: b.active,
  }));
}

describe('namesake bot users', () => {
  it('plan warns, apply sets every namesake, ensure: absent deletes all, and plans settle', async () => {
    const call = clientFor(server, server.apiKey);
    for (let i = 0; i < 3; i++) {
      expect((await call('POST', '/bot_users', { name: 'ci', active: true })).status).toBe(201);
    }
    const env = apiEnv(server.url, server.apiKey);
    const dir = path.join(tmp.dir, 'cli');
    await writeYaml(path.join(dir, 'bots.yaml'), [{ kind: 'BotUser', name: 'ci', active: false }]);

    const plan = await runCli(['plan', dir], { env });
    expect(plan.stdout).toMatch(/Warning: 3 bot users named "ci" \(bot_\w+, bot_\w+, bot_\w+\)/);
    expect(plan.stdout).toContain('Plan: 0 to create, 3 to update');

    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    expect(await bots()).toEqual(Array(3).fill({ name: 'ci', active: false }));
    const settled = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain('Warning: 3 bot users named "ci"');

    await writeYaml(path.join(dir, 'bots.yaml'), [
      { kind: 'BotUser', name: 'ci', ensure: 'absent' },
    ]);
    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    expect(await bots()).toEqual([]);
    const empty = await runCli(['plan', '--detailed-exitcode', dir], { env });
    expect([empty.code, empty.stdout]).toEqual([
      0,
      'edgesync plan for owner "default":\n\nNo changes. Live state matches the manifests.\n',
    ]);
  });

  it('the daemon shows the warning in /status and converges every namesake', async () => {
    const call = clientFor(server, server.apiKey);
    for (let i = 0; i < 2; i++) {
      expect((await call('POST', '/bot_users', { name: 'deploy', active: false })).status).toBe(
        201,
      );
    }
    const dir = path.join(tmp.dir, 'daemon');
    await writeYaml(path.join(dir, 'bots.yaml'), [{ kind: 'BotUser', name: 'deploy' }]);
    const before = writesAt(server);
    const daemon = await startDaemon({
      args: [dir, '--interval', '1h'],
      cwd: tmp.dir,
      env: {
        EDGESYNC_API_URL: server.url,
        EDGESYNC_API_KEY: server.apiKey,
        EDGESYNC_OWNER: 'default',
      },
    });
    const status = await waitFor('a converged cycle', async () => {
      const s = await daemon.status();
      return s.last_reconcile?.result === 'changed' ? s : undefined;
    });
    expect(status.warnings).toEqual([
      expect.stringMatching(
        /^2 bot users named "deploy" \(bot_\w+, bot_\w+\): active: true is applied to every one/,
      ),
    ]);
    expect(writesAt(server) - before).toBe(2);
    expect((await bots()).filter((b) => b.name === 'deploy')).toEqual(
      Array(2).fill({ name: 'deploy', active: true }),
    );
  });
});
