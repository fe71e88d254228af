/**
 * The IPPolicy kind: its manifest schema (rules inline, ranges as the service takes them, one
 * rule per range, located), the canonical comparison of ranges, and its rules planned by the
 * generic planner in the safe order (new deny rules, each flipped range deleted then created,
 * new allow rules, removed rules, description updates), a new policy's rules after its POST
 * naming it by the created placeholder.
 */
import { describe, expect, it } from 'vitest';
import type { Declared, LiveRecord } from '../../../src/kinds/index.js';
import { IP_POLICY, IpPolicySchema, ruleKey } from '../../../src/kinds/ip-policy.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { PlanContext } from '../../../src/plan/context.js';
import { planGenericKinds } from '../../../src/plan/generic.js';

const SOURCE = { file: 'office.yaml', line: 1, column: 1 };

function office(rules: Record<string, unknown>[], extra: Record<string, unknown> = {}): Declared {
  const parsed = IpPolicySchema.parse({ kind: 'IPPolicy', name: 'office', rules, ...extra });
  return { ...parsed, source: SOURCE, sensitive: [] } as Declared;
}

function plan(d: Declared[], live: { policies?: LiveRecord[]; rules?: LiveRecord[] } = {}) {
  const ctx = new PlanContext({});
  const set: DesiredSet = {
    tlsEdges: [],
    httpsEdges: [],
    botUsers: [],
    cloudEndpoints: [],
    resources: { ip_policy: d },
  };
  planGenericKinds(
    ctx,
    set,
    { resources: { ip_policy: live.policies ?? [], ip_policy_rule: live.rules ?? [] } },
    [IP_POLICY],
  );
  return ctx;
}

const LIVE_POLICY: LiveRecord = {
  id: 'ipp_1',
  description: '',
  metadata: storedMetadata({}, { owner: 'default', name: 'office', protect: false }),
};
const rule = (id: string, cidr: string, action: string, description = ''): LiveRecord => ({
  id,
  cidr,
  action,
  description,
  ip_policy: { id: 'ipp_1', uri: 'x' },
});

