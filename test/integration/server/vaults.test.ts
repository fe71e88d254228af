/**
 * Vaults and their secrets over HTTP against the local server: every operation, every rule and
 * code of account-resources.md section 3 (names, unique names, values, the vault a secret goes
 * in, limits, a vault that still holds secrets), both secret lists, filters, and the value: never
 * in an answer, never in clear in the data directory, yet kept across a restart.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey, type RunningServer } from '../../../src/server/index.js';
import { SecretSealer } from '../../../src/server/secret-seal.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let other: Call;
const accountKey = generateApiKey();
const otherKey = generateApiKey();
const VALUE = 'whsec-Do-Not-Leak-4242';
const NONE = `_${'0'.repeat(27)}`;

beforeAll(async () => {
  server = await startTestServer({ apiKeys: [accountKey, otherKey] });
  call = clientFor(server, accountKey);
  other = clientFor(server, otherKey);
});
afterAll(() => server.close());

async function clear(c: Call) {
  for (;;) {
    const page = (await c('GET', '/vault_secrets')).json.secrets;
    if (page.length === 0) break;
    for (const s of page) await c('DELETE', `/vault_secrets/${s.id}`);
  }
  for (const v of (await c('GET', '/vaults')).json.vaults) await c('DELETE', `/vaults/${v.id}`);
}
beforeEach(async () => {
  await clear(call);
  await clear(other);
});

async function vault(name: string, extra: object = {}): Promise<string> {
  const res = await call('POST', '/vaults', { name, ...extra });
  expect(res.status).toBe(201);
  return res.json.id;
}
const secret = (body: object) => call('POST', '/vault_secrets', { value: VALUE, ...body });
const ids = (list: { id: string }[]) => list.map((x) => x.id);

describe('vaults', () => {
  it('creates, reads, lists, updates and deletes a vault', async () => {
    const created = await call('POST', '/vaults', { name: 'webhooks', description: 'hooks' });
    expect(created.status).toBe(201);
    const id: string = created.json.id;
    expect(id).toMatch(/^vault_[0-9A-Za-z]{27}$/);
    expect(created.json).toEqual({
      id,
      uri: `${server.url}/vaults/${id}`,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      name: 'webhooks',
      description: 'hooks',
      created_by: expect.stringMatching(/^usr_/),
      last_updated_by: created.json.created_by,
    });
    expect((await call('GET', `/vaults/${id}`)).json).toEqual(created.json);
    const patched = await call('PATCH', `/vaults/${id}`, { name: 'hooks', metadata: 'm' });
    expect(patched.status).toBe(200);
    expect(patched.json.name).toBe('hooks');
    expect(patched.json.metadata).toBe('m');
    expect(Date.parse(patched.json.updated_at)).toBeGreaterThan(
      Date.parse(created.json.updated_at),
    );
    expect((await call('GET', '/vaults')).json).toEqual({
      vaults: [patched.json],
      uri: `${server.url}/vaults`,
      next_page_uri: null,
    });
    expect((await call('DELETE', `/vaults/${id}`)).status).toBe(204);
    expect((await call('GET', `/vaults/${id}`)).status).toBe(404);
  });

  it.each([
    ['', 'ERR_SVC_23001'],
    [undefined, 'ERR_SVC_23001'],
    ['a'.repeat(65), 'ERR_SVC_23002'],
    ['has space', 'ERR_SVC_23000'],
    ['dash-ed', 'ERR_SVC_23000'],
    ['ünï', 'ERR_SVC_23000'],
  ])('refuses the vault name %j (%s)', async (name, code) => {
    const res = await call('POST', '/vaults', { name });
    expect([res.status, res.json.error_code]).toEqual([400, code]);
  });

  it('accepts a-zA-Z0-9_/. up to 64 characters', async () => {
    await vault('a'.repeat(64));
    await vault('Team_1/prod.hooks');
  });

  it('keeps vault names unique per account (23004), on create and rename', async () => {
    const a = await vault('one');
    await vault('two');
    expect((await call('POST', '/vaults', { name: 'one' })).json.error_code).toBe('ERR_SVC_23004');
    expect((await call('PATCH', `/vaults/${a}`, { name: 'two' })).json.error_code).toBe(
      'ERR_SVC_23004',
    );
    expect((await call('PATCH', `/vaults/${a}`, { name: 'one' })).status).toBe(200);
    expect((await other('POST', '/vaults', { name: 'one' })).status).toBe(201);
  });

  it('holds an account to 5 vaults (23005)', async () => {
    for (let i = 0; i < 5; i++) await vault(`v${i}`);
    const res = await call('POST', '/vaults', { name: 'v5' });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_23005']);
  });

  it('refuses to delete a vault that holds secrets (23003)', async () => {
    const v = await vault('full');
    const s = (await secret({ name: 'x', vault_id: v })).json.id;
    const res = await call('DELETE', `/vaults/${v}`);
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_23003']);
    expect((await call('DELETE', `/vault_secrets/${s}`)).status).toBe(204);
    expect((await call('DELETE', `/vaults/${v}`)).status).toBe(204);
  });

  it('refuses an empty PATCH, a malformed ID (400), an unknown or foreign one (404)', async () => {
    const v = await vault('v');
    expect((await call('PATCH', `/vaults/${v}`, {})).status).toBe(400);
    expect((await call('GET', '/vaults/ipp_1')).json.error_code).toBe('ERR_SVC_227');
    for (const path of ['/vaults/vault_1', '/vaults/vault_1/secrets', '/vault_secrets/secret_1']) {
      const res = await call('GET', path);
      expect([path, res.status, res.json.error_code]).toEqual([path, 400, 'ERR_SVC_227']);
    }
    expect((await call('GET', `/vaults/vault${NONE}`)).status).toBe(404);
    expect((await other('GET', `/vaults/${v}`)).status).toBe(404);
    expect((await call('PATCH', `/vaults/${v}`, { description: 'é'.repeat(128) })).status).toBe(
      400,
    );
  });

  it('filters vaults over their filterable fields and refuses others', async () => {
    const a = await vault('alpha');
    await vault('beta', { description: 'b' });
    const q = (f: string) => call('GET', `/vaults?filter=${encodeURIComponent(f)}`);
    expect(ids((await q("obj.name == 'alpha'")).json.vaults)).toEqual([a]);
    expect(ids((await q('obj.description == null')).json.vaults)).toEqual([a]);
    const bad = await q("obj.created_by == 'x'");
    expect([bad.status, bad.json.error_code]).toEqual([400, 'invalid_cel_expression']);
  });
});

describe('secrets', () => {
  it('creates, reads, lists, updates and deletes a secret, never showing its value', async () => {
    const v = await vault('webhooks');
    const created = await secret({ name: 'github', vault_id: v, description: 'gh' });
    expect(created.status).toBe(201);
    const id: string = created.json.id;
    expect(id).toMatch(/^secret_[0-9A-Za-z]{27}$/);
    expect(created.json).toEqual({
      id,
      uri: `${server.url}/vault_secrets/${id}`,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      name: 'github',
      description: 'gh',
      created_by: { id: expect.stringMatching(/^usr_/), uri: expect.any(String) },
      last_updated_by: created.json.created_by,
      vault: { id: v, uri: `${server.url}/vaults/${v}` },
      vault_name: 'webhooks',
    });
    const read = await call('GET', `/vault_secrets/${id}`);
    expect(read.json).toEqual(created.json);
    const patched = await call('PATCH', `/vault_secrets/${id}`, { value: 'new-value-1' });
    expect(patched.status).toBe(200);
    expect(Date.parse(patched.json.updated_at)).toBeGreaterThan(
      Date.parse(created.json.updated_at),
    );
    const again = await call('PATCH', `/vault_secrets/${id}`, { value: 'new-value-1' });
    expect(Date.parse(again.json.updated_at)).toBeGreaterThan(Date.parse(patched.json.updated_at));
    const lists = [await call('GET', '/vault_secrets'), await call('GET', `/vaults/${v}/secrets`)];
    for (const res of [created, read, patched, again, ...lists]) {
      expect(res.text).not.toContain(VALUE);
      expect(res.text).not.toContain('new-value-1');
      expect(res.text).not.toContain('value');
    }
    expect(lists[0]?.json.secrets).toEqual([again.json]);
    expect(lists[1]?.json).toEqual({
      secrets: [again.json],
      uri: `${server.url}/vaults/${v}/secrets`,
      next_page_uri: null,
    });
    expect((await call('DELETE', `/vault_secrets/${id}`)).status).toBe(204);
    expect((await call('GET', `/vault_secrets/${id}`)).status).toBe(404);
  });

  it('finds the vault by name, and says which is missing (24006, 24008, 24009)', async () => {
    const v = await vault('byname');
    const byName = await secret({ name: 's', vault_name: 'byname' });
    expect([byName.status, byName.json.vault.id]).toEqual([201, v]);
    expect((await secret({ name: 't' })).json.error_code).toBe('ERR_SVC_24008');
    expect((await secret({ name: 't', vault_id: `vault${NONE}` })).json.error_code).toBe(
      'ERR_SVC_24006',
    );
    expect((await secret({ name: 't', vault_name: 'nope' })).json.error_code).toBe('ERR_SVC_24009');
    const theirs = (await other('POST', '/vaults', { name: 'theirs' })).json.id;
    expect((await secret({ name: 't', vault_id: theirs })).json.error_code).toBe('ERR_SVC_24006');
  });

  it.each([
    ['', 'ERR_SVC_24001'],
    [undefined, 'ERR_SVC_24001'],
    ['s'.repeat(65), 'ERR_SVC_24002'],
    ['no-dash', 'ERR_SVC_24000'],
    ['a b', 'ERR_SVC_24000'],
  ])('refuses the secret name %j (%s)', async (name, code) => {
    const v = await vault('names');
    const res = await secret({ name, vault_id: v });
    expect([res.status, res.json.error_code]).toEqual([400, code]);
  });

  it.each([
    ['an empty value', '', 'ERR_SVC_24003'],
    ['no value', undefined, 'ERR_SVC_24003'],
    ['a value over 16 KiB', 'x'.repeat(16 * 1024 + 1), 'ERR_SVC_24004'],
  ])('refuses %s (%s)', async (_what, value, code) => {
    const v = await vault('values');
    const res = await call('POST', '/vault_secrets', { name: 's', vault_id: v, value });
    expect([res.status, res.json.error_code]).toEqual([400, code]);
    expect(res.text).not.toContain('xxxxxxxx');
  });

  it('accepts a value of exactly 16 KiB', async () => {
    const v = await vault('big');
    const res = await secret({ name: 's', vault_id: v, value: 'x'.repeat(16 * 1024) });
    expect(res.status).toBe(201);
  });

  it('keeps secret names unique within their vault (24005), not across vaults', async () => {
    const a = await vault('a');
    const b = await vault('b');
    expect((await secret({ name: 'dup', vault_id: a })).status).toBe(201);
    expect((await secret({ name: 'dup', vault_id: a })).json.error_code).toBe('ERR_SVC_24005');
    expect((await secret({ name: 'dup', vault_id: b })).status).toBe(201);
    const other2 = (await secret({ name: 'other', vault_id: a })).json.id;
    const rename = await call('PATCH', `/vault_secrets/${other2}`, { name: 'dup' });
    expect(rename.json.error_code).toBe('ERR_SVC_24005');
  });

  it('holds a vault to 500 secrets (24007)', async () => {
    const v = await vault('many');
    for (let i = 0; i < 500; i++) {
      expect((await secret({ name: `s${i}`, vault_id: v })).status).toBe(201);
    }
    const res = await secret({ name: 's500', vault_id: v });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_24007']);
    const page = await call('GET', `/vaults/${v}/secrets?limit=100`);
    expect(page.json.secrets).toHaveLength(100);
    expect(page.json.next_page_uri).toMatch(
      /^http:\/\/.*\/vaults\/vault_\w+\/secrets\?before_id=secret_\w+&limit=100$/,
    );
  }, 60_000);

  it('does not move a secret to another vault, nor take an empty update', async () => {
    const a = await vault('a');
    const b = await vault('b');
    const s = (await secret({ name: 's', vault_id: a })).json.id;
    for (const body of [{ vault_id: b }, { vault_name: 'b' }]) {
      const res = await call('PATCH', `/vault_secrets/${s}`, body);
      expect(res.status).toBe(400);
      expect(res.json.msg).toContain('cannot move');
    }
    expect((await call('PATCH', `/vault_secrets/${s}`, {})).status).toBe(400);
    expect((await call('PATCH', `/vault_secrets/${s}`, { value: '' })).json.error_code).toBe(
      'ERR_SVC_24003',
    );
    expect((await call('GET', `/vault_secrets/${s}`)).json.vault.id).toBe(a);
  });

  it("shows a renamed vault's name in its secrets", async () => {
    const v = await vault('before');
    const s = (await secret({ name: 's', vault_id: v })).json.id;
    await call('PATCH', `/vaults/${v}`, { name: 'after' });
    expect((await call('GET', `/vault_secrets/${s}`)).json.vault_name).toBe('after');
  });

  it('lists secrets account-wide and per vault, newest first, filtering by vault_id', async () => {
    const a = await vault('a');
    const b = await vault('b');
    const s1 = (await secret({ name: 'one', vault_id: a })).json.id;
    const s2 = (await secret({ name: 'two', vault_id: b })).json.id;
    const s3 = (await secret({ name: 'three', vault_id: a })).json.id;
    expect(ids((await call('GET', '/vault_secrets')).json.secrets)).toEqual([s3, s2, s1]);
    expect(ids((await call('GET', `/vaults/${a}/secrets`)).json.secrets)).toEqual([s3, s1]);
    const first = await call('GET', `/vaults/${a}/secrets?limit=1`);
    expect(first.json.next_page_uri).toBe(
      `${server.url}/vaults/${a}/secrets?before_id=${s3}&limit=1`,
    );
    const q = (f: string) => call('GET', `/vault_secrets?filter=${encodeURIComponent(f)}`);
    expect(ids((await q(`obj.vault_id == '${b}'`)).json.secrets)).toEqual([s2]);
    expect(ids((await q("obj.name in ['one', 'three']")).json.secrets)).toEqual([s3, s1]);
    expect((await q("obj.vault_name == 'a'")).json.error_code).toBe('invalid_cel_expression');
    const noFilter = await call('GET', `/vaults/${a}/secrets?filter=true`);
    expect([noFilter.status, noFilter.json.error_code]).toEqual([400, 'ERR_SVC_231']);
    expect((await call('GET', `/vaults/vault${NONE}/secrets`)).status).toBe(404);
  });
});

describe('the actor of a write', () => {
  it("is the key's: the account's owner, or the service user a key belongs to, in created_by and last_updated_by", async () => {
    const bot = await call('POST', '/service_users', { name: 'dashboard' });
    expect(bot.status).toBe(201);
    const botCall = clientFor(server, server.serviceUserKey(accountKey, bot.json.id));
    const vaultId = await vault('webhooks');
    const created = await secret({ name: 'hook', vault_id: vaultId });
    const owner = created.json.last_updated_by.id as string;
    expect(owner).toMatch(/^usr_/);
    expect(created.json.created_by).toEqual(created.json.last_updated_by);

    // The service user's key acts on the same account, as another actor.
    const patched = await botCall('PATCH', `/vault_secrets/${created.json.id}`, { value: 'x2' });
    expect(patched.status).toBe(200);
    expect(patched.json.created_by.id).toBe(owner);
    expect(patched.json.last_updated_by).toEqual({
      id: bot.json.id,
      uri: `${server.url}/service_users/${bot.json.id}`,
    });
    const byBot = await botCall('POST', '/vaults', { name: 'more' });
    expect(byBot.json.created_by).toBe(bot.json.id);
    expect((await call('GET', `/vaults/${byBot.json.id}`)).json.last_updated_by).toBe(bot.json.id);
    // Another account's key still sees none of it.
    expect((await other('GET', `/vault_secrets/${created.json.id}`)).status).toBe(404);

    // A key of an inactive, then deleted, service user is refused.
    await call('PATCH', `/service_users/${bot.json.id}`, { active: false });
    expect((await botCall('GET', '/vaults')).status).toBe(401);
    await call('PATCH', `/service_users/${bot.json.id}`, { active: true });
    expect((await botCall('GET', '/vaults')).status).toBe(200);
    await call('DELETE', `/vault_secrets/${created.json.id}`);
    await call('DELETE', `/service_users/${bot.json.id}`);
    expect((await botCall('GET', '/vaults')).status).toBe(401);
    expect(() => server.serviceUserKey(accountKey, bot.json.id)).toThrow(/no service user/);
    expect(() => server.serviceUserKey('esk_not_an_account_key', bot.json.id)).toThrow(
      /no account/,
    );
  });
});

describe('secret values at rest', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'edgesync-vaults-'));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** Every file of the data directory, as text. */
  async function files(): Promise<string> {
    const names = await readdir(dir);
    const texts = await Promise.all(names.map((n) => readFile(join(dir, n), 'latin1')));
    return texts.join('\n');
  }

  it('keeps vaults and secrets across a restart, the value sealed, never in clear', async () => {
    const key = generateApiKey();
    const first = await startTestServer({
      apiKeys: [key],
      dataDir: dir,
      publicUrl: 'http://edge.test',
    });
    const c1 = clientFor(first, key);
    const v = (await c1('POST', '/vaults', { name: 'persisted' })).json;
    const s = (await c1('POST', '/vault_secrets', { name: 'k', vault_id: v.id, value: VALUE }))
      .json;
    const before = [(await c1('GET', '/vaults')).json, (await c1('GET', '/vault_secrets')).json];
    await first.close();
    expect(await files()).not.toContain(VALUE);

    const second = await startTestServer({
      apiKeys: [key],
      dataDir: dir,
      publicUrl: 'http://edge.test',
      // Every write compacts: the snapshot, which writes the state whole, is checked too.
      compactBytes: 1,
    });
    const c2 = clientFor(second, key);
    expect([(await c2('GET', '/vaults')).json, (await c2('GET', '/vault_secrets')).json]).toEqual(
      before,
    );
    // Compaction writes the state whole: still sealed.
    await c2('PATCH', `/vault_secrets/${s.id}`, { description: 'after restart' });
    await second.close();
    expect(await files()).not.toContain(VALUE);

    expect(await readdir(dir)).toContain('snapshot.json');
    // The data holds the value sealed under the directory's key: it opens to what was sent.
    const record = (await files())
      .split('\n')
      .map((l) => l.slice(l.indexOf(' ') + 1))
      .filter((l) => l.includes(s.id) && l.includes('sealed_value'))
      .map((l) => JSON.parse(l) as { r: { sealed_value: string } })
      .pop();
    const sealer = new SecretSealer(await readFile(join(dir, 'secrets.key')));
    expect(sealer.open(s.id, record?.r.sealed_value ?? '')).toBe(VALUE);
    expect(() => sealer.open('secret_other', record?.r.sealed_value ?? '')).toThrow();
  });
});
