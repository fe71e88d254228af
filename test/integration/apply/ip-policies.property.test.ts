/**
 * IP policies under random manifests, one local server for the whole run: sets of policies
 * whose rules mix ranges the service takes with ones it refuses (not the lowest address, no
 * mask, the same range twice however written, an unknown action), and an endpoint naming some
 * of them by `{ ref }` (sometimes a name no policy has). Whenever `validate` accepts a set, an
 * apply against the current state of the account (whatever the previous set left) gets no 4xx
 * at all, counted at the server, and the next plan is empty: validate ⇒ no 4xx, and every
 * transition between policies and rules (flips, removals, moves of the endpoint) converges.
 */
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { buildPlan } from '../../../src/plan/plan.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, tempDir, writeManifests } from './helpers.js';

let server: RunningServer & { apiKey: string };
let client: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  server = await startTestServer();
  client = apiClient(server.url, server.apiKey);
  tmp = await tempDir('edgesync-ipp-prop-');
});
afterAll(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

const CIDRS = [
  '10.0.0.0/8',
  '10.1.0.0/16',
  '192.0.2.0/24',
  '198.51.100.7/32',
  '2001:db8::/32',
  '2001:DB8:0::/32', // the same range as the one above
  '2001:db8:1::/48',
  // Refused by the service: not the lowest address, no mask, invalid.
  '10.1.2.3/8',
  '198.51.100.7',
  '300.0.0.0/8',
];
const ACTIONS = ['allow', 'allow', 'deny', 'deny', 'permit'];
const NAMES = ['office', 'vpn', 'lab'];

const rule = fc.record(
  {
    cidr: fc.constantFrom(...CIDRS),
    action: fc.constantFrom(...ACTIONS),
    description: fc.constantFrom('HQ', 'one host', 'x'.repeat(256)),
  },
  { requiredKeys: ['cidr', 'action'] },
);

const policies = fc.uniqueArray(
  fc.record({ name: fc.constantFrom(...NAMES), rules: fc.array(rule, { maxLength: 4 }) }),
  { selector: (p) => p.name, maxLength: 3 },
);

const refs = fc.uniqueArray(fc.constantFrom(...NAMES, 'nowhere'), { maxLength: 2 });

const endpoint = (names: string[]) => ({
  kind: 'CloudEndpoint',
  name: 'app',
  url: 'https://app.example.com',
  traffic_policy: {
    on_http_request: [
      ...(names.length === 0
        ? []
        : [
            {
              actions: [
                {
                  type: 'restrict-ips',
                  config: { enforce: true, ip_policies: names.map((ref) => ({ ref })) },
                },
              ],
            },
          ]),
      { actions: [{ type: 'forward-internal', config: { url: 'https://app.internal' } }] },
    ],
  },
});

const refused = () =>
  Object.entries(server.statuses)
    .filter(([status]) => status.startsWith('4'))
    .reduce((n, [, count]) => n + count, 0);

it('validate ⇒ no 4xx, and every accepted set converges in one apply', async () => {
  let accepted = 0;
  let step = 0;
  await fc.assert(
    fc.asyncProperty(policies, refs, fc.boolean(), async (ps, names, withEndpoint) => {
      step += 1;
      const dir = path.join(tmp.dir, `s${step}`);
      const docs: Record<string, unknown>[] = ps.map((p) => ({ kind: 'IPPolicy', ...p }));
      if (withEndpoint) docs.push(endpoint(names));
      await writeManifests(dir, docs);
      const loaded = await loadManifests(dir, {});
      if (!loaded.ok) return;
      accepted += 1;
      const before = refused();
      const options = { allowEmpty: true };
      const live = await observe(client);
      const plan = buildPlan(loaded.set, live, options);
      await applyAndVerify(plan, {
        client,
        live,
        replan: async () => {
          const again = await observe(client);
          return { live: again, plan: buildPlan(loaded.set, again, options) };
        },
      });
      expect(refused()).toBe(before);
      const next = buildPlan(loaded.set, await observe(client), options);
      expect(next.changes.filter((c) => c.action !== 'noop')).toEqual([]);
      expect(next.blocked).toEqual([]);
    }),
    { numRuns: 40, seed: 3636, endOnFailure: true },
  );
  // The generators reach both sides: some sets are accepted and applied.
  expect(accepted).toBeGreaterThan(5);
}, 120_000);
