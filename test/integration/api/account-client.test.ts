/**
 * The typed client's IP policy, rule, vault and secret methods against the real local server
 * over HTTP: each round trip checked by the client's read schemas, the account-wide lists of
 * rules and secrets and a vault's own secret list paged to the end with their call counts, the
 * service's refusals as ApiErrors with their codes, and no secret value in any answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import { ApiError, isNotFound } from '../../../src/errors.js';
import { startTestServer } from '../../helpers/server.js';

let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ApiClient;

beforeAll(async () => {
  server = await startTestServer();
  client = createApiClient({ baseUrl: server.url, apiKey: server.apiKey, retry: false });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const codeOf = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return (err as ApiError).errorCode;
};

describe('IP policies and rules through the client', () => {
  it('round-trips a policy and its rules, listing rules account-wide page by page', async () => {
    const policy = await client.createIpPolicy({ description: 'office' });
    expect(policy).toMatchObject({ id: expect.stringMatching(/^ipp_/), description: 'office' });
    expect(await client.getIpPolicy(policy.id)).toEqual(policy);
    const other = await client.createIpPolicy({});
    expect(other.description).toBeUndefined();
    for (let i = 0; i < 5; i++) {
      await client.createIpPolicyRule({
        ip_policy_id: i < 3 ? policy.id : other.id,
        cidr: `10.0.${i}.0/24`,
        action: i % 2 === 0 ? 'allow' : 'deny',
      });
    }
    const rules = await client.listIpPolicyRules({ pageSize: 2 });
    expect(rules.calls).toBe(3);
    expect(rules.items.map((r) => r.cidr)).toEqual([4, 3, 2, 1, 0].map((i) => `10.0.${i}.0/24`));
    expect(rules.items.filter((r) => r.ip_policy.id === policy.id)).toHaveLength(3);
    const first = rules.items[4];
    if (first === undefined) throw new Error('no rule');
    const updated = await client.updateIpPolicyRule(first.id, { description: 'HQ' });
    expect(updated).toMatchObject({ id: first.id, description: 'HQ', action: 'allow' });
    expect(
      await codeOf(
        client.createIpPolicyRule({ ip_policy_id: policy.id, cidr: '10.0.0.0/24', action: 'deny' }),
      ),
    ).toBe('ERR_SVC_1408');
    await client.deleteIpPolicyRule(first.id);
    expect(isNotFound(await client.getIpPolicyRule(first.id).catch((e: unknown) => e))).toBe(true);
    expect((await client.updateIpPolicy(other.id, { metadata: 'm' })).metadata).toBe('m');
    await client.deleteIpPolicy(other.id);
    expect((await client.listIpPolicies()).items.map((p) => p.id)).toEqual([policy.id]);
    expect((await client.listIpPolicyRules()).items).toHaveLength(2);
  });
});

describe('vaults and secrets through the client', () => {
  it('round-trips a vault and its secrets, never reading a value back', async () => {
    const vault = await client.createVault({ name: 'hooks' });
    const spare = await client.createVault({ name: 'spare' });
    expect(await client.getVault(vault.id)).toEqual(vault);
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        await client.createVaultSecret({ name: `s${i}`, vault_id: vault.id, value: `v-${i}-xyz` }),
      );
    }
    made.push(await client.createVaultSecret({ name: 'x', vault_name: 'spare', value: 'v-3-xyz' }));
    for (const s of made) expect(JSON.stringify(s)).not.toMatch(/v-\d-xyz|value/);
    const all = await client.listSecrets({ pageSize: 3 });
    expect([all.calls, all.items.length]).toEqual([2, 4]);
    const inVault = await client.listVaultSecrets(vault.id, { pageSize: 2 });
    expect(inVault.calls).toBe(2);
    expect(inVault.items.map((s) => s.name)).toEqual(['s2', 's1', 's0']);
    const s0 = made[0];
    if (s0 === undefined) throw new Error('no secret');
    const changed = await client.updateVaultSecret(s0.id, { value: 'v-new-xyz' });
    expect(Date.parse(changed.updated_at)).toBeGreaterThan(Date.parse(s0.updated_at));
    // The client reads Refs by ID (URIs are dropped, as for every record).
    expect(changed.vault).toEqual({ id: vault.id });
    expect(await codeOf(client.deleteVault(vault.id))).toBe('ERR_SVC_23003');
    expect(await codeOf(client.createVault({ name: 'hooks' }))).toBe('ERR_SVC_23004');
    expect((await client.updateVault(spare.id, { name: 'spare2' })).name).toBe('spare2');
    expect((await client.getVaultSecret(made[3]?.id ?? '')).vault_name).toBe('spare2');
    for (const s of made) await client.deleteVaultSecret(s.id);
    await client.deleteVault(vault.id);
    expect((await client.listVaults()).items.map((v) => v.id)).toEqual([spare.id]);
  });
});
