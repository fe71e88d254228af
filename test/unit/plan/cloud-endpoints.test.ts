/**
 * The planner's cloud endpoints, table-driven on plain builders: ownership (agent, foreign and
 * unowned endpoints never touched), the policy compared as data, URLs compared normalised, the
 * service's defaults, replacement on a URL change, protect and suspend, the deletion guards
 * counted with the edges, the ordering after an edge that releases the host and port, and
 * masking in every renderer.
 */
import { describe, expect, it } from 'vitest';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { liveSecretValues, secretValues } from '../../../src/manifest/secrets.js';
import { maskPlan } from '../../../src/plan/mask.js';
import type { Plan } from '../../../src/plan/model.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderJson } from '../../../src/plan/render/json.js';
import { renderMarkdown } from '../../../src/plan/render/markdown.js';
import { renderText } from '../../../src/plan/render/text.js';
import {
  DENY_POLICY,
  desiredSet,
  endpointManifest,
  liveEndpoint,
  liveHttps,
  liveState,
  liveTls,
  tlsManifest,
} from './builders.js';

function ops(plan: Plan): string[] {
  return plan.changes.flatMap((c) => c.operations.map((o) => `${o.phase} ${o.method} ${o.path}`));
}

function change(plan: Plan, address: string) {
  const c = plan.changes.find((x) => x.address === address);
  if (c === undefined) throw new Error(`no change ${address}`);
  return c;
}

const web = (extra: Record<string, unknown> = {}) =>
  endpointManifest({ name: 'web', url: 'https://web.example.com', ...extra });
/** The live record applying `web()` leaves (what the planner sends, as the server stores it). */
const webLive = (extra: Parameters<typeof liveEndpoint>[0] | object = {}) =>
  liveEndpoint({ id: 'ep_web', url: 'https://web.example.com', name: 'web', ...extra });

const YAML_POLICY = `
on_http_request:
  -   actions:
        - type:   deny
`;

describe('cloud endpoints: no-op whatever the service returns', () => {
  const cases: [string, ReturnType<typeof web>, ReturnType<typeof liveEndpoint>][] = [
    ['the same data', web(), webLive()],
    ['the policy written by hand as YAML', web(), webLive({ traffic_policy: YAML_POLICY })],
    [
      'keys in another order, other whitespace',
      web({
        traffic_policy: {
          on_http_request: [{ name: 'n', expressions: ['true'], actions: [{ type: 'deny' }] }],
        },
      }),
      webLive({
        traffic_policy:
          '{ "on_http_request" : [ { "actions":[{"type":"deny"}], "expressions":["true"], "name":"n" } ] }',
      }),
    ],
    [
      'legacy phase name live',
      web(),
      webLive({ traffic_policy: 'inbound:\n  - actions: [{ type: deny }]\n' }),
    ],
    [
      'legacy phase name desired',
      web({ traffic_policy: { inbound: DENY_POLICY.on_http_request } }),
      webLive(),
    ],
    [
      'a URL not in normalised form desired',
      { ...web(), url: 'HTTPS://Web.Example.com:443' },
      webLive(),
    ],
    [
      'defaults omitted live (bindings, pooling, description, labels)',
      web(),
      (() => {
        const { bindings: _b, pooling_enabled: _p, ...rest } = webLive();
        return rest;
      })(),
    ],
  ];
  it.each(cases)('%s: zero operations', (_name, desired, live) => {
    const plan = buildPlan(desiredSet({ endpoints: [desired] }), liveState({ endpoints: [live] }));
    expect(ops(plan)).toEqual([]);
    expect(change(plan, 'cloud_endpoint.web').action).toBe('noop');
  });
});

