/**
 * `release` writes through the executor: its releases become a plan of one metadata PATCH each,
 * which the executor's guards check like any other (only this owner's resources are touched).
 */
import { describe, expect, it } from 'vitest';
import { executePlan } from '../../../src/apply/executor.js';
import { checkGuards } from '../../../src/apply/guards.js';
import { planRelease, releasePlan } from '../../../src/apply/release.js';
import { GuardError } from '../../../src/errors.js';
import { fakeClient, owned, snapshot } from './fake.js';

const live = snapshot([
  { id: 'edghts_1', metadata: owned('web') },
  { id: 'edghts_2', metadata: owned('web') },
  { id: 'edghts_3', metadata: owned('api', 'team-b') },
]);

describe('releasePlan', () => {
  it('is one PATCH of metadata per released resource, each its own root, duplicates too', () => {
    const { releases } = planRelease([{ kind: 'https_edge', name: 'web' }], live, 'default');
    const plan = releasePlan('default', releases);
    expect(plan.changes.map((c) => [c.address, c.root, c.name, c.id])).toEqual([
      ['https_edge.web#edghts_1', 'https_edge.web#edghts_1', 'web', 'edghts_1'],
      ['https_edge.web#edghts_2', 'https_edge.web#edghts_2', 'web', 'edghts_2'],
    ]);
    expect(
      plan.changes.flatMap((c) => c.operations.map((o) => [o.method, o.path, o.body])),
    ).toEqual([
      ['PATCH', '/edges/https/edghts_1', { metadata: '' }],
      ['PATCH', '/edges/https/edghts_2', { metadata: '' }],
    ]);
    expect(plan.summary.update).toBe(2);
    expect(checkGuards(plan, { live }).refusals).toEqual([]);
  });

  it("runs through the executor, whose guards refuse another owner's edge", async () => {
    const plan = releasePlan('default', [
      { address: 'https_edge.api', kind: 'https_edge', id: 'edghts_3', metadata: '' },
    ]);
    const { client, calls } = fakeClient();
    const err = await executePlan(plan, { client, guards: { live } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GuardError);
    expect((err as Error).message).toMatch(/owned by "team-b"/);
    expect(calls).toEqual([]);
  });

  it('sends the PATCH of a cloud endpoint to the endpoint', async () => {
    const plan = releasePlan('default', [
      { address: 'cloud_endpoint.site', kind: 'cloud_endpoint', id: 'ep_1', metadata: '{"a":"1"}' },
    ]);
    const { client, calls } = fakeClient();
    const result = await executePlan(plan, { client });
    expect(result.writes).toBe(1);
    expect(calls.map((c) => [c.fn, c.args[0], c.args[1]])).toEqual([
      ['updateEndpoint', 'ep_1', { metadata: '{"a":"1"}' }],
    ]);
  });
});
