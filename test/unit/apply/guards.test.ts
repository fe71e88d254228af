import { describe, expect, it } from 'vitest';
import { checkGuards, classifyBlocked } from '../../../src/apply/guards.js';
import { change, op, owned, plan, snapshot } from './fake.js';

describe('classifyBlocked', () => {
  const live = snapshot([
    { id: 'edghts_keep', metadata: owned('keep', 'default', true) },
    { id: 'edghts_plain', metadata: owned('plain') },
  ]);

  it.each([
    ['a protected edge whose manifest is gone is kept', 'https_edge.keep', 'guard', 'kept'],
    ['a max-deletes refusal is fatal', 'https_edge.plain', 'guard', 'fatal'],
    ['a foreign hostport conflict is a conflict', 'https_edge.new', 'conflict', 'conflicts'],
  ] as const)('%s', (_, address, kind, bucket) => {
    const p = plan([], { blocked: [{ address, kind, reason: 'r' }] });
    const out = classifyBlocked(p, live);
    expect(out[bucket]).toEqual([{ address, kind, reason: 'r' }]);
  });

  it('is fatal without a snapshot to tell a protected edge apart', () => {
    const p = plan([], { blocked: [{ address: 'https_edge.keep', kind: 'guard', reason: 'r' }] });
    expect(classifyBlocked(p, undefined).fatal).toHaveLength(1);
  });

  it('does not count a protected edge as kept when the plan still has a change for it', () => {
    const p = plan([change('https_edge.keep', [])], {
      blocked: [{ address: 'https_edge.keep', kind: 'guard', reason: 'r' }],
    });
    expect(classifyBlocked(p, live).fatal).toHaveLength(1);
  });

  it('reports kept and conflicts without refusing', () => {
    const p = plan([change('https_edge.plain', [op('PATCH', '/edges/https/edghts_plain')])], {
      blocked: [
        { address: 'https_edge.keep', kind: 'guard', reason: 'protected' },
        { address: 'https_edge.x', kind: 'conflict', reason: 'held' },
      ],
    });
    const verdict = checkGuards(p, { live });
    expect(verdict.refusals).toEqual([]);
    expect(verdict.kept).toHaveLength(1);
    expect(verdict.conflicts).toHaveLength(1);
  });
});

describe('endpoint guards', () => {
  const endpoint = (id: string, type: string, metadata: string) => ({
    id,
    type,
    url: `https://${id}.example.com`,
    created_at: '2024-01-01T00:00:00Z',
    metadata,
  });
  const live = {
    ...snapshot([]),
    cloudEndpoints: [
      endpoint('ep_agent', 'agent', owned('web')),
      endpoint('ep_foreign', 'cloud', owned('web', 'team-b')),
      endpoint('ep_kept', 'cloud', owned('kept', 'default', true)),
      endpoint('ep_mine', 'cloud', owned('mine')),
    ],
  };

  it.each([
    ['an agent endpoint', 'ep_agent', 'PATCH', /refusing to touch ep_agent, an agent endpoint/],
    ["another owner's", 'ep_foreign', 'PATCH', /owned by "team-b"/],
    ['a protected one, deleted', 'ep_kept', 'DELETE', /is protected/],
  ] as const)('refuses a write to %s', (_name, id, method, message) => {
    const p = plan([change('cloud_endpoint.web', [op(method, `/endpoints/${id}`)], { id })]);
    const verdict = checkGuards(p, { live });
    expect(verdict.refusals.join('\n')).toMatch(message);
  });

  it("lets this owner's endpoint be written, and counts its deletion for --max-deletes", () => {
    const del = op('DELETE', '/endpoints/ep_mine', { phase: 'delete' });
    const p = plan([change('cloud_endpoint.mine', [del], { id: 'ep_mine' })]);
    expect(checkGuards(p, { live }).refusals).toEqual([]);
    expect(checkGuards(p, { live, maxDeletes: 0 }).refusals.join()).toMatch(
      /more than --max-deletes 0/,
    );
  });
});