describe('cloud endpoints: changes', () => {
  it('creates with one POST carrying the policy as JSON, owner keys in metadata', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web({ metadata: { team: 'a' } })] }),
      liveState(),
    );
    const c = change(plan, 'cloud_endpoint.web');
    expect(c.action).toBe('create');
    expect(ops(plan)).toEqual(['main POST /endpoints']);
    expect(c.operations[0]?.body).toEqual({
      url: 'https://web.example.com',
      traffic_policy: JSON.stringify(DENY_POLICY),
      metadata: storedMetadata({ team: 'a' }, { owner: 'default', name: 'web', protect: false }),
      bindings: ['public'],
      pooling_enabled: false,
    });
    expect(c.operations[0]?.binds).toBe('cloud_endpoint.web');
  });

  const patches: [string, Record<string, unknown>, Record<string, unknown>, object][] = [
    [
      'the policy',
      {
        traffic_policy: {
          on_http_request: [{ actions: [{ type: 'deny', config: { status_code: 404 } }] }],
        },
      },
      {},
      {
        traffic_policy: JSON.stringify({
          on_http_request: [{ actions: [{ type: 'deny', config: { status_code: 404 } }] }],
        }),
      },
    ],
    ['the description', { description: 'new' }, { description: 'old' }, { description: 'new' }],
    ['a removed description', {}, { description: 'old' }, { description: '' }],
    ['pooling', { pooling_enabled: true }, {}, { pooling_enabled: true }],
    [
      'the labels',
      { metadata: { team: 'b' } },
      { labels: { team: 'a' } },
      {
        metadata: storedMetadata({ team: 'b' }, { owner: 'default', name: 'web', protect: false }),
      },
    ],
    [
      'protect',
      { protect: true },
      {},
      { metadata: storedMetadata({}, { owner: 'default', name: 'web', protect: true }) },
    ],
  ];
  it.each(patches)('%s: one PATCH with only that field', (_name, desired, live, body) => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web(desired)] }),
      liveState({ endpoints: [webLive(live)] }),
    );
    const c = change(plan, 'cloud_endpoint.web');
    expect(c.action).toBe('update');
    expect(ops(plan)).toEqual(['main PATCH /endpoints/ep_web']);
    expect(c.operations[0]?.body).toEqual(body);
  });

  it('a URL change that keeps the scheme is an update: one PATCH with the URL, in place', () => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [web({ url: 'https://new.example.com:8443', bindings: ['internal'] })],
      }),
      liveState({ endpoints: [webLive()] }),
    );
    const c = change(plan, 'cloud_endpoint.web');
    expect(c.action).toBe('update');
    expect(ops(plan)).toEqual(['main PATCH /endpoints/ep_web']);
    expect(c.operations[0]?.body).toMatchObject({ url: 'https://new.example.com:8443' });
    expect(c.fields.find((f) => f.path === 'url')).toMatchObject({
      before: 'https://web.example.com',
      after: 'https://new.example.com:8443',
    });
    expect(plan.summary).toMatchObject({ create: 0, delete: 0, update: 1 });
    expect(renderText(maskPlan(plan, []))).toContain(
      '~ cloud_endpoint.web (ep_web) will be updated',
    );
  });

  it('a scheme change is a replacement: DELETE then POST, counted as a create and a delete', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web({ url: 'http://web.example.com' })] }),
      liveState({ endpoints: [webLive()] }),
    );
    const c = change(plan, 'cloud_endpoint.web');
    expect(c.action).toBe('replace');
    expect(c.reason).toMatch(/^url scheme changed/);
    expect(ops(plan)).toEqual(['main DELETE /endpoints/ep_web', 'main POST /endpoints']);
    expect(c.fields.find((f) => f.path === 'url')).toMatchObject({
      before: 'https://web.example.com',
      after: 'http://web.example.com',
    });
    expect(plan.summary).toMatchObject({ create: 1, delete: 1, update: 0 });
    const text = renderText(maskPlan(plan, []));
    expect(text).toContain('-/+ cloud_endpoint.web (ep_web) will be replaced');
    expect(renderMarkdown(maskPlan(plan, []))).toContain('| `-/+` |');
    expect(text).toContain('+ traffic_policy.on_http_request[0].actions[0].type = "deny"');
  });

  it.each([
    ['protect: true desired', { protect: true }, {}],
    ['protected live', {}, { protect: true }],
  ])('%s forbids a replacement, not a move in place', (_name, desired, live) => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web({ url: 'http://web.example.com', ...desired })] }),
      liveState({ endpoints: [webLive(live)] }),
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked).toEqual([
      expect.objectContaining({ address: 'cloud_endpoint.web', kind: 'conflict' }),
    ]);
    expect(plan.blocked[0]?.reason).toMatch(/protected/);
    const moved = buildPlan(
      desiredSet({ endpoints: [web({ url: 'https://new.example.com', ...desired })] }),
      liveState({ endpoints: [webLive(live)] }),
    );
    expect(ops(moved)).toEqual(['main PATCH /endpoints/ep_web']);
    expect(moved.blocked).toEqual([]);
  });

  it.each([
    ['exists', [webLive({ description: 'drifted' })]],
    ['is missing', []],
  ])('suspend: true leaves it alone when it %s', (_name, live) => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web({ suspend: true })] }),
      liveState({ endpoints: live }),
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.map((b) => b.kind)).toEqual(['suspended']);
  });
});

