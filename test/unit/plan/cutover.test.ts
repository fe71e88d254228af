/**
 * The cut-over from edges to cloud endpoints in the plan: edges being deleted whose hosts and
 * ports endpoints claim go to phase `cutover` with those creates (no release PATCH), listed in
 * `cutovers` in execution order and shown in that order by the three renderers; an edge that
 * also releases a hostport to another edge keeps that release PATCH; the executor's units.
 */
import { describe, expect, it } from 'vitest';
import { cutoverUnits } from '../../../src/apply/cutover.js';
import { maskPlan } from '../../../src/plan/mask.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderJson } from '../../../src/plan/render/json.js';
import { renderMarkdown } from '../../../src/plan/render/markdown.js';
import { renderText } from '../../../src/plan/render/text.js';
import {
  desiredSet,
  endpointManifest,
  liveHttps,
  liveState,
  liveTls,
  tlsManifest,
} from './builders.js';

function migrated() {
  return buildPlan(
    desiredSet({
      endpoints: [
        endpointManifest({ name: 'b', url: 'https://b.example.com' }),
        endpointManifest({ name: 'a2', url: 'https://a2.example.com' }),
        endpointManifest({ name: 'a1', url: 'https://a1.example.com' }),
      ],
    }),
    liveState({
      https: [
        liveHttps({ id: 'edghts_b', name: 'b', hostports: ['b.example.com:443'] }),
        liveHttps({
          id: 'edghts_a',
          name: 'a',
          hostports: ['a1.example.com:443', 'a2.example.com:443'],
        }),
      ],
    }),
  );
}

const opsOf = (plan: ReturnType<typeof migrated>) =>
  plan.changes.flatMap((c) => c.operations.map((o) => `${o.phase} ${o.method} ${o.path}`));

describe('plan: the cut-over', () => {
  it('deletes each edge in phase cutover (no release PATCH) and lists the pairs in order', () => {
    const plan = migrated();
    expect(opsOf(plan).sort()).toEqual([
      'cutover DELETE /edges/https/edghts_a',
      'cutover DELETE /edges/https/edghts_b',
      'cutover POST /endpoints',
      'cutover POST /endpoints',
      'cutover POST /endpoints',
    ]);
    expect(plan.cutovers).toEqual([
      {
        edge: 'https_edge.a',
        id: 'edghts_a',
        endpoints: [
          {
            address: 'cloud_endpoint.a1',
            url: 'https://a1.example.com',
            hostport: 'a1.example.com:443',
          },
          {
            address: 'cloud_endpoint.a2',
            url: 'https://a2.example.com',
            hostport: 'a2.example.com:443',
          },
        ],
      },
      {
        edge: 'https_edge.b',
        id: 'edghts_b',
        endpoints: [
          {
            address: 'cloud_endpoint.b',
            url: 'https://b.example.com',
            hostport: 'b.example.com:443',
          },
        ],
      },
    ]);
  });

  it('a hostport another edge claims is still released by a PATCH first', () => {
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'new', hostports: ['k.example.com:443'] })],
        endpoints: [endpointManifest({ name: 'h', url: 'tls://h.example.com:443' })],
      }),
      liveState({
        tls: [
          liveTls({
            id: 'edgtls_1',
            name: 'old',
            hostports: ['h.example.com:443', 'k.example.com:443'],
          }),
        ],
      }),
    );
    const old = plan.changes.find((c) => c.address === 'tls_edge.old');
    expect(old?.operations.map((o) => `${o.phase} ${o.method}`)).toEqual([
      'release PATCH',
      'cutover DELETE',
    ]);
    expect(old?.operations[0]?.body).toEqual({ hostports: ['h.example.com:443'] });
    expect(plan.cutovers?.map((c) => c.edge)).toEqual(['tls_edge.old']);
  });

  it('no cut-over without an edge being deleted', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [endpointManifest({ name: 'h', url: 'https://h.example.com' })] }),
      liveState({}),
    );
    expect(plan.cutovers).toBeUndefined();
    expect(renderText(maskPlan(plan, []))).not.toContain('Cut-over');
  });
});

describe('renderers: the cut-over in order', () => {
  const masked = maskPlan(migrated(), []);

  it('text', () => {
    const text = renderText(masked);
    expect(text).toContain(
      [
        'Cut-over to cloud endpoints (one edge at a time, in this order):',
        '',
        '  1. - delete https_edge.a (edghts_a)',
        '     + then create cloud_endpoint.a1 https://a1.example.com (takes over a1.example.com:443)',
        '     + then create cloud_endpoint.a2 https://a2.example.com (takes over a2.example.com:443)',
        '  2. - delete https_edge.b (edghts_b)',
        '     + then create cloud_endpoint.b https://b.example.com (takes over b.example.com:443)',
      ].join('\n'),
    );
  });

  it('Markdown', () => {
    const md = renderMarkdown(masked);
    expect(md).toContain('**Cut-over to cloud endpoints (one edge at a time, in this order)**');
    expect(md).toContain(
      '1. - delete https_edge.a (edghts_a); + then create cloud_endpoint.a1 https://a1.example.com (takes over a1.example.com:443); + then create cloud_endpoint.a2 https://a2.example.com (takes over a2.example.com:443)',
    );
    expect(md.indexOf('1. - delete https_edge.a')).toBeLessThan(
      md.indexOf('2. - delete https_edge.b'),
    );
  });

  it('JSON', () => {
    const json = JSON.parse(renderJson(masked)) as { cutovers: { edge: string }[] };
    expect(json.cutovers.map((c) => c.edge)).toEqual(['https_edge.a', 'https_edge.b']);
  });
});

describe('executor: cut-over units', () => {
  it('each edge with the endpoints that wait for it, in plan order', () => {
    const plan = migrated();
    const steps = plan.changes.flatMap((change) => change.operations.map((op) => ({ change, op })));
    const units = cutoverUnits(steps).map((u) => ({
      root: u.root,
      lead: u.lead.map((s) => s.op.method),
      follow: u.follow.map((list) => list.map((s) => s.change.address)),
    }));
    expect(units).toEqual([
      {
        root: 'https_edge.a',
        lead: ['DELETE'],
        follow: [['cloud_endpoint.a1'], ['cloud_endpoint.a2']],
      },
      { root: 'https_edge.b', lead: ['DELETE'], follow: [['cloud_endpoint.b']] },
    ]);
  });
});
