/**
 * The impact preview's shortcuts (a request prepared once for both policies, guard outcomes
 * shared between requests alike, a request told apart by the guards of the rules that differ
 * before any run) change its cost, never its result: on random pairs of policies (one edited
 * from the other, or drawn apart) and random declared cases, the preview lists exactly what the
 * same code lists with the shortcuts off, every request through both policies from scratch.
 * Fixed seed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkCel } from '../../../src/hosted/cel.js';
import { type PolicyCase, PolicyTestsSchema } from '../../../src/manifest/policy/tests.js';
import { guardReads } from '../../../src/policy-eval/cel.js';
import { policyImpact } from '../../../src/policy-eval/impact.js';
import { differingRules } from '../../../src/policy-eval/rules.js';

const SEED = 20261129;

/** Guards of every kind: the request's, the case's facts', the run's, failing ones. */
const GUARDS = [
  "req.url.path.startsWith('/admin')",
  "req.url.path == '/old'",
  "req.url.path.startsWith('/staff') && req.method != 'OPTIONS'",
  "req.method == 'POST'",
  "getReqHeader('x-team').exists(t, t == 'ops')",
  "hasQueryParam('debug')",
  "inCidrRange(conn.client_ip, '10.0.0.0/8')",
  "secrets.get('vault', 'key') == 's3cret'",
  "has(vars.tag) && vars.tag == 'yes'",
  "req.url.path == '/broken' && int('x') == 1",
  "has(actions.svc.restrict_ips) && actions.svc.restrict_ips.action == 'allow'",
] as const;

const forward = (url: string) => ({ type: 'forward-internal', config: { url } });
const ACTIONS = [
  forward('https://a.internal'),
  forward('https://b.internal'),
  { type: 'deny' },
  { type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } },
  { type: 'oauth', config: { provider: 'google' } },
  { type: 'set-vars', config: { vars: [{ tag: 'yes' }] } },
  { type: 'add-headers', config: { headers: { 'x-seen': 'yes' } } },
  { type: 'custom-response', config: { status_code: 410 } },
  { type: 'redirect', config: { to: 'https://app.example.com/new', status_code: 301 } },
  { type: 'basic-auth', config: { credentials: ['user:pass'] } },
] as const;

const rule = fc.record(
  {
    name: fc.constantFrom('a', 'b', 'c'),
    expressions: fc.subarray([...GUARDS], { maxLength: 2 }),
    actions: fc.array(fc.constantFrom(...ACTIONS), { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: ['actions'] },
);
const rules = fc.array(rule, { maxLength: 6 });

type Rule = Record<string, unknown>;

/** An edit of a rule list: removed, added, replaced or moved rules. */
function edited(list: readonly Rule[]): fc.Arbitrary<Rule[]> {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('add' as const), at: fc.nat(), rule }),
    fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), rule }),
    fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), to: fc.nat() }),
  );
  return fc.array(edit, { minLength: 1, maxLength: 3 }).map((edits) => {
    const out = [...list];
    for (const e of edits) {
      const at = out.length === 0 ? 0 : e.at % (out.length + (e.kind === 'add' ? 1 : 0));
      if (e.kind === 'remove') out.splice(at, 1);
      else if (e.kind === 'add') out.splice(at, 0, e.rule);
      else if (e.kind === 'replace' && out.length > 0) out[at] = e.rule;
      else if (e.kind === 'swap' && out.length > 1) {
        const to = e.to % out.length;
        [out[at], out[to]] = [out[to] as Rule, out[at] as Rule];
      }
    }
    return out;
  });
}

const document = (http: readonly Rule[], tcp: readonly Rule[]) => ({
  ...(tcp.length === 0 ? {} : { on_tcp_connect: tcp }),
  on_http_request: http,
});

const office = { actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }] };

const pair = fc
  .record({
    http: rules,
    tcp: fc.subarray([office]),
    apart: fc.boolean(),
    other: rules,
    otherTcp: fc.subarray([office]),
  })
  .chain(({ http, tcp, apart, other, otherTcp }) =>
    (apart ? fc.constant(other) : edited(http)).map((next) => ({
      before: document(http, tcp),
      after: document(next, apart ? otherTcp : tcp),
    })),
  );

