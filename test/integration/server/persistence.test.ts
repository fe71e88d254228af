/**
 * Persistence under a data directory (real file system): restart serves identical state, a torn
 * last record is dropped and truncated (every other kind of damage: journal-damage.test.ts),
 * compaction keeps the log bounded and loses nothing, and a damaged snapshot stops the server
 * instead of silently dropping data.
 */
import { appendFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server.js';
import { clientFor, snapshot } from './client.js';

let dir: string;
const KEY = 'persist-key';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgesync-server-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function populate(call: ReturnType<typeof clientFor>) {
  const tls = await call('POST', '/edges/tls', {
    hostports: ['a.example.com:443'],
    backend: { backend_id: 'bkdtg_1' },
  });
  await call('PATCH', `/edges/tls/${tls.json.id}`, { description: 'patched' });
  const https = await call('POST', '/edges/https', {
    hostports: ['b.example.com:443'],
    tls_termination: {},
  });
  const r1 = await call('POST', `/edges/https/${https.json.id}/routes`, {
    match_type: 'path_prefix',
    match: '/',
  });
  await call('PUT', `/edges/https/${https.json.id}/routes/${r1.json.id}/saml`, {
    idp_metadata: '<x/>',
  });
  const r2 = await call('POST', `/edges/https/${https.json.id}/routes`, {
    match_type: 'exact_path',
    match: '/gone',
  });
  await call('DELETE', `/edges/https/${https.json.id}/routes/${r2.json.id}`);
  const doomed = await call('POST', '/edges/https', {});
  await call('POST', `/edges/https/${doomed.json.id}/routes`, {
    match_type: 'path_prefix',
    match: '/',
  });
  await call('DELETE', `/edges/https/${doomed.json.id}`);
  await call('PUT', `/edges/tls/${tls.json.id}/traffic_policy`, { value: 'v' });
  await call('DELETE', `/edges/tls/${tls.json.id}/backend`);
  const bot = await call('POST', '/bot_users', { name: 'b' });
  await call('PATCH', `/bot_users/${bot.json.id}`, { active: false });
  // IP policies and vaults: a policy deleted with its rules, another kept with one.
  const policy = await call('POST', '/ip_policies', { description: 'office' });
  await call('POST', '/ip_policy_rules', {
    ip_policy_id: policy.json.id,
    cidr: '203.0.113.0/24',
    action: 'allow',
  });
  const gone = await call('POST', '/ip_policies', {});
  await call('POST', '/ip_policy_rules', {
    ip_policy_id: gone.json.id,
    cidr: '10.0.0.0/8',
    action: 'deny',
  });
  await call('DELETE', `/ip_policies/${gone.json.id}`);
  const vault = await call('POST', '/vaults', { name: 'hooks' });
  const secret = await call('POST', '/vault_secrets', {
    name: 'gh',
    vault_id: vault.json.id,
    value: 'v1',
  });
  await call('PATCH', `/vault_secrets/${secret.json.id}`, { value: 'v2', description: 'd' });
}

async function logFile(): Promise<string> {
  const names = (await readdir(dir)).filter((n) => n.startsWith('log-'));
  expect(names).toHaveLength(1);
  return join(dir, names[0] as string);
}

it('a restart serves identical state, and new IDs sort after the old ones', async () => {
  const first = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  const call1 = clientFor(first, KEY);
  await populate(call1);
  const before = await snapshot(call1);
  expect(before).toMatchObject({
    ipPolicies: [{ description: 'office' }],
    ipPolicyRules: [{ cidr: '203.0.113.0/24' }],
    secrets: [{ name: 'gh', description: 'd' }],
  });
  await first.close();

  const second = await startTestServer({ dataDir: dir, apiKeys: [KEY], port: 0 });
  try {
    const call2 = clientFor(second, KEY);
    // URIs carry the port; compare with it normalised.
    const norm = (v: unknown, url: string) => JSON.parse(JSON.stringify(v).replaceAll(url, 'BASE'));
    expect(norm(await snapshot(call2), second.url)).toEqual(norm(before, first.url));
    const newest = await call2('POST', '/bot_users', { name: 'later' });
    const list = await call2('GET', '/bot_users');
    expect(list.json.bot_users[0].id).toBe(newest.json.id);
  } finally {
    await second.close();
  }
});

it('another key sees nothing of the persisted account', async () => {
  const first = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  await populate(clientFor(first, KEY));
  await first.close();
  const second = await startTestServer({ dataDir: dir, apiKeys: ['other-key'] });
  try {
    expect(await snapshot(clientFor(second, 'other-key'))).toEqual({
      tls: [],
      https: [],
      bots: [],
      ipPolicies: [],
      ipPolicyRules: [],
      vaults: [],
      secrets: [],
    });
  } finally {
    await second.close();
  }
});

it('a torn last record is dropped and truncated; later writes persist', async () => {
  const first = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  const call1 = clientFor(first, KEY);
  await call1('POST', '/bot_users', { name: 'kept' });
  await call1('POST', '/bot_users', { name: 'last' });
  await first.close();
  const log = await logFile();
  const goodSize = (await stat(log)).size;
  await appendFile(log, '0badc0de {"t":"put","k":"bot","a":"x","r":{"id":"bot_');

  const second = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  const call2 = clientFor(second, KEY);
  const names = (await call2('GET', '/bot_users')).json.bot_users.map(
    (b: { name: string }) => b.name,
  );
  expect(names).toEqual(['last', 'kept']);
  expect((await stat(log)).size).toBe(goodSize);
  await call2('POST', '/bot_users', { name: 'after' });
  await second.close();

  const third = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  try {
    const after = (await clientFor(third, KEY)('GET', '/bot_users')).json.bot_users;
    expect(after.map((b: { name: string }) => b.name)).toEqual(['after', 'last', 'kept']);
  } finally {
    await third.close();
  }
});

it('compaction: a snapshot replaces the log, old logs are removed, nothing is lost', async () => {
  const first = await startTestServer({ dataDir: dir, apiKeys: [KEY], compactBytes: 8 * 1024 });
  const call1 = clientFor(first, KEY);
  const ids: string[] = [];
  for (let i = 0; i < 120; i++)
    ids.push((await call1('POST', '/bot_users', { name: `bot-${i}` })).json.id);
  // Deletes and updates after (and across) compactions.
  for (const id of ids.slice(0, 30)) await call1('DELETE', `/bot_users/${id}`);
  for (const id of ids.slice(30, 40)) await call1('PATCH', `/bot_users/${id}`, { active: false });
  await populate(call1);
  const before = await snapshot(call1);
  expect(before).toMatchObject({
    ipPolicies: [{ description: 'office' }],
    ipPolicyRules: [{ cidr: '203.0.113.0/24' }],
    secrets: [{ name: 'gh', description: 'd' }],
  });
  await first.close();

  const files = await readdir(dir);
  expect(files).toContain('snapshot.json');
  const logs = files.filter((n) => n.startsWith('log-'));
  expect(logs).toHaveLength(1);
  expect(logs[0]).not.toBe('log-0.jsonl');
  expect((await stat(join(dir, logs[0] as string))).size).toBeLessThan(16 * 1024);

  const second = await startTestServer({ dataDir: dir, apiKeys: [KEY], compactBytes: 8 * 1024 });
  try {
    const norm = (v: unknown, url: string) => JSON.parse(JSON.stringify(v).replaceAll(url, 'BASE'));
    expect(norm(await snapshot(clientFor(second, KEY)), second.url)).toEqual(
      norm(before, first.url),
    );
  } finally {
    await second.close();
  }
});

it('a stray log of a crashed compaction is removed on start', async () => {
  const first = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  await clientFor(first, KEY)('POST', '/bot_users', { name: 'x' });
  await first.close();
  await writeFile(join(dir, 'log-7.jsonl'), 'half-made');
  await writeFile(join(dir, 'snapshot.tmp'), 'half-made');
  const second = await startTestServer({ dataDir: dir, apiKeys: [KEY] });
  try {
    expect((await clientFor(second, KEY)('GET', '/bot_users')).json.bot_users).toHaveLength(1);
    // The secrets key stays: it is no leftover (secret values are sealed under it).
    expect((await readdir(dir)).sort()).toEqual(['lock.1', 'log-0.jsonl', 'secrets.key']);
  } finally {
    await second.close();
  }
});

it('a damaged snapshot refuses to start rather than drop data', async () => {
  const first = await startTestServer({ dataDir: dir, apiKeys: [KEY], compactBytes: 1024 });
  const call1 = clientFor(first, KEY);
  for (let i = 0; i < 20; i++) await call1('POST', '/bot_users', { name: `b${i}` });
  await first.close();
  const snap = join(dir, 'snapshot.json');
  await writeFile(snap, (await readFile(snap, 'utf8')).replace('b1', 'c1'));
  await expect(startTestServer({ dataDir: dir, apiKeys: [KEY] })).rejects.toThrow(/corrupt/);
});

it('group commit: concurrent writes share syncs, and each resolves only once synced', async () => {
  const { openJournal } = await import('../../../src/server/journal.js');
  const { Store } = await import('../../../src/server/store.js');
  const { silentLogger } = await import('../../../src/log.js');
  const store = new Store();
  const journal = await openJournal({ dir, store, logger: silentLogger() });
  const writes = Array.from({ length: 64 }, (_, i) =>
    store.commit({
      t: 'put',
      k: 'bot',
      a: 'acct',
      r: {
        id: `bot_${String(i).padStart(27, '0')}`,
        created_at: '2024-01-01T00:00:00Z',
        name: `n${i}`,
        active: true,
      },
    }),
  );
  await Promise.all(writes);
  expect(journal.stats.records).toBe(64);
  // The first write goes out alone; the other 63 arrive during its sync and share the next.
  expect(journal.stats.batches).toBeLessThanOrEqual(4);
  const lines = (await readFile(join(dir, 'log-0.jsonl'), 'utf8')).trimEnd().split('\n');
  expect(lines).toHaveLength(64);
  await journal.close();
  await expect(store.commit({ t: 'del', k: 'bot', a: 'acct', id: 'bot_x' })).rejects.toThrow(
    /closed/,
  );
});
