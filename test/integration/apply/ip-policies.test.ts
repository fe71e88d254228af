/**
 * IP policies with their rules against the local server over HTTP, from manifests on disk: a
 * policy with rules and an endpoint naming it by `{ ref }` converge in one apply (the policy and
 * its rules before the endpoint, whose policy carries the `ipp_` ID), the next plan is empty; a
 * rule's action flipped is deleted then created (never a 1408); an endpoint moved to another
 * policy gets the new one first and the old one is deleted after it; removing the endpoint and
 * the policy deletes the endpoint first; a policy a live endpoint still names is not deleted;
 * import writes a policy with its rules that plans as nothing to do.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import type { ProgressEvent } from '../../../src/apply/executor.js';
import { importLive } from '../../../src/apply/import.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { buildPlan } from '../../../src/plan/plan.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, tempDir, writeManifests } from './helpers.js';

let server: RunningServer & { apiKey: string };
let client: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  server = await startTestServer();
  client = apiClient(server.url, server.apiKey);
  tmp = await tempDir('edgesync-ipp-');
});
afterEach(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

const refused = () => Object.entries(server.statuses).filter(([s]) => s.startsWith('4'));

const policy = (name: string, rules: Record<string, unknown>[], extra = {}) => ({
  kind: 'IPPolicy',
  name,
  description: `${name} networks`,
  rules,
  ...extra,
});

const endpoint = (refs: string[]) => ({
  kind: 'CloudEndpoint',
  name: 'app',
  url: 'https://app.example.com',
  traffic_policy: {
    on_http_request: [
      {
        actions: [
          {
            type: 'restrict-ips',
            config: { enforce: true, ip_policies: refs.map((ref) => ({ ref })) },
          },
        ],
      },
      { actions: [{ type: 'forward-internal', config: { url: 'https://app.internal' } }] },
    ],
  },
});

const OFFICE_RULES = [
  { cidr: '203.0.113.0/24', action: 'allow', description: 'HQ' },
  { cidr: '198.51.100.7/32', action: 'deny' },
  { cidr: '2001:DB8::/32', action: 'allow' },
];

/** Loads the directory, plans against the live account, applies; returns the progress seen. */
async function apply(docs: Record<string, unknown>[], planOptions: { allowEmpty?: boolean } = {}) {
  const dir = path.join(tmp.dir, 'm');
  await writeManifests(dir, docs);
  const loaded = await loadManifests(dir, {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
  const live = await observe(client);
  const plan = buildPlan(loaded.set, live, planOptions);
  const events: ProgressEvent[] = [];
  const outcome = await applyAndVerify(plan, {
    client,
    live,
    onProgress: (e: ProgressEvent) => events.push(e),
    replan: async () => {
      const again = await observe(client);
      return { live: again, plan: buildPlan(loaded.set, again, planOptions) };
    },
  });
  const after = await observe(client);
  const next = buildPlan(loaded.set, after, planOptions);
  return { plan, outcome, events, after, next };
}

const pending = (p: ReturnType<typeof buildPlan>) => p.changes.filter((c) => c.action !== 'noop');

describe('IP policies over HTTP', () => {
  it('a policy with rules and an endpoint naming it converge in one apply, in order', async () => {
    const { events, after, next } = await apply([
      policy('office', OFFICE_RULES),
      endpoint(['office']),
    ]);
    expect(refused()).toEqual([]);
    expect(pending(next)).toEqual([]);
    expect(next.blocked).toEqual([]);
    // The policy's POST, its three rules, then the endpoint.
    const order = events.map((e) => `${e.method} ${e.path.split('/')[1]}`);
    expect(order).toEqual([
      'POST ip_policies',
      'POST ip_policy_rules',
      'POST ip_policy_rules',
      'POST ip_policy_rules',
      'POST endpoints',
    ]);
    const policies = after.resources?.ip_policy ?? [];
    expect(policies).toHaveLength(1);
    const id = policies[0]?.id as string;
    expect(id).toMatch(/^ipp_/);
    expect(after.resources?.ip_policy_rule?.map((r) => r.cidr).sort()).toEqual([
      '198.51.100.7/32',
      '2001:DB8::/32',
      '203.0.113.0/24',
    ]);
    const ep = after.cloudEndpoints[0];
    expect(JSON.parse(ep?.traffic_policy ?? '{}').on_http_request[0].actions[0].config).toEqual({
      enforce: true,
      ip_policies: [id],
    });
    // The rules listed once, account-wide.
    expect(after.calls.ip_policy_rule).toBe(1);
    expect(after.calls.ip_policy).toBe(1);
  });

  it('a flipped action is deleted then created (no 1408); deny first, descriptions last', async () => {
    await apply([policy('office', OFFICE_RULES)]);
    const changed = [
      { cidr: '203.0.113.0/24', action: 'deny', description: 'HQ' }, // flips
      { cidr: '198.51.100.7/32', action: 'deny', description: 'one host' }, // description
      { cidr: '192.0.2.0/24', action: 'allow' }, // new allow
      { cidr: '10.0.0.0/8', action: 'deny' }, // new deny
      // 2001:db8::/32 removed
    ];
    const { plan, events, next } = await apply([policy('office', changed)]);
    expect(refused()).toEqual([]);
    expect(pending(next)).toEqual([]);
    const rules = plan.changes.find((c) => c.kind === 'ip_policy_rule');
    expect(rules?.operations.map((o) => o.description)).toEqual([
      'create deny 10.0.0.0/8 in ip_policy.office',
      'delete allow 203.0.113.0/24 from ip_policy.office',
      'create deny 203.0.113.0/24 in ip_policy.office',
      'create allow 192.0.2.0/24 in ip_policy.office',
      'delete allow 2001:DB8::/32 from ip_policy.office',
      'update deny 198.51.100.7/32 in ip_policy.office',
    ]);
    expect(events.map((e) => e.outcome)).toEqual(Array(6).fill('ok'));
  });

  it('a range written otherwise is the same rule: no change', async () => {
    await apply([policy('office', OFFICE_RULES)]);
    const same = OFFICE_RULES.map((r) =>
      r.cidr === '2001:DB8::/32' ? { ...r, cidr: '2001:db8:0::/32' } : r,
    );
    const { plan } = await apply([policy('office', same)]);
    expect(pending(plan)).toEqual([]);
  });

  it('moving an endpoint to another policy: the new one first, the old one deleted after', async () => {
    await apply([policy('office', OFFICE_RULES), endpoint(['office'])]);
    const { plan, events, next } = await apply([
      policy('vpn', [{ cidr: '100.64.0.0/10', action: 'allow' }]),
      endpoint(['vpn']),
    ]);
    expect(refused()).toEqual([]);
    expect(pending(next)).toEqual([]);
    expect(events.map((e) => `${e.method} ${e.path.split('/')[1]}`)).toEqual([
      'POST ip_policies',
      'POST ip_policy_rules',
      'PATCH endpoints',
      'DELETE ip_policies',
    ]);
    expect(plan.blocked).toEqual([]);
  });

  it('removing the endpoint and the policy deletes the endpoint first', async () => {
    await apply([policy('office', OFFICE_RULES), endpoint(['office'])]);
    // An empty directory deletes what it owned only when told to (--allow-empty).
    const { events, after, next } = await apply([], { allowEmpty: true });
    expect(refused()).toEqual([]);
    expect(events.map((e) => `${e.method} ${e.path.split('/')[1]}`)).toEqual([
      'DELETE endpoints',
      'DELETE ip_policies',
    ]);
    expect(after.resources?.ip_policy).toEqual([]);
    expect(pending(next)).toEqual([]);
  });

  it('a policy a live endpoint still names is not deleted', async () => {
    await apply([policy('office', OFFICE_RULES), endpoint(['office'])]);
    const live = await observe(client);
    const id = live.resources?.ip_policy?.[0]?.id as string;
    const epId = live.cloudEndpoints[0]?.id as string;
    // The endpoint now names the policy by its raw ID, and the policy's manifest is gone.
    const byId = endpoint([]);
    const action = byId.traffic_policy.on_http_request[0]?.actions[0] as { config: unknown };
    action.config = { enforce: true, ip_policies: [id] };
    const { plan, after } = await apply([byId]);
    expect(plan.changes.filter((c) => c.kind === 'ip_policy' && c.action !== 'noop')).toEqual([]);
    expect(plan.blocked.find((b) => b.address === 'ip_policy.office')?.reason).toContain(
      `${id}: still named by live ${epId}`,
    );
    expect(after.resources?.ip_policy?.map((p) => p.id)).toEqual([id]);
    expect(refused()).toEqual([]);
  });

  it('import writes the policy with its rules, which plans as nothing to do', async () => {
    await apply([policy('office', OFFICE_RULES)]);
    const live = await observe(client);
    const imported = importLive(live, { owner: 'default', schemaUrl: 'schema.json' });
    const file = imported.files.find((f) => f.kind === 'IPPolicy');
    expect(file?.text).toContain('cidr: 2001:DB8::/32');
    const dir = path.join(tmp.dir, 'imported');
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    for (const f of imported.files) await writeFile(path.join(dir, f.file), f.text);
    const loaded = await loadManifests(dir, {});
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
    expect(pending(buildPlan(loaded.set, live))).toEqual([]);
  });
});