const declared = fc.array(
  fc.record(
    {
      path: fc.constantFrom('/', '/admin', '/admin/x', '/old', '/staff', '/broken', '/a?debug=1'),
      method: fc.constantFrom('GET', 'POST', 'OPTIONS'),
      client_ip: fc.constantFrom('10.1.2.3', '203.0.113.9'),
      team: fc.constantFrom('ops', 'dev'),
      identity: fc.boolean(),
      secret: fc.boolean(),
      conn: fc.boolean(),
    },
    { requiredKeys: ['path', 'method'] },
  ),
  { maxLength: 3 },
);

function cases(drawn: readonly Record<string, unknown>[]): PolicyCase[] {
  return PolicyTestsSchema.parse(
    drawn.map((c, i) => ({
      name: `case ${i}`,
      request: {
        method: c.method,
        url: `https://app.example.com${c.path}`,
        ...(c.client_ip === undefined ? {} : { client_ip: c.client_ip }),
        ...(c.team === undefined ? {} : { headers: { 'x-team': [c.team] } }),
      },
      given: {
        ...(c.identity === true ? { identity: { email: 'a@example.com' } } : {}),
        ...(c.secret === true ? { secrets: { 'vault/key': 's3cret' } } : {}),
        ...(c.conn === true ? { conn: { server_region: 'eu' } } : {}),
      },
      expect: { status: 200 },
    })),
  );
}

describe('the impact preview with its shortcuts', () => {
  it('has guards that all check, of every kind the shortcuts tell apart', () => {
    for (const g of GUARDS) expect(checkCel(g, 'bool'), g).toEqual([]);
    expect(new Set(GUARDS.map(guardReads))).toEqual(new Set(['request', 'facts', 'run']));
    expect(guardReads("req.url.path == '/a'")).toBe('request');
    expect(guardReads("secrets.get('vault', 'key') == ''")).toBe('facts');
    expect(guardReads("inCidrRange(conn.client_ip, '10.0.0.0/8')")).toBe('facts');
    expect(guardReads("has(vars.tag) && vars.tag == 'yes'")).toBe('run');
    // A macro's own variable named like the run's state is taken as it.
    expect(guardReads('[1].exists(vars, vars == 1)')).toBe('run');
  });

  it('lists exactly the changed requests of the same preview without them, on random policy pairs', () => {
    let changed = 0;
    fc.assert(
      fc.property(
        pair,
        declared,
        fc.constantFrom('https://app.example.com', 'tcp://app.example.com:5000'),
        ({ before, after }, drawn, url) => {
          const given = cases(drawn);
          const fast = policyImpact(url, before, after, given);
          const reference = policyImpact(url, before, after, given, { shortcuts: false });
          expect(fast).toEqual(reference);
          if (fast.changes.length > 0) changed += 1;
        },
      ),
      { numRuns: 300, seed: SEED },
    );
    // Not vacuous: most pairs change something.
    expect(changed).toBeGreaterThan(100);
  });
});

describe('the rules two versions of a policy differ by', () => {
  it('are those outside a longest common subsequence, phase by phase', () => {
    const r = (name: string) => ({ name, actions: [{ type: 'deny' }] });
    const [a, b] = differingRules(
      { on_http_request: [r('x'), r('y'), r('z'), r('w')] },
      { on_http_request: [r('y'), r('q'), r('w'), r('x')] },
    ) ?? [undefined, undefined];
    expect(a?.byKey.get('on_http_request')).toEqual(new Set([0, 2]));
    expect(b?.byKey.get('on_http_request')).toEqual(new Set([1, 3]));
    expect(a?.last).toEqual([1, 2]);
    expect(b?.last).toEqual([1, 3]);
    expect(differingRules({ on_http_request: 'x' }, { on_http_request: [] })).toBeUndefined();
  });
});