describe('the IPPolicy schema', () => {
  const issues = (rules: Record<string, unknown>[]) => {
    const r = IpPolicySchema.safeParse({ kind: 'IPPolicy', name: 'office', rules });
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('accepts the issue example and defaults rules to none', () => {
    expect(
      issues([
        { cidr: '203.0.113.0/24', action: 'allow', description: 'HQ' },
        { cidr: '198.51.100.7/32', action: 'deny' },
      ]),
    ).toEqual([]);
    expect(IpPolicySchema.parse({ kind: 'IPPolicy', name: 'x' }).rules).toEqual([]);
  });

  it('refuses a range not written with its lowest address, with the hint', () => {
    expect(issues([{ cidr: '10.1.2.3/8', action: 'allow' }])).toEqual([
      'rules.0.cidr: cidr "10.1.2.3/8" is not written with its range\'s lowest address: did you mean `10.0.0.0/8`?',
    ]);
  });

  it('refuses a missing mask, an invalid range, an unknown action', () => {
    expect(issues([{ cidr: '10.0.0.1', action: 'allow' }])[0]).toContain('has no mask');
    expect(issues([{ cidr: '10.0.0.300/32', action: 'allow' }])[0]).toContain('not a valid');
    expect(issues([{ cidr: '10.0.0.0/8', action: 'permit' }])[0]).toContain('allow or deny');
  });

  it('refuses the same range twice in one policy, whatever the action and the writing', () => {
    expect(
      issues([
        { cidr: '2001:db8::/32', action: 'allow' },
        { cidr: '2001:DB8:0::/32', action: 'deny' },
      ]),
    ).toEqual([
      'rules.1.cidr: cidr 2001:DB8:0::/32 is already a rule of this policy (rules[0]): one rule per range, whatever its action',
    ]);
  });

  it('compares ranges canonically', () => {
    expect(ruleKey('2001:DB8:0::/32')).toBe(ruleKey('2001:db8::/32'));
    expect(ruleKey('10.0.0.0/8')).toBe('10.0.0.0/8');
  });
});

describe('planning a policy and its rules', () => {
  it('a new policy: its POST binds it, then its rules name it by the placeholder, deny first', () => {
    const ctx = plan([
      office([
        { cidr: '203.0.113.0/24', action: 'allow', description: 'HQ' },
        { cidr: '198.51.100.7/32', action: 'deny' },
      ]),
    ]);
    const ops = ctx.changes.flatMap((c) => c.operations);
    expect(ops.map((o) => [o.method, o.path, o.binds, o.fills])).toEqual([
      ['POST', '/ip_policies', 'ip_policy.office', undefined],
      ['POST', '/ip_policy_rules', undefined, [['ip_policy_id']]],
      ['POST', '/ip_policy_rules', undefined, [['ip_policy_id']]],
    ]);
    expect(ops.slice(1).map((o) => o.body)).toEqual([
      {
        cidr: '198.51.100.7/32',
        action: 'deny',
        description: '',
        ip_policy_id: '{created:ip_policy.office}',
      },
      {
        cidr: '203.0.113.0/24',
        action: 'allow',
        description: 'HQ',
        ip_policy_id: '{created:ip_policy.office}',
      },
    ]);
    // All of the policy's root: run in order, no dependency edge needed.
    expect(new Set(ctx.changes.map((c) => c.root))).toEqual(new Set(['ip_policy.office']));
    expect(ops.every((o) => o.after === undefined && o.phase === 'main')).toBe(true);
  });

  it('the safe order: new deny, flips (delete then create), new allow, removals, descriptions', () => {
    const ctx = plan(
      [
        office([
          { cidr: '10.0.0.0/8', action: 'allow' }, // flips from deny
          { cidr: '192.0.2.0/24', action: 'allow' }, // new allow
          { cidr: '198.51.100.0/24', action: 'deny' }, // new deny
          { cidr: '203.0.113.0/24', action: 'allow', description: 'HQ' }, // description
        ]),
      ],
      {
        policies: [LIVE_POLICY],
        rules: [
          rule('ipr_1', '10.0.0.0/8', 'deny'),
          rule('ipr_2', '203.0.113.0/24', 'allow', 'old'),
          rule('ipr_3', '100.64.0.0/10', 'allow'),
          // Another policy's rule is never this one's.
          { ...rule('ipr_9', '192.0.2.0/24', 'allow'), ip_policy: { id: 'ipp_2', uri: 'x' } },
        ],
      },
    );
    const rules = ctx.changes.find((c) => c.kind === 'ip_policy_rule');
    expect(rules?.action).toBe('update');
    expect(rules?.operations.map((o) => `${o.method} ${o.path}`)).toEqual([
      'POST /ip_policy_rules', // deny 198.51.100.0/24
      'DELETE /ip_policy_rules/ipr_1', // the flip: delete first
      'POST /ip_policy_rules', // ... then create
      'POST /ip_policy_rules', // allow 192.0.2.0/24
      'DELETE /ip_policy_rules/ipr_3', // no longer declared
      'PATCH /ip_policy_rules/ipr_2', // description
    ]);
    expect(rules?.operations.map((o) => o.body)).toEqual([
      { cidr: '198.51.100.0/24', action: 'deny', description: '', ip_policy_id: 'ipp_1' },
      undefined,
      { cidr: '10.0.0.0/8', action: 'allow', description: '', ip_policy_id: 'ipp_1' },
      { cidr: '192.0.2.0/24', action: 'allow', description: '', ip_policy_id: 'ipp_1' },
      undefined,
      { description: 'HQ' },
    ]);
  });

  it('nothing to do when the rules match, however the ranges are written', () => {
    const ctx = plan([office([{ cidr: '2001:db8::/32', action: 'deny' }])], {
      policies: [LIVE_POLICY],
      rules: [rule('ipr_1', '2001:DB8:0::/32', 'deny')],
    });
    expect(ctx.changes.filter((c) => c.action !== 'noop')).toEqual([]);
  });

  it('a suspended policy leaves its rules alone; an absent one is deleted with them', () => {
    const live = { policies: [LIVE_POLICY], rules: [rule('ipr_1', '10.0.0.0/8', 'deny')] };
    expect(plan([office([], { suspend: true })], live).changes).toEqual([]);
    const absent = plan([office([], { ensure: 'absent' })], live);
    expect(absent.changes.flatMap((c) => c.operations).map((o) => `${o.method} ${o.path}`)).toEqual(
      ['DELETE /ip_policies/ipp_1'],
    );
  });

  it('imports a policy with its rules', () => {
    expect(
      IP_POLICY.toManifest?.({ id: 'ipp_1', description: 'HQ' }, () => undefined, [
        rule('ipr_2', '203.0.113.0/24', 'allow', 'HQ'),
        rule('ipr_1', '198.51.100.7/32', 'deny'),
      ]),
    ).toEqual({
      description: 'HQ',
      rules: [
        { cidr: '198.51.100.7/32', action: 'deny' },
        { cidr: '203.0.113.0/24', action: 'allow', description: 'HQ' },
      ],
    });
  });
});
