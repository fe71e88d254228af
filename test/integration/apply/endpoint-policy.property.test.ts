/**
 * Cloud endpoints converge whatever form their policy takes, property-based against the local
 * server over HTTP: a generated set (policies from the specification's table, written as YAML
 * mappings, YAML strings or JSON strings, secrets literal or `{ env }`) converges in one CLI
 * apply; then each live policy re-sent by hand as the same data in another format (JSON
 * compact or indented with keys reversed, YAML block or flow, with comments) and each manifest
 * rewritten in another form: the plan is empty and another apply writes nothing.
 */
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { residualOf } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
import {
  type CloudEndpointCase,
  cloudEndpointSet,
  envOf,
  manifestDoc,
  resolvedPolicy,
} from '../../helpers/arbitraries/cloud-endpoint.js';
import { NAMED_IP_POLICIES } from '../../helpers/live-ip-policies.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

const FORMATS = ['json', 'json-indented-reversed', 'yaml-block', 'yaml-flow-commented'] as const;
type Format = (typeof FORMATS)[number];
const FORMS = ['mapping', 'yaml', 'json'] as const;

/** Keys in reverse order at every level (same data). */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversed(v)]),
  );
}

/** The policy's data as a person might write it by hand. */
function byHand(data: unknown, format: Format): string {
  switch (format) {
    case 'json':
      return JSON.stringify(data);
    case 'json-indented-reversed':
      return JSON.stringify(reversed(data), null, 4);
    case 'yaml-block':
      return `# edited by hand\n${stringify(reversed(data), { indent: 4 })}`;
    case 'yaml-flow-commented':
      return `# flow style\n${stringify(data, { collectionStyle: 'flow' })}# end\n`;
  }
}

describe('cloud endpoint policies: any form, same data, no operation', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    tmp = await tempDir('edgesync-ce-policy-');
  });
  afterAll(async () => {
    await tmp.cleanup();
  });

  it('converges in one apply; re-formatted live policies and rewritten manifests are no-ops', async () => {
    let run = 0;
    let edited = 0;
    await fc.assert(
      fc.asyncProperty(
        cloudEndpointSet({ maxLength: 3 }).filter((cs) => cs.length > 0),
        fc.array(fc.constantFrom(...FORMATS), { minLength: 3, maxLength: 3 }),
        fc.array(fc.constantFrom(...FORMS), { minLength: 3, maxLength: 3 }),
        async (cases, formats, forms) => {
          run += 1;
          const server = await startTestServer({ ipPolicies: NAMED_IP_POLICIES });
          const client = apiClient(server.url, server.apiKey);
          const env = { ...envOf(cases), ...apiEnv(server.url, server.apiKey) };
          const dir = path.join(tmp.dir, `run${run}`);
          try {
            await writeManifests(dir, cases.map(manifestDoc));
            const applied = await runCli(['apply', '--yes', dir], { env });
            expect(applied.code, applied.stderr).toBe(0);
            expect(applied.stderr).toContain('converged');

            // Each live policy re-sent by hand: the same data in another format.
            const live = await snapshotOf(server.url, server.apiKey);
            const byName = new Map(cases.map((c, i) => [c.name, i]));
            for (const e of live.cloudEndpoints) {
              const i = byName.get(parseStoredMetadata(e.metadata)?.name ?? '') as number;
              const c = cases[i] as CloudEndpointCase;
              const text = byHand(resolvedPolicy(c), formats[i] as Format);
              await client.updateEndpoint(e.id, { traffic_policy: text });
              edited += 1;
            }
            // And each manifest rewritten with its policy in another form.
            const rewritten: CloudEndpointCase[] = cases.map((c, i) => ({
              ...c,
              policyAs: forms[i] ?? c.policyAs,
            }));
            await writeManifests(dir, rewritten.map(manifestDoc));
            const after = await snapshotOf(server.url, server.apiKey);
            const loaded = await loadManifests(dir, { env: envOf(rewritten) });
            if (!loaded.ok) throw new Error('generated manifests are invalid');
            const residual = residualOf(buildPlan(loaded.set, after), after);
            expect(residual.changes).toEqual([]);
            expect(residual.blocked).toEqual([]);

            const writes = writesAt(server);
            const again = await runCli(['apply', '--yes', dir], {
              env: { ...envOf(rewritten), ...apiEnv(server.url, server.apiKey) },
            });
            expect(again.code, again.stderr).toBe(0);
            expect(writesAt(server)).toBe(writes);
          } finally {
            await client.close();
            await server.close();
          }
        },
      ),
      { numRuns: 20 },
    );
    expect(edited).toBeGreaterThan(20);
  }, 120_000);
});