describe('cloud endpoints: ownership', () => {
  const others = [
    liveEndpoint({ id: 'ep_agent', type: 'agent', url: 'https://agent.example.com', name: 'web' }),
    liveEndpoint({
      id: 'ep_foreign',
      url: 'https://other.example.com',
      name: 'web',
      owner: 'team-b',
    }),
    liveEndpoint({ id: 'ep_unowned', url: 'https://unowned.example.com' }),
    liveEndpoint({ id: 'ep_text', url: 'https://text.example.com', metadata: 'not json' }),
  ];

  it('never diffs nor touches agent, foreign or unowned endpoints', () => {
    for (const desired of [[web()], []]) {
      const plan = buildPlan(desiredSet({ endpoints: desired }), liveState({ endpoints: others }), {
        allowEmpty: true,
      });
      const touched = plan.changes.flatMap((c) => c.operations.map((o) => o.path));
      for (const e of others) expect(touched.join(' ')).not.toContain(e.id);
      expect(plan.changes.map((c) => c.address)).toEqual(
        desired.length === 0 ? [] : ['cloud_endpoint.web'],
      );
    }
  });

  it('deletes an owned endpoint without a manifest, last', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web()] }),
      liveState({
        endpoints: [
          webLive(),
          liveEndpoint({ id: 'ep_old', url: 'https://old.example.com', name: 'old' }),
        ],
      }),
    );
    expect(ops(plan)).toEqual(['delete DELETE /endpoints/ep_old']);
    expect(change(plan, 'cloud_endpoint.old').reason).toBe('manifest removed');
  });

  it('keeps the oldest of owned namesakes and deletes the others', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web()] }),
      liveState({
        endpoints: [
          webLive({ id: 'ep_new', created_at: '2024-02-01T00:00:00Z' }),
          webLive({ id: 'ep_first', created_at: '2024-01-01T00:00:00Z' }),
        ],
      }),
    );
    expect(ops(plan)).toEqual(['delete DELETE /endpoints/ep_new']);
    expect(change(plan, 'cloud_endpoint.web').id).toBe('ep_first');
    expect(change(plan, 'cloud_endpoint.web#ep_new').action).toBe('delete');
  });

  it('never deletes a protected endpoint', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web()] }),
      liveState({
        endpoints: [
          webLive(),
          liveEndpoint({ id: 'ep_p', url: 'https://p.example.com', name: 'p', protect: true }),
        ],
      }),
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked[0]).toMatchObject({ address: 'cloud_endpoint.p', kind: 'guard' });
  });

  it('an empty set deletes no endpoint without --allow-empty', () => {
    const plan = buildPlan(desiredSet(), liveState({ endpoints: [webLive()] }));
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked[0]?.reason).toMatch(/declare no edges or endpoints/);
  });

  it('endpoint manifests make the set non-empty: edges without manifests are deleted', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web()] }),
      liveState({ endpoints: [webLive()], tls: [liveTls({ id: 'edgtls_1', name: 'old' })] }),
    );
    expect(ops(plan)).toEqual(['delete DELETE /edges/tls/edgtls_1']);
  });

  it('max-deletes counts edge and endpoint deletions together', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web()] }),
      liveState({
        endpoints: [
          webLive(),
          liveEndpoint({ id: 'ep_x', url: 'https://x.example.com', name: 'x' }),
        ],
        tls: [liveTls({ id: 'edgtls_1', name: 'old' })],
      }),
      { maxDeletes: 1 },
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.map((b) => b.reason)).toEqual([
      'ep_x: 2 edge or endpoint deletions exceed the limit of 1 (--max-deletes): nothing is deleted',
      'edgtls_1: 2 edge or endpoint deletions exceed the limit of 1 (--max-deletes): nothing is deleted',
    ]);
  });
});

