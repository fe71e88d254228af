import { describe, expect, it } from 'vitest';
import type { IpPolicyRec, IpRuleRec, Mutation } from '../../../src/server/model.js';
import { SecretSealer } from '../../../src/server/secret-seal.js';
import { type Journal, Store, snapshotMutations } from '../../../src/server/store.js';

const AT = '2024-01-01T00:00:00Z';
const policy = (id: string): IpPolicyRec => ({ id, created_at: AT, description: '', metadata: '' });
const rule = (id: string, policyId: string, cidr: string): IpRuleRec => ({
  id,
  created_at: AT,
  ip_policy_id: policyId,
  cidr,
  action: 'allow',
  description: '',
  metadata: '',
});

/** A journal that loses every write it is given (a full disk), undoing it as the real one does. */
const losing: Journal = {
  append: (_m, undo) => {
    undo();
    return Promise.reject(new Error('disk full'));
  },
  settled: () => undefined,
  close: () => Promise.resolve(),
};

describe('the store of IP policies', () => {
  const filled = () => {
    const store = new Store();
    const put = (m: Mutation) => store.apply(m);
    put({ t: 'put', k: 'ipp', a: 'A', r: policy('ipp_1') });
    put({ t: 'put', k: 'ipp', a: 'A', r: policy('ipp_2') });
    put({ t: 'put', k: 'ipr', a: 'A', r: rule('ipr_1', 'ipp_1', '10.0.0.0/8') });
    put({ t: 'put', k: 'ipr', a: 'A', r: rule('ipr_2', 'ipp_2', '10.0.0.0/8') });
    put({ t: 'put', k: 'ipr', a: 'A', r: rule('ipr_3', 'ipp_1', '192.0.2.0/24') });
    return store;
  };

  it('deletes a policy with its rules, and a lost delete brings both back', async () => {
    const store = filled();
    const account = store.account('A');
    store.setJournal(losing);
    await expect(store.commit({ t: 'del', k: 'ipp', a: 'A', id: 'ipp_1' })).rejects.toThrow();
    expect(account.rulesOf('ipp_1').map((r) => r.id)).toEqual(['ipr_1', 'ipr_3']);
    expect(account.ipPolicies.get('ipp_1')).toBeDefined();
    store.apply({ t: 'del', k: 'ipp', a: 'A', id: 'ipp_1' });
    expect([...account.ipRules.values()].map((r) => r.id)).toEqual(['ipr_2']);
  });

  it('writes policies before their rules in a snapshot, which rebuilds the same state', () => {
    const store = filled();
    const kinds = [...snapshotMutations(store.snapshot())].map((m) => m.k);
    expect(kinds).toEqual(['ipp', 'ipp', 'ipr', 'ipr', 'ipr']);
    const copy = new Store();
    copy.load(store.snapshot());
    expect(copy.snapshot()).toEqual(store.snapshot());
    expect([...copy.ids()].sort()).toEqual(['ipp_1', 'ipp_2', 'ipr_1', 'ipr_2', 'ipr_3']);
  });
});

describe('sealed secret values', () => {
  it('open under the same key and ID only, and never show the value', () => {
    const sealer = new SecretSealer();
    const sealed = sealer.seal('secret_1', 'hunter2-é');
    expect(sealed).not.toContain('hunter2');
    expect(sealer.open('secret_1', sealed)).toBe('hunter2-é');
    expect(() => sealer.open('secret_2', sealed)).toThrow();
    expect(() => new SecretSealer().open('secret_1', sealed)).toThrow();
    // A fresh IV each time: equal values do not show as equal sealed forms.
    expect(sealer.seal('secret_1', 'hunter2-é')).not.toBe(sealed);
  });
});
