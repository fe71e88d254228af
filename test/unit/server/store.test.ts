import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BotUserRec, Mutation } from '../../../src/server/model.js';
import { tlsEdgeCreateSchema } from '../../../src/server/schemas.js';
import { Collection, type Journal, Store } from '../../../src/server/store.js';
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

/** A journal that keeps every undo, as the real one does while appends are pending. */
function recordingStore(): { store: Store; undos: (() => void)[] } {
  const store = new Store();
  const undos: (() => void)[] = [];
  const journal: Journal = {
    append: (_m, undo) => {
      undos.push(undo);
      return Promise.resolve();
    },
    settled: () => undefined,
    close: () => Promise.resolve(),
  };
  store.setJournal(journal);
  return { store, undos };
}

const noModules = {
  backend: null,
  ip_restriction: null,
  mutual_tls: null,
  tls_termination: null,
  traffic_policy: null,
};

/**
 * Mutations over a few IDs and hostports, so that they collide: puts, moves, deletes. Those that
 * would take another edge's hostport are skipped when committed, as the handlers refuse them.
 */
const mutation: fc.Arbitrary<Mutation> = (() => {
  const a = fc.constantFrom('acct', 'other');
  const hostports = fc.subarray(['a.example.com:443', 'B.example.com:443', 'c.example.com:443']);
  const edge = (id: string, hp: string[], description: string) => ({
    id,
    created_at: '2024-01-01T00:00:00Z',
    description,
    metadata: '',
    hostports: hp,
  });
  const text = fc.constantFrom('x', 'y', 'z');
  return fc.oneof(
    fc.record({ a, id: fc.constantFrom('edgtls_1', 'edgtls_2'), hp: hostports, d: text }).map(
      ({ a, id, hp, d }): Mutation => ({
        t: 'put',
        k: 'tls',
        a,
        r: { ...edge(id, hp, d), modules: noModules },
      }),
    ),
    fc.record({ a, id: fc.constantFrom('edghts_1', 'edghts_2'), hp: hostports, d: text }).map(
      ({ a, id, hp, d }): Mutation => ({
        t: 'put',
        k: 'https',
        a,
        r: { ...edge(id, hp, d), modules: {} as never, routes: [] },
      }),
    ),
    fc
      .record({
        a,
        e: fc.constantFrom('edghts_1', 'edghts_2'),
        id: fc.constantFrom('edghtsrt_1', 'edghtsrt_2'),
        m: text,
      })
      .map(
        ({ a, e, id, m }): Mutation => ({
          t: 'put',
          k: 'route',
          a,
          r: {
            id,
            created_at: '2024-01-01T00:00:00Z',
            edge_id: e,
            match_type: 'path_prefix',
            match: `/${m}`,
            description: '',
            metadata: '',
            modules: {} as never,
          },
        }),
      ),
    fc
      .record({ a, id: fc.constantFrom('bot_1', 'bot_2'), d: text })
      .map(({ a, id, d }): Mutation => ({ t: 'put', k: 'bot', a, r: { ...bot(id), name: d } })),
    fc
      .record({
        a,
        k: fc.constantFrom('tls', 'https', 'bot') as fc.Arbitrary<'tls' | 'https' | 'bot'>,
        n: fc.constantFrom('1', '2'),
      })
      .map(({ a, k, n }): Mutation => {
        const prefix = { tls: 'edgtls_', https: 'edghts_', bot: 'bot_' }[k];
        return { t: 'del', k, a, id: `${prefix}${n}` };
      }),
    fc
      .record({ a, e: fc.constantFrom('edghts_1', 'edghts_2'), n: fc.constantFrom('1', '2') })
      .map(({ a, e, n }): Mutation => ({ t: 'del', k: 'route', a, e, id: `edghtsrt_${n}` })),
  );
})();

function commitValid(store: Store, m: Mutation): void {
  if (m.t === 'put' && (m.k === 'tls' || m.k === 'https')) {
    if (store.account(m.a).hostportOwner(m.r.hostports, m.r.id) !== undefined) return;
  }
  void store.commit(m);
}

const hostportIndex = (store: Store) =>
  Object.fromEntries(
    ['acct', 'other'].map((a) => [a, Object.fromEntries(store.account(a).hostports)]),
  );

describe('undoing committed mutations', () => {
  it('newest first, restores exactly the state (and hostport index) before them', () => {
    fc.assert(
      fc.property(
        fc.array(mutation, { maxLength: 12 }),
        fc.array(mutation, { maxLength: 12 }),
        (kept, undone) => {
          const { store, undos } = recordingStore();
          for (const m of kept) commitValid(store, m);
          // (Reading the index creates both accounts: before the snapshot, so both hold them.)
          const index = hostportIndex(store);
          const before = JSON.stringify(store.snapshot());
          undos.length = 0;
          for (const m of undone) commitValid(store, m);
          for (const undo of undos.reverse()) undo();
          expect(JSON.stringify(store.snapshot())).toBe(before);
          expect(hostportIndex(store)).toEqual(index);
        },
      ),
      { numRuns: 1000 },
    );
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