describe('cloud endpoints: after the edge that releases the host and port', () => {
  const cases: [string, string, string][] = [
    ['https://h.example.com', 'https', 'h.example.com:443'],
    ['tls://h.example.com:443', 'tls', 'h.example.com:443'],
    ['http://h.example.com', 'https', 'h.example.com:80'],
  ];
  it.each(cases)(
    '%s: the deleted %s edge is cut over (its delete, then the create)',
    (url, kind, hostport) => {
      const edge =
        kind === 'tls'
          ? liveTls({ id: 'edgtls_1', name: 'old', hostports: [hostport] })
          : liveHttps({ id: 'edghts_1', name: 'old', hostports: [hostport] });
      const id = edge.id;
      const address = `${kind}_edge.old`;
      const plan = buildPlan(
        desiredSet({ endpoints: [endpointManifest({ name: 'h', url })] }),
        kind === 'tls'
          ? liveState({ tls: [edge as ReturnType<typeof liveTls>] })
          : liveState({ https: [edge as ReturnType<typeof liveHttps>] }),
      );
      // No release PATCH: the DELETE releases the host and port, in phase cutover.
      expect(ops(plan)).toEqual(['cutover POST /endpoints', `cutover DELETE /edges/${kind}/${id}`]);
      const post = change(plan, 'cloud_endpoint.h').operations[0];
      expect(post?.requires).toEqual([address]);
      expect(plan.cutovers).toEqual([
        {
          edge: address,
          id,
          endpoints: [{ address: 'cloud_endpoint.h', url, hostport }],
        },
      ]);
    },
  );

  it('an edge update that drops the hostport runs in the release phase', () => {
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'keep', hostports: ['other.example.com:443'] })],
        endpoints: [endpointManifest({ name: 'h', url: 'tls://h.example.com:443' })],
      }),
      liveState({
        tls: [liveTls({ id: 'edgtls_1', name: 'keep', hostports: ['h.example.com:443'] })],
      }),
    );
    expect(ops(plan)).toEqual(['main POST /endpoints', 'release PATCH /edges/tls/edgtls_1']);
    expect(change(plan, 'cloud_endpoint.h').operations[0]?.requires).toEqual(['tls_edge.keep']);
  });

  it.each([
    [
      'a foreign edge',
      liveTls({ id: 'edgtls_f', name: 'f', owner: 'team-b', hostports: ['h.example.com:443'] }),
      /owner "team-b"/,
    ],
    [
      'a protected edge without manifest',
      liveTls({ id: 'edgtls_p', name: 'p', protect: true, hostports: ['h.example.com:443'] }),
      /ours and keeps it/,
    ],
  ])('a host and port held by %s blocks the endpoint', (_name, edge, reason) => {
    const plan = buildPlan(
      desiredSet({ endpoints: [endpointManifest({ name: 'h', url: 'https://h.example.com' })] }),
      liveState({ tls: [edge] }),
    );
    expect(ops(plan)).toEqual([]);
    const b = plan.blocked.find((x) => x.address === 'cloud_endpoint.h');
    expect(b?.kind).toBe('conflict');
    expect(b?.reason).toMatch(reason);
  });
});

