/**
 * IP policies and their rules over HTTP against the local server: every operation, every rule
 * and code of account-resources.md section 2 (CIDRs, actions, limits, what cannot change in
 * place), the account-wide rule list with its filter, and a traffic policy's `restrict-ips`
 * naming a policy the account does not have (2216).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey, type RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let other: Call;
const otherKey = generateApiKey();

beforeAll(async () => {
  const key = generateApiKey();
  server = await startTestServer({ apiKeys: [key, otherKey] });
  call = clientFor(server, key);
  other = clientFor(server, otherKey);
});
afterAll(() => server.close());

/** Deletes every policy of both accounts (their rules go with them). */
async function clear(c: Call) {
  for (;;) {
    const page = await c('GET', '/ip_policies');
    if (page.json.ip_policies.length === 0) return;
    for (const p of page.json.ip_policies) await c('DELETE', `/ip_policies/${p.id}`);
  }
}
beforeEach(async () => {
  await clear(call);
  await clear(other);
});

async function policy(body: object = {}): Promise<string> {
  const res = await call('POST', '/ip_policies', body);
  expect(res.status).toBe(201);
  return res.json.id;
}

const rule = (ip_policy_id: string, cidr: string, action = 'allow', extra: object = {}) =>
  call('POST', '/ip_policy_rules', { ip_policy_id, cidr, action, ...extra });

