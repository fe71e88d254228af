/**
 * `kind: ServiceUser` and `kind: BotUser` are one kind under two names (the service lists the
 * same records under `/service_users` and `/bot_users`): a service user applied under one name
 * is up to date under the other, both names count as service users in `validate`, and one name
 * declared under both is a duplicate.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { buildFrom, errorLines } from '../../unit/manifest/helpers.js';
import { tempDir } from '../apply/helpers.js';
import { acting, applyDir, recordingClient } from './helpers.js';

let server: RunningServer & { apiKey: string };
let client: ApiClient;
let calls: string[];
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  server = await startTestServer();
  ({ client, calls } = recordingClient(server.url, server.apiKey));
  tmp = await tempDir('edgesync-users-');
});
afterEach(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

async function write(text: string): Promise<string> {
  const dir = path.join(tmp.dir, 'manifests');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'users.yaml'), text);
  return dir;
}

describe('ServiceUser and BotUser', () => {
  it('are the same records: applied as one, up to date as the other, changed and deleted as either', async () => {
    const created = await applyDir(client, await write('kind: ServiceUser\nname: ci\n'));
    expect(acting(created.plan)).toEqual(['create bot_user.ci']);
    expect(created.outcome.converged).toBe(true);
    expect((await client.listServiceUsers()).items.map((u) => [u.name, u.active])).toEqual([
      ['ci', true],
    ]);

    calls.length = 0;
    const renamed = await applyDir(client, await write('kind: BotUser\nname: ci\n'));
    expect(acting(renamed.plan)).toEqual([]);
    expect(calls).toEqual([]);

    const deactivated = await applyDir(
      client,
      await write('kind: BotUser\nname: ci\nactive: false\n'),
    );
    expect(acting(deactivated.plan)).toEqual(['update bot_user.ci']);
    expect(acting(deactivated.next)).toEqual([]);
    const absent = await applyDir(
      client,
      await write('kind: ServiceUser\nname: ci\nensure: absent\n'),
    );
    expect(acting(absent.plan)).toEqual(['delete bot_user.ci']);
    expect((await client.listServiceUsers()).items).toEqual([]);
  });

  it('count as service users in validate under either name, and one name under both is a duplicate', () => {
    const both = buildFrom({
      'a.yaml': 'kind: ServiceUser\nname: a\n---\nkind: BotUser\nname: b\n',
    });
    expect(errorLines(both)).toEqual([]);
    expect(both.counts.bot_users).toBe(2);
    if (both.ok)
      expect(both.set.botUsers.map((u) => [u.kind, u.name])).toEqual([
        ['ServiceUser', 'a'],
        ['BotUser', 'b'],
      ]);
    const twice = buildFrom({
      'a.yaml': 'kind: ServiceUser\nname: ci\n---\nkind: BotUser\nname: ci\n',
    });
    expect(errorLines(twice)).toEqual([
      'a.yaml:5:7: name: duplicate BotUser name "ci" (first defined at a.yaml:2:7)',
    ]);
  });
});