describe('cloud endpoints: after the endpoint that releases the URL', () => {
  const at = (name: string, url: string, pooling = false) =>
    endpointManifest({ name, url, pooling_enabled: pooling });
  const liveAt = (id: string, name: string, url: string, pooling = false) =>
    liveEndpoint({ id, name, url, pooling_enabled: pooling });

  it('a URL passing to another name: the old endpoint is deleted first, the new one waits', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [at('new', 'tls://h.example.com:443')] }),
      liveState({ endpoints: [liveAt('ep_old', 'old', 'tls://h.example.com:443')] }),
    );
    expect(ops(plan)).toEqual(['main POST /endpoints', 'release DELETE /endpoints/ep_old']);
    expect(change(plan, 'cloud_endpoint.new').operations[0]?.requires ?? []).toEqual([
      'cloud_endpoint.old',
    ]);
  });

  it("a move's old URL taken by another endpoint: its PATCH runs first, in phase release", () => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [at('web', 'https://www.example.com'), at('api', 'https://web.example.com')],
      }),
      liveState({ endpoints: [liveAt('ep_web', 'web', 'https://web.example.com')] }),
    );
    expect(ops(plan)).toEqual(['main POST /endpoints', 'release PATCH /endpoints/ep_web']);
    expect(change(plan, 'cloud_endpoint.api').operations[0]?.requires ?? []).toEqual([
      'cloud_endpoint.web',
    ]);
    expect(change(plan, 'cloud_endpoint.web').operations[0]?.requires ?? []).toEqual([]);
  });

  it("a replacement's old URL taken by another endpoint: its delete runs first", () => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [at('web', 'http://www.example.com'), at('api', 'https://web.example.com')],
      }),
      liveState({ endpoints: [liveAt('ep_web', 'web', 'https://web.example.com')] }),
    );
    expect(ops(plan)).toEqual([
      'main POST /endpoints',
      'release DELETE /endpoints/ep_web',
      'main POST /endpoints',
    ]);
    expect(change(plan, 'cloud_endpoint.api').operations[0]?.requires ?? []).toEqual([
      'cloud_endpoint.web',
    ]);
    expect(change(plan, 'cloud_endpoint.web').operations[1]?.requires ?? []).toEqual([]);
  });

  it('two endpoints swapping URLs: the phases cannot order two PATCHes, so both are replaced', () => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [at('web', 'https://api.example.com'), at('api', 'https://web.example.com')],
      }),
      liveState({
        endpoints: [
          liveAt('ep_web', 'web', 'https://web.example.com'),
          liveAt('ep_api', 'api', 'https://api.example.com'),
        ],
      }),
    );
    expect(change(plan, 'cloud_endpoint.web').action).toBe('replace');
    expect(change(plan, 'cloud_endpoint.api').action).toBe('replace');
    expect(ops(plan).filter((o) => o.includes('DELETE'))).toEqual([
      'release DELETE /endpoints/ep_api',
      'release DELETE /endpoints/ep_web',
    ]);
  });

  it('an endpoint leaving the pool: the other pooled endpoint is deleted first', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [at('web', 'https://web.example.com', false)] }),
      liveState({
        endpoints: [
          liveAt('ep_web', 'web', 'https://web.example.com', true),
          liveAt('ep_api', 'api', 'https://web.example.com', true),
        ],
      }),
    );
    expect(ops(plan)).toEqual(['release DELETE /endpoints/ep_api', 'main PATCH /endpoints/ep_web']);
    expect(change(plan, 'cloud_endpoint.web').operations[0]?.requires ?? []).toEqual([
      'cloud_endpoint.api',
    ]);
  });

  it.each([
    ['both pool', true, 'kubernetes'],
    ['another binding', false, 'public'],
  ] as const)('no wait when they may coexist (%s)', (_name, pooling, liveBinding) => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [
          endpointManifest({
            name: 'new',
            url: 'http://web.default',
            pooling_enabled: pooling,
            bindings: ['kubernetes'],
          }),
        ],
      }),
      liveState({
        endpoints: [
          liveEndpoint({
            id: 'ep_old',
            name: 'old',
            url: 'http://web.default',
            pooling_enabled: pooling,
            bindings: [liveBinding],
          }),
        ],
      }),
    );
    expect(ops(plan)).toEqual(['main POST /endpoints', 'delete DELETE /endpoints/ep_old']);
    expect(change(plan, 'cloud_endpoint.new').operations[0]?.requires ?? []).toEqual([]);
  });

  it('two endpoints on the host and port an edge releases both wait for it', () => {
    const plan = buildPlan(
      desiredSet({
        endpoints: [
          at('web', 'tls://h.example.com:443', true),
          at('api', 'tls://h.example.com:443', true),
        ],
      }),
      liveState({
        tls: [liveTls({ id: 'edgtls_1', name: 'old', hostports: ['h.example.com:443'] })],
      }),
    );
    expect(plan.blocked).toEqual([]);
    for (const name of ['web', 'api']) {
      expect(change(plan, `cloud_endpoint.${name}`).operations[0]?.requires ?? []).toEqual([
        'tls_edge.old',
      ]);
    }
  });
});

describe('cloud endpoints: secrets', () => {
  const oauth = {
    on_http_request: [
      {
        actions: [
          {
            type: 'oauth',
            config: { provider: 'google', client_id: 'id-1', client_secret: 'manifest-secret-1' },
          },
          { type: 'deny' },
        ],
      },
    ],
  };

  it('masks the manifest secret and the live one in every renderer', () => {
    const live = webLive({
      traffic_policy: JSON.stringify({
        on_http_request: [
          {
            actions: [
              { type: 'verify-webhook', config: { provider: 'github', secret: 'live-secret-2' } },
              { type: 'deny' },
            ],
          },
        ],
      }),
    });
    const desired = desiredSet({ endpoints: [web({ traffic_policy: oauth })] });
    const plan = buildPlan(desired, liveState({ endpoints: [live] }));
    expect(ops(plan)).toEqual(['main PATCH /endpoints/ep_web']);
    const values = secretValues(desired, { httpsEdges: [], cloudEndpoints: [live] });
    expect(values).toEqual(expect.arrayContaining(['manifest-secret-1', 'live-secret-2']));
    const masked = maskPlan(plan, values);
    for (const out of [renderText(masked), renderMarkdown(masked), renderJson(masked)]) {
      expect(out).not.toContain('manifest-secret-1');
      expect(out).not.toContain('live-secret-2');
      expect(out).toContain('client_id');
    }
    // The body's policy string is sensitive as a whole.
    expect(change(plan, 'cloud_endpoint.web').operations[0]?.sensitive_paths).toContainEqual([
      'traffic_policy',
    ]);
  });

  it('reads live secrets of a hand-written YAML policy too', () => {
    const live = webLive({
      traffic_policy:
        'on_tcp_connect:\n  - actions:\n      - type: terminate-tls\n        config:\n          server_private_key: "-----PRIVATE KEY-----"\n',
    });
    expect(liveSecretValues({ httpsEdges: [], cloudEndpoints: [live] })).toEqual([
      '-----PRIVATE KEY-----',
    ]);
  });
});