describe('IP policies', () => {
  it('creates, reads, lists, updates and deletes a policy', async () => {
    const created = await call('POST', '/ip_policies', { description: 'HQ', metadata: '{"a":1}' });
    expect(created.status).toBe(201);
    const id: string = created.json.id;
    expect(id).toMatch(/^ipp_[0-9A-Za-z]{27}$/);
    expect(created.json).toEqual({
      id,
      uri: `${server.url}/ip_policies/${id}`,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      description: 'HQ',
      metadata: '{"a":1}',
    });
    expect((await call('GET', `/ip_policies/${id}`)).json).toEqual(created.json);
    const patched = await call('PATCH', `/ip_policies/${id}`, { description: 'HQ and VPN' });
    expect(patched.status).toBe(200);
    expect(patched.json).toEqual({ ...created.json, description: 'HQ and VPN' });
    const listed = await call('GET', '/ip_policies');
    expect(listed.json).toEqual({
      ip_policies: [patched.json],
      uri: `${server.url}/ip_policies`,
      next_page_uri: null,
    });
    const deleted = await call('DELETE', `/ip_policies/${id}`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    const gone = await call('GET', `/ip_policies/${id}`);
    expect([gone.status, gone.json.error_code]).toEqual([404, 'ERR_SVC_1402']);
  });

  it('omits an unset description and metadata', async () => {
    const id = await policy();
    expect(Object.keys((await call('GET', `/ip_policies/${id}`)).json).sort()).toEqual([
      'created_at',
      'id',
      'uri',
    ]);
  });

  it.each([
    ['a description over 255 bytes', { description: 'é'.repeat(128) }],
    ['metadata over 4096 bytes', { metadata: 'x'.repeat(4097) }],
    ['an unknown field', { name: 'x' }],
  ])('refuses %s (400)', async (_what, body) => {
    const res = await call('POST', '/ip_policies', body);
    expect(res.status).toBe(400);
    expect(res.json.error_code).toMatch(/^ERR_SVC_21[45]$/);
  });

  it('refuses a PATCH with no field, a malformed ID (400) and an unknown one (404)', async () => {
    const id = await policy();
    expect((await call('PATCH', `/ip_policies/${id}`, {})).status).toBe(400);
    for (const bad of ['vault_1', 'ipp_1', `ipp_${'0'.repeat(26)}!`, `ipp_${'0'.repeat(28)}`]) {
      const res = await call('GET', `/ip_policies/${encodeURIComponent(bad)}`);
      expect([bad, res.status, res.json.error_code]).toEqual([bad, 400, 'ERR_SVC_227']);
    }
    expect((await call('DELETE', '/ip_policy_rules/ipr_1')).status).toBe(400);
    const unknown = await call('GET', `/ip_policies/ipp_${'0'.repeat(27)}`);
    expect([unknown.status, unknown.json.error_code]).toEqual([404, 'ERR_SVC_1402']);
    expect((await call('DELETE', `/ip_policies/ipp_${'0'.repeat(27)}`)).status).toBe(404);
  });

  it("does not show one account's policies to another (404)", async () => {
    const id = await policy();
    expect((await other('GET', `/ip_policies/${id}`)).status).toBe(404);
    expect((await other('GET', '/ip_policies')).json.ip_policies).toEqual([]);
  });

  it('holds an account to 50 policies (1410)', async () => {
    for (let i = 0; i < 50; i++) await policy();
    const res = await call('POST', '/ip_policies', {});
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_1410']);
  });

  it('pages newest first, with an absolute next_page_uri', async () => {
    const ids = [await policy(), await policy(), await policy()];
    const first = await call('GET', '/ip_policies?limit=2');
    expect(first.json.ip_policies.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect(first.json.next_page_uri).toBe(`${server.url}/ip_policies?before_id=${ids[1]}&limit=2`);
    const next = await call('GET', first.json.next_page_uri.slice(server.url.length));
    expect(next.json.ip_policies.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(next.json.next_page_uri).toBeNull();
    expect((await call('GET', '/ip_policies?limit=0')).status).toBe(400);
    expect((await call('GET', '/ip_policies?limit=101')).status).toBe(400);
  });

  it('filters with CEL over its filterable fields, and refuses any other field', async () => {
    const hq = await policy({ description: 'HQ' });
    await policy({ description: 'VPN' });
    const bare = await policy();
    const q = (f: string) => call('GET', `/ip_policies?filter=${encodeURIComponent(f)}`);
    expect(
      (await q("obj.description == 'HQ'")).json.ip_policies.map((p: { id: string }) => p.id),
    ).toEqual([hq]);
    expect(
      (await q('obj.description == null')).json.ip_policies.map((p: { id: string }) => p.id),
    ).toEqual([bare]);
    for (const bad of ['obj.cidr == "x"', 'obj.uri != ""', 'obj["name"] == "x"', 'obj == obj']) {
      const res = await q(bad);
      expect([bad, res.status, res.json.error_code]).toEqual([bad, 400, 'invalid_cel_expression']);
    }
    expect((await q('obj.description ==')).json.error_code).toBe('invalid_cel_expression');
  });
});

describe('IP policy rules', () => {
  it('creates, reads, lists account-wide, updates and deletes a rule', async () => {
    const p1 = await policy();
    const p2 = await policy();
    const created = await rule(p1, '203.0.113.0/24', 'allow', { description: 'HQ' });
    expect(created.status).toBe(201);
    const id: string = created.json.id;
    expect(created.json).toEqual({
      id,
      uri: `${server.url}/ip_policy_rules/${id}`,
      created_at: expect.any(String),
      description: 'HQ',
      cidr: '203.0.113.0/24',
      ip_policy: { id: p1, uri: `${server.url}/ip_policies/${p1}` },
      action: 'allow',
    });
    expect(id).toMatch(/^ipr_/);
    const r2 = await rule(p2, '2001:db8::/32', 'deny');
    expect(r2.status).toBe(201);
    const all = await call('GET', '/ip_policy_rules');
    expect(all.json.ip_policy_rules.map((r: { id: string }) => r.id)).toEqual([r2.json.id, id]);
    const patched = await call('PATCH', `/ip_policy_rules/${id}`, {
      cidr: '198.51.100.0/24',
      metadata: 'm',
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toEqual({ ...created.json, cidr: '198.51.100.0/24', metadata: 'm' });
    expect((await call('GET', `/ip_policy_rules/${id}`)).json).toEqual(patched.json);
    expect((await call('DELETE', `/ip_policy_rules/${id}`)).status).toBe(204);
    const gone = await call('GET', `/ip_policy_rules/${id}`);
    expect([gone.status, gone.json.error_code]).toEqual([404, 'ERR_SVC_1404']);
  });

  it.each([
    ['10.0.0.1', 'ERR_SVC_1413', '10.0.0.1/32'],
    ['2001:db8::1', 'ERR_SVC_1413', '2001:db8::1/128'],
    ['10.1.2.3/8', 'ERR_SVC_1409', 'did you mean `10.0.0.0/8`?'],
    ['2001:db8::1/32', 'ERR_SVC_1409', 'did you mean `2001:db8:0:0:0:0:0:0/32`?'],
    ['10.0.0.0/33', 'ERR_SVC_1406', 'not a valid'],
    ['300.0.0.0/8', 'ERR_SVC_1406', 'not a valid'],
    ['10.0.0.0/x', 'ERR_SVC_1406', 'not a valid'],
    ['nonsense', 'ERR_SVC_1406', 'not a CIDR'],
    ['2001:db8::/129', 'ERR_SVC_1406', 'not a valid'],
  ])('refuses the CIDR %s (%s)', async (cidr, code, message) => {
    const res = await rule(await policy(), cidr);
    expect([res.status, res.json.error_code]).toEqual([400, code]);
    expect(res.json.msg).toContain(message);
  });

  it('accepts IPv4 and IPv6 ranges written with their lowest address', async () => {
    const p = await policy();
    for (const cidr of [
      '0.0.0.0/0',
      '10.0.0.0/8',
      '192.0.2.7/32',
      '::/0',
      '2001:db8::/32',
      'fe80::1/128',
    ]) {
      expect([cidr, (await rule(p, cidr)).status]).toEqual([cidr, 201]);
    }
  });

  it('refuses the same CIDR twice in one policy whatever the action (1408), not in two', async () => {
    const p1 = await policy();
    const p2 = await policy();
    expect((await rule(p1, '10.0.0.0/8', 'allow')).status).toBe(201);
    for (const [cidr, action] of [
      ['10.0.0.0/8', 'allow'],
      ['10.0.0.0/8', 'deny'],
    ] as const) {
      const res = await rule(p1, cidr, action);
      expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_1408']);
    }
    const v6 = await rule(p1, '2001:db8::/32');
    expect(v6.status).toBe(201);
    expect((await rule(p1, '2001:DB8:0::/32')).json.error_code).toBe('ERR_SVC_1408');
    expect((await rule(p2, '10.0.0.0/8', 'deny')).status).toBe(201);
    // An update onto another rule's range is the same conflict; onto its own is not.
    const r = await rule(p1, '192.0.2.0/24');
    const onto = await call('PATCH', `/ip_policy_rules/${r.json.id}`, { cidr: '10.0.0.0/8' });
    expect(onto.json.error_code).toBe('ERR_SVC_1408');
    const self = await call('PATCH', `/ip_policy_rules/${r.json.id}`, { cidr: '192.0.2.0/24' });
    expect(self.status).toBe(200);
  });

  it('flips an action by delete then create', async () => {
    const p = await policy();
    const allow = await rule(p, '10.0.0.0/8', 'allow');
    expect((await call('DELETE', `/ip_policy_rules/${allow.json.id}`)).status).toBe(204);
    expect((await rule(p, '10.0.0.0/8', 'deny')).status).toBe(201);
  });

  it.each([
    ['an action other than allow or deny', 'ERR_SVC_1422', { action: 'block' }],
    ['a description over 255 bytes', 'ERR_SVC_1421', { description: 'x'.repeat(256) }],
    ['an unknown ip_policy_id', 'ERR_SVC_1414', { ip_policy_id: `ipp_${'0'.repeat(27)}` }],
    ['metadata over 4096 bytes', 'ERR_SVC_215', { metadata: 'x'.repeat(4097) }],
    ['no cidr', 'ERR_SVC_215', { cidr: undefined }],
  ])('refuses %s (%s)', async (_what, code, change) => {
    const p = await policy();
    const res = await call('POST', '/ip_policy_rules', {
      ip_policy_id: p,
      cidr: '10.0.0.0/8',
      action: 'allow',
      ...change,
    });
    expect([res.status, res.json.error_code]).toEqual([400, code]);
  });

  it("refuses another account's policy as ip_policy_id (1414)", async () => {
    const theirs = (await other('POST', '/ip_policies', {})).json.id;
    expect((await rule(theirs, '10.0.0.0/8')).json.error_code).toBe('ERR_SVC_1414');
  });

  it('does not change action or ip_policy_id in place, nor takes an empty PATCH', async () => {
    const p = await policy();
    const r = (await rule(p, '10.0.0.0/8')).json.id;
    for (const body of [{ action: 'deny' }, { ip_policy_id: await policy() }]) {
      const res = await call('PATCH', `/ip_policy_rules/${r}`, body);
      expect(res.status).toBe(400);
      expect(res.json.msg).toContain('cannot change in place');
    }
    expect((await call('PATCH', `/ip_policy_rules/${r}`, {})).status).toBe(400);
    const long = await call('PATCH', `/ip_policy_rules/${r}`, { description: 'x'.repeat(256) });
    expect(long.json.error_code).toBe('ERR_SVC_1421');
    const bad = await call('PATCH', `/ip_policy_rules/${r}`, { cidr: '10.0.0.1/8' });
    expect(bad.json.error_code).toBe('ERR_SVC_1409');
    expect((await call('GET', `/ip_policy_rules/${r}`)).json.action).toBe('allow');
  });

  it('holds a policy to 1,000 rules (1411)', async () => {
    const p = await policy();
    for (let i = 0; i < 1000; i++) {
      const res = await rule(p, `10.${i >> 8}.${i & 255}.0/24`);
      expect(res.status).toBe(201);
    }
    const res = await rule(p, '192.0.2.0/24');
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_1411']);
    expect((await rule(await policy(), '192.0.2.0/24')).status).toBe(201);
  }, 60_000);

  it('deletes a policy with its rules', async () => {
    const p = await policy();
    const r = (await rule(p, '10.0.0.0/8')).json.id;
    expect((await call('DELETE', `/ip_policies/${p}`)).status).toBe(204);
    expect((await call('GET', `/ip_policy_rules/${r}`)).status).toBe(404);
    expect((await call('GET', '/ip_policy_rules')).json.ip_policy_rules).toEqual([]);
  });

  it('filters rules account-wide by policy, action and CIDR, and refuses other fields', async () => {
    const p1 = await policy();
    const p2 = await policy();
    const a = (await rule(p1, '10.0.0.0/8', 'allow')).json.id;
    const b = (await rule(p1, '192.0.2.0/24', 'deny')).json.id;
    const c = (await rule(p2, '10.0.0.0/8', 'deny')).json.id;
    const q = async (f: string) =>
      (
        await call('GET', `/ip_policy_rules?filter=${encodeURIComponent(f)}`)
      ).json.ip_policy_rules?.map((r: { id: string }) => r.id);
    expect(await q(`obj.ip_policy.id == '${p1}'`)).toEqual([b, a]);
    expect(await q("obj.action == 'deny'")).toEqual([c, b]);
    expect(await q("obj.cidr == '10.0.0.0/8' && obj.action == 'deny'")).toEqual([c]);
    const paged = await call(
      'GET',
      `/ip_policy_rules?limit=1&filter=${encodeURIComponent("obj.action == 'deny'")}`,
    );
    expect(paged.json.next_page_uri).toBe(
      `${server.url}/ip_policy_rules?before_id=${c}&limit=1&${new URLSearchParams({ filter: "obj.action == 'deny'" })}`,
    );
    const refused = await call(
      'GET',
      `/ip_policy_rules?filter=${encodeURIComponent('obj.uri == ""')}`,
    );
    expect([refused.status, refused.json.error_code]).toEqual([400, 'invalid_cel_expression']);
  });
});

describe("an endpoint's restrict-ips and the account's IP policies", () => {
  const policyText = (ids: string[]) =>
    JSON.stringify({
      on_http_request: [
        { actions: [{ type: 'restrict-ips', config: { enforce: true, ip_policies: ids } }] },
        { actions: [{ type: 'custom-response', config: { status_code: 200 } }] },
      ],
    });

  it('refuses a policy naming an ipp_ the account does not have (2216), on create and update', async () => {
    const known = await policy();
    const theirs = (await other('POST', '/ip_policies', {})).json.id;
    const missing = `ipp_${'0'.repeat(27)}`;
    for (const ids of [[missing], [known, missing], [theirs]]) {
      const res = await call('POST', '/endpoints', {
        url: 'https://restricted.example.com',
        traffic_policy: policyText(ids),
      });
      expect([res.status, res.json.error_code]).toEqual([400, 'ERR_SVC_2216']);
    }
    const ok = await call('POST', '/endpoints', {
      url: 'https://restricted.example.com',
      traffic_policy: policyText([known]),
    });
    expect(ok.status).toBe(201);
    const update = await call('PATCH', `/endpoints/${ok.json.id}`, {
      traffic_policy: policyText([missing]),
    });
    expect([update.status, update.json.error_code]).toEqual([400, 'ERR_SVC_2216']);
    // Deleting a policy an endpoint names succeeds; the endpoint keeps its policy text.
    expect((await call('DELETE', `/ip_policies/${known}`)).status).toBe(204);
    expect((await call('GET', `/endpoints/${ok.json.id}`)).json.traffic_policy).toBe(
      policyText([known]),
    );
    expect((await call('DELETE', `/endpoints/${ok.json.id}`)).status).toBe(204);
  });
});
