import { describe, expect, it } from 'vitest';
import type { BotUserRec } from '../../../src/server/model.js';
import { tlsEdgeCreateSchema } from '../../../src/server/schemas.js';
import { Collection, Store } from '../../../src/server/store.js';
import { issuesToError } from '../../../src/server/validate.js';

const bot = (id: string): BotUserRec => ({
  id,
  created_at: '2024-01-01T00:00:00Z',
  name: id,
  active: true,
});

describe('Collection pages', () => {
  const filled = () => {
    const c = new Collection<BotUserRec>();
    for (const id of ['b_05', 'b_01', 'b_03', 'b_02', 'b_04']) c.put(bot(id));
    return c;
  };

  it.each([
    [undefined, 2, ['b_05', 'b_04'], true],
    ['b_04', 2, ['b_03', 'b_02'], true],
    ['b_03', 2, ['b_02', 'b_01'], false],
    ['b_01', 5, [], false],
    ['b_035', 1, ['b_03'], true], // an ID that was never (or no longer) stored
    [undefined, 100, ['b_05', 'b_04', 'b_03', 'b_02', 'b_01'], false],
  ])('before %s limit %i', (before, limit, ids, more) => {
    const page = filled().page(before, limit);
    expect(page.items.map((b) => b.id)).toEqual(ids);
    expect(page.more).toBe(more);
  });

  it('deletes keep the order of the rest', () => {
    const c = filled();
    c.delete('b_03');
    expect(c.page(undefined, 10).items.map((b) => b.id)).toEqual(['b_05', 'b_04', 'b_02', 'b_01']);
    expect(c.page('b_03', 10).items.map((b) => b.id)).toEqual(['b_02', 'b_01']);
    expect(c.size).toBe(4);
  });
});

describe('Store', () => {
  it('indexes hostports per account, case-insensitively, and frees them on delete', () => {
    const store = new Store();
    const edge = {
      id: 'edgtls_1',
      created_at: '2024-01-01T00:00:00Z',
      description: '',
      metadata: '',
      hostports: ['A.example.com:443'],
      modules: {
        backend: null,
        ip_restriction: null,
        mutual_tls: null,
        tls_termination: null,
        traffic_policy: null,
      },
    };
    void store.commit({ t: 'put', k: 'tls', a: 'acct', r: edge });
    expect(store.account('acct').hostportOwner(['a.EXAMPLE.com:443'], undefined)).toBe(
      'a.EXAMPLE.com:443',
    );
    expect(store.account('acct').hostportOwner(['a.example.com:443'], 'edgtls_1')).toBeUndefined();
    expect(store.account('other').hostportOwner(['a.example.com:443'], undefined)).toBeUndefined();
    void store.commit({ t: 'del', k: 'tls', a: 'acct', id: 'edgtls_1' });
    expect(store.account('acct').hostportOwner(['a.example.com:443'], undefined)).toBeUndefined();
  });

  it('round-trips through a snapshot', () => {
    const store = new Store();
    void store.commit({ t: 'put', k: 'bot', a: 'x', r: bot('bot_1') });
    const copy = new Store();
    copy.load(JSON.parse(JSON.stringify(store.snapshot())));
    expect(copy.snapshot()).toEqual(store.snapshot());
    expect([...copy.ids()]).toEqual(['bot_1']);
  });
});

describe('issue mapping', () => {
  it.each([
    [{ foo: 1, description: 5 }, 'ERR_SVC_214'],
    [{ backend: { backend_id: 'x' }, description: 5 }, 'ERR_SVC_227'],
    [{ description: 5 }, 'ERR_SVC_215'],
    ['text', 'ERR_SVC_215'],
  ])('%j -> %s, the winning issue first in the message', (body, code) => {
    const result = tlsEdgeCreateSchema.safeParse(body);
    expect(result.success).toBe(false);
    if (result.success) return;
    const err = issuesToError(result.error.issues);
    expect(err.status).toBe(400);
    expect(err.errorCode).toBe(code);
    if (code === 'ERR_SVC_214') expect(err.message).toMatch(/^body: unknown field\(s\) "foo"/);
  });
});