describe('cloud endpoints: a URL held by an endpoint that is not ours', () => {
  const URL = 'https://shop.example.com';
  const holders = {
    agent: liveEndpoint({ id: 'ep_agent', type: 'agent', url: URL }),
    foreign: liveEndpoint({ id: 'ep_foreign', url: URL, name: 'shop', owner: 'other-team' }),
    unowned: liveEndpoint({ id: 'ep_unowned', url: URL }),
  };

  it.each(Object.entries(holders))(
    'held by an %s endpoint: blocked as a conflict, no request',
    (_kind, holder) => {
      const plan = buildPlan(
        desiredSet({ endpoints: [endpointManifest({ name: 'shop', url: URL })] }),
        liveState({ endpoints: [holder] }),
      );
      expect(ops(plan)).toEqual([]);
      expect(plan.blocked).toEqual([
        {
          address: 'cloud_endpoint.shop',
          kind: 'conflict',
          reason: expect.stringMatching(
            new RegExp(
              `^url ${URL} \\(public\\) is held by endpoint ${holder.id} .*; not attempted$`,
            ),
          ),
        },
      ]);
    },
  );

  it('a replacement onto a held URL is blocked too; the old record is left alone', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [endpointManifest({ name: 'web', url: URL })] }),
      liveState({ endpoints: [holders.foreign, webLive()] }),
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.map((b) => [b.address, b.kind])).toEqual([
      ['cloud_endpoint.web', 'conflict'],
    ]);
  });

  it.each([
    ['both pool', true, true, 'public', false],
    ['another binding', false, false, 'internal', false],
    ['only ours pools', true, false, 'public', true],
    ['only the holder pools', false, true, 'public', true],
  ] as const)('%s: blocked when they may not share it', (_name, ours, theirs, binding, blocked) => {
    const url = binding === 'internal' ? 'https://shop.internal' : URL;
    const plan = buildPlan(
      desiredSet({
        endpoints: [
          endpointManifest({ name: 'shop', url, pooling_enabled: ours, bindings: ['public'] }),
        ],
      }),
      liveState({
        endpoints: [
          liveEndpoint({
            id: 'ep_f',
            url,
            owner: 'other',
            pooling_enabled: theirs,
            bindings: [binding],
          }),
        ],
      }),
    );
    expect(plan.blocked.length > 0).toBe(blocked);
    expect(ops(plan)).toEqual(blocked ? [] : ['main POST /endpoints']);
  });

  it('held by one of ours no manifest keeps, kept by protect: blocked too', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [endpointManifest({ name: 'shop', url: URL })] }),
      liveState({
        endpoints: [liveEndpoint({ id: 'ep_p', url: URL, name: 'old', protect: true })],
      }),
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.find((b) => b.address === 'cloud_endpoint.shop')?.reason).toContain(
      'which is ours and is kept',
    );
  });

  it('an endpoint already seated beside the holder (both pool) stays a no-op', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web({ pooling_enabled: true })] }),
      liveState({
        endpoints: [
          webLive({ pooling_enabled: true }),
          liveEndpoint({ id: 'ep_f', url: 'https://web.example.com', pooling_enabled: true }),
        ],
      }),
    );
    expect(plan.blocked).toEqual([]);
    expect(ops(plan)).toEqual([]);
  });

  it('leaving a pool a foreign endpoint is in: blocked (the service answers 18017)', () => {
    const plan = buildPlan(
      desiredSet({ endpoints: [web({ pooling_enabled: false })] }),
      liveState({
        endpoints: [
          webLive({ pooling_enabled: true }),
          liveEndpoint({ id: 'ep_f', url: 'https://web.example.com', pooling_enabled: true }),
        ],
      }),
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.map((b) => b.address)).toEqual(['cloud_endpoint.web']);
  });
});
