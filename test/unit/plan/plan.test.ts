/**
 * The planner on plain builders: actions, operations (section 4 of the design), ownership,
 * guards, hostport ordering, auth swaps, bot users and the convergence invariant.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { MASKED } from '../../../src/manifest/secrets.js';
import { maskPlan } from '../../../src/plan/mask.js';
import { type Plan, type PlanFile, planSchema } from '../../../src/plan/model.js';
import { buildPlan, planHasChanges } from '../../../src/plan/plan.js';
import {
  botManifest,
  desiredSet,
  httpsManifest,
  liveBot,
  liveFromDesired,
  liveHttps,
  liveState,
  liveTls,
  routeManifest,
  tlsManifest,
} from './builders.js';

function change<P extends Plan | PlanFile>(plan: P, address: string): P['changes'][number] {
  const c = plan.changes.find((x) => x.address === address);
  if (c === undefined)
    throw new Error(`no change ${address} in ${plan.changes.map((x) => x.address).join(', ')}`);
  return c;
}

function ops(plan: Plan) {
  return plan.changes.flatMap((c) => c.operations.map((o) => `${o.phase} ${o.method} ${o.path}`));
}

const IDP = '<EntityDescriptor entityID="https://idp.example.com"/>';

const fullSet = () =>
  desiredSet({
    tls: [
      tlsManifest({
        name: 'db',
        description: 'database',
        metadata: { team: 'data' },
        hostports: ['10.0.0.5:5432'],
        backend: { backend_id: 'bkdtg_1' },
        ip_restriction: { ip_policy_ids: ['ipp_1', 'ipp_2'] },
        mutual_tls: { certificate_authority_ids: ['ca_1'] },
        tls_termination: { terminate_at: 'upstream' },
        traffic_policy: { value: { on_tcp_connect: [] } },
      }),
    ],
    https: [
      httpsManifest(
        {
          name: 'shop',
          hostports: ['Shop.Example.com:443', 'www.example.com:443'],
          protect: true,
          tls_termination: { min_version: '1.3' },
          mutual_tls: { certificate_authority_ids: ['ca_2'] },
          routes: [
            routeManifest(
              {
                match: '/',
                backend: { backend_id: 'bkdhr_1' },
                oauth: {
                  provider: {
                    google: {
                      client_id: 'id',
                      client_secret: 'sec',
                      email_domains: ['example.com'],
                    },
                  },
                },
                request_headers: { add: { 'X-Env': 'prod' }, remove: ['X-Debug'] },
                response_headers: { add: { 'Strict-Transport-Security': 'max-age=1' } },
                circuit_breaker: {
                  tripped_duration: 10,
                  rolling_window: 10,
                  num_buckets: 10,
                  volume_threshold: 20,
                  error_threshold_percentage: 0.5,
                },
                compression: {},
              },
              [['oauth', 'provider', 'google', 'client_secret']],
            ),
            routeManifest({
              match: '/sso',
              match_type: 'exact_path',
              description: 'SSO',
              metadata: { tier: 'gold' },
              saml: { idp_metadata: IDP },
              user_agent_filter: { deny: ['curl/.*'] },
            }),
            routeManifest(
              {
                match: '/hooks',
                webhook_verification: { provider: 'Stripe', secret: 'whsec' },
                websocket_tcp_converter: {},
                traffic_policy: { enabled: false, value: '{}' },
              },
              [['webhook_verification', 'secret']],
            ),
            routeManifest({
              match: '/oidc',
              oidc: {
                issuer: 'https://id.example.com',
                client_id: 'c',
                client_secret: 's',
                scopes: ['openid'],
              },
              ip_restriction: { ip_policy_ids: ['ipp_3'] },
            }),
          ],
        },
        [],
      ),
    ],
    bots: [botManifest({ name: 'ci' }), botManifest({ name: 'old', ensure: 'absent' })],
  });

describe('create on an empty account', () => {
  const plan = buildPlan(fullSet(), liveState());

  it('is a valid, versioned plan value', () => {
    expect(planSchema.parse(JSON.parse(JSON.stringify(plan)))).toEqual(plan);
    expect(plan.format_version).toBe(2);
    expect(plan.summary).toEqual({ create: 7, update: 0, delete: 0, adopt: 0, noop: 0 });
  });

  it('creates an edge in one POST with every module, owned metadata included', () => {
    const db = change(plan, 'tls_edge.db');
    expect(db.operations).toHaveLength(1);
    expect(db.operations[0]).toMatchObject({
      method: 'POST',
      path: '/edges/tls',
      phase: 'main',
      binds: 'tls_edge.db',
      body: {
        description: 'database',
        metadata: storedMetadata(
          { team: 'data' },
          { owner: 'default', name: 'db', protect: false },
        ),
        hostports: ['10.0.0.5:5432'],
        backend: { enabled: true, backend_id: 'bkdtg_1' },
        tls_termination: { enabled: true, terminate_at: 'upstream' },
        traffic_policy: { enabled: true, value: '{"on_tcp_connect":[]}' },
      },
    });
  });

  it('creates routes with one POST each on the edge placeholder', () => {
    const root = change(plan, 'https_edge.shop.route["/"]');
    expect(root.root).toBe('https_edge.shop');
    expect(root.operations).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/edges/https/{https_edge.shop}/routes',
        binds: 'https_edge.shop.route["/"]',
        sensitive_paths: [['oauth', 'provider', 'google', 'client_secret']],
      }),
    ]);
    expect(change(plan, 'https_edge.shop.route["/sso"]').operations[0]?.body).toMatchObject({
      match_type: 'exact_path',
      description: 'SSO',
      metadata: '{"tier":"gold"}',
    });
  });

  it('orders changes by address, the edge before its routes', () => {
    const addresses = plan.changes.map((c) => c.address);
    expect(addresses).toEqual([...addresses].sort());
    expect(addresses.indexOf('https_edge.shop')).toBeLessThan(
      addresses.indexOf('https_edge.shop.route["/"]'),
    );
  });

  it('creates bot users and never deletes an absent one that is not there', () => {
    expect(change(plan, 'bot_user.ci').operations[0]).toMatchObject({
      method: 'POST',
      path: '/bot_users',
      body: { name: 'ci', active: true },
    });
    expect(plan.changes.some((c) => c.address === 'bot_user.old')).toBe(false);
  });

  it('masks secrets in fields and bodies', () => {
    const masked = JSON.stringify(maskPlan(plan, []));
    expect(masked).not.toContain('"sec"');
    expect(masked).not.toContain('whsec');
    expect(JSON.stringify(plan)).toContain('whsec');
    const field = change(maskPlan(plan, []), 'https_edge.shop.route["/"]').fields.find(
      (f) => f.path === 'oauth.provider.google.client_secret',
    );
    expect(field).toMatchObject({ after: MASKED, sensitive: true });
  });
});

describe('convergence invariant', () => {
  it('a live state produced from the manifests plans no changes', () => {
    const desired = fullSet();
    const plan = buildPlan(desired, liveFromDesired(desired));
    expect(plan.changes.filter((c) => c.action !== 'noop')).toEqual([]);
    expect(plan.blocked).toEqual([]);
    expect(planHasChanges(plan)).toBe(false);
    expect(plan.summary.noop).toBe(plan.changes.length);
  });

  it('holds for generated manifests (property)', () => {
    const header = fc.constantFrom('X-A', 'x-b', 'X-Forwarded-For');
    const route = fc.record({
      match: fc.constantFrom('/', '/a', '/b/c'),
      match_type: fc.constantFrom('exact_path', 'path_prefix'),
      backend: fc.option(
        fc.record({ backend_id: fc.constantFrom('bkdhr_1', 'bkdtg_2'), enabled: fc.boolean() }),
        { nil: undefined },
      ),
      request_headers: fc.option(
        fc.record({
          add: fc.dictionary(
            header,
            fc.string({ maxLength: 5 }).filter((s) => !/[\r\n\0]/.test(s)),
          ),
          remove: fc.uniqueArray(fc.constantFrom('X-Z', 'Server'), {
            selector: (s) => s.toLowerCase(),
          }),
        }),
        { nil: undefined },
      ),
      response_headers: fc.option(
        fc.record({ add: fc.dictionary(header, fc.constantFrom('1', 'v')) }),
        { nil: undefined },
      ),
      circuit_breaker: fc.option(
        fc.record({
          tripped_duration: fc.constant(10),
          rolling_window: fc.constant(10),
          num_buckets: fc.integer({ min: 1, max: 128 }),
          volume_threshold: fc.constant(20),
        }),
        { nil: undefined },
      ),
      auth: fc.constantFrom('none', 'oauth', 'oidc', 'saml'),
      user_agent_filter: fc.option(
        fc.record({ allow: fc.uniqueArray(fc.constantFrom('a.*', 'b.*', 'c')) }),
        { nil: undefined },
      ),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(route, { selector: (r) => r.match, maxLength: 3 }),
        fc.uniqueArray(fc.constantFrom('a.example.com:443', 'B.example.com:443', '10.0.0.3:8443'), {
          selector: (h) => h.toLowerCase(),
        }),
        fc.option(fc.constantFrom('1.0', '1.2', '1.3'), { nil: undefined }),
        (routes, hostports, minVersion) => {
          const desired = desiredSet({
            https: [
              httpsManifest({
                name: 'gen',
                hostports,
                ...(minVersion === undefined
                  ? {}
                  : { tls_termination: { min_version: minVersion } }),
                routes: routes.map(({ auth, ...r }) => {
                  const fields: Record<string, unknown> = { ...r };
                  for (const [k, v] of Object.entries(fields))
                    if (v === undefined) delete fields[k];
                  if (auth === 'oauth')
                    fields.oauth = {
                      provider: { github: { teams: ['org/t'] } },
                      options_passthrough: true,
                    };
                  if (auth === 'oidc')
                    fields.oidc = {
                      issuer: 'https://id.example.com',
                      client_id: 'c',
                      client_secret: 's',
                    };
                  if (auth === 'saml')
                    fields.saml = {
                      idp_metadata: IDP,
                      nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
                    };
                  return routeManifest(fields as { match: string });
                }),
              }),
            ],
          });
          const plan = buildPlan(desired, liveFromDesired(desired));
          expect(plan.changes.filter((c) => c.action !== 'noop')).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('updates', () => {
  const base = () =>
    desiredSet({
      tls: [
        tlsManifest({
          name: 'api',
          hostports: ['api.example.com:443'],
          backend: { backend_id: 'bkdhr_1' },
          ip_restriction: { ip_policy_ids: ['ipp_1'] },
        }),
      ],
    });

  it('one changed module is exactly one PATCH carrying only that module', () => {
    const live = liveFromDesired(base());
    const desired = base();
    (desired.tlsEdges[0] as { backend: unknown }).backend = {
      enabled: true,
      backend_id: 'bkdhr_2',
    };
    const plan = buildPlan(desired, live);
    const api = change(plan, 'tls_edge.api');
    expect(api.action).toBe('update');
    expect(api.operations).toEqual([
      expect.objectContaining({
        method: 'PATCH',
        path: '/edges/tls/edgtls_0001',
        phase: 'main',
        body: { backend: { enabled: true, backend_id: 'bkdhr_2' } },
      }),
    ]);
    expect(api.fields).toEqual([
      { path: 'backend.backend_id', before: 'bkdhr_1', after: 'bkdhr_2', sensitive: false },
    ]);
    expect(api.modules).toEqual([
      { module: 'backend', status: 'set' },
      { module: 'ip_restriction', status: 'unchanged' },
    ]);
  });

  it('a removed module is its DELETE, after the PATCH of the scalars', () => {
    const live = liveFromDesired(base());
    const desired = base();
    const edge = desired.tlsEdges[0] as { ip_restriction?: unknown; description?: string };
    delete edge.ip_restriction;
    edge.description = 'new';
    const api = change(buildPlan(desired, live), 'tls_edge.api');
    expect(api.operations.map((o) => [o.method, o.path, o.body])).toEqual([
      ['PATCH', '/edges/tls/edgtls_0001', { description: 'new' }],
      ['DELETE', '/edges/tls/edgtls_0001/ip_restriction', undefined],
    ]);
    expect(api.reason).toBe('changed description; removed ip_restriction');
  });

  it('route changes: PATCH the route, create new routes, delete dropped ones last', () => {
    const desired = desiredSet({
      https: [
        httpsManifest({
          name: 'w',
          routes: [routeManifest({ match: '/a', compression: {} }), routeManifest({ match: '/b' })],
        }),
      ],
    });
    const live = liveFromDesired(desired);
    const next = desiredSet({
      https: [
        httpsManifest({
          name: 'w',
          routes: [
            routeManifest({
              match: '/a',
              match_type: 'exact_path',
              compression: { enabled: false },
            }),
            routeManifest({ match: '/c' }),
          ],
        }),
      ],
    });
    const plan = buildPlan(next, live);
    expect(ops(plan)).toEqual([
      'main PATCH /edges/https/edghts_0001/routes/edghtsrt_0002',
      'delete DELETE /edges/https/edghts_0001/routes/edghtsrt_0003',
      'main POST /edges/https/edghts_0001/routes',
    ]);
    expect(change(plan, 'https_edge.w').action).toBe('noop');
    expect(change(plan, 'https_edge.w.route["/a"]').operations[0]?.body).toEqual({
      match_type: 'exact_path',
      compression: { enabled: false },
    });
  });

  it.each([
    [
      'oauth -> oidc with a backend',
      { oauth: { provider: { google: {} } }, backend: { backend_id: 'bkdhr_1' } },
      {
        oidc: { issuer: 'https://i.example', client_id: 'c', client_secret: 's' },
        backend: { backend_id: 'bkdhr_1' },
      },
      ['DELETE backend', 'DELETE oauth', 'PATCH backend,oidc'],
    ],
    [
      'saml -> oauth, backend dropped too',
      { saml: { idp_metadata: IDP }, backend: { backend_id: 'bkdhr_1' }, compression: {} },
      { oauth: { provider: { github: {} } } },
      ['DELETE backend', 'DELETE saml', 'PATCH oauth', 'DELETE compression'],
    ],
    [
      'oidc -> saml without a backend',
      { oidc: { issuer: 'https://i.example', client_id: 'c', client_secret: 's' } },
      { saml: { idp_metadata: IDP } },
      ['DELETE oidc', 'PATCH saml'],
    ],
  ])('auth-kind swap fails closed: %s', (_name, before, after, expected) => {
    const live = liveFromDesired(
      desiredSet({
        https: [httpsManifest({ name: 'w', routes: [routeManifest({ match: '/', ...before })] })],
      }),
    );
    const plan = buildPlan(
      desiredSet({
        https: [httpsManifest({ name: 'w', routes: [routeManifest({ match: '/', ...after })] })],
      }),
      live,
    );
    const route = change(plan, 'https_edge.w.route["/"]');
    const described = route.operations.map((o) =>
      o.method === 'PATCH'
        ? `PATCH ${Object.keys(o.body as object)
            .sort()
            .join(',')}`
        : `DELETE ${o.path.split('/').pop()}`,
    );
    expect(described).toEqual(expected);
    expect(route.operations.every((o) => o.phase === 'main')).toBe(true);
  });
});

describe('ownership', () => {
  it('never diffs or touches foreign edges and reports hostport conflicts by edge id', () => {
    const live = liveState({
      tls: [
        liveTls({
          id: 'edgtls_f1',
          name: 'api',
          owner: 'team-b',
          hostports: ['api.example.com:443'],
        }),
        liveTls({ id: 'edgtls_f2', metadata: 'hand-written', hostports: ['x.example.com:443'] }),
      ],
    });
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({ name: 'api', hostports: ['api.example.com:443'] }),
          tlsManifest({ name: 'free', hostports: ['free.example.com:443'] }),
        ],
      }),
      live,
    );
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual(['create tls_edge.free']);
    expect(plan.blocked).toEqual([
      {
        address: 'tls_edge.api',
        kind: 'conflict',
        reason:
          'hostport api.example.com:443 is held by TLS edge edgtls_f1 which belongs to owner "team-b"; not attempted',
      },
    ]);
  });

  it.each([
    ['no owner key', JSON.stringify({ team: 'x' }), 'it has no owner'],
    ['unreadable metadata', 'legacy edge', "its metadata is not edgesync's"],
  ])('adopts an edge named by id: (%s)', (_name, metadata, why) => {
    const live = liveState({
      tls: [
        liveTls({
          id: 'edgtls_old',
          metadata,
          hostports: ['a.example.com:443'],
          backend: { backend_id: 'bkdhr_1' },
        }),
      ],
    });
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({
            name: 'legacy',
            id: 'edgtls_old',
            hostports: ['a.example.com:443'],
            backend: { backend_id: 'bkdhr_1' },
          }),
        ],
      }),
      live,
    );
    const c = change(plan, 'tls_edge.legacy');
    expect(c.action).toBe('adopt');
    expect(c.reason).toBe(`adopt edgtls_old named by id: (${why}); changed metadata`);
    expect(c.operations).toEqual([
      expect.objectContaining({
        method: 'PATCH',
        path: '/edges/tls/edgtls_old',
        body: { metadata: '{"edgesync/name":"legacy","edgesync/owner":"default"}' },
      }),
    ]);
    expect(plan.summary.adopt).toBe(1);
  });

  it.each([
    [
      'another owner',
      liveTls({ id: 'edgtls_x', name: 'n', owner: 'other' }),
      'conflict',
      'id edgtls_x belongs to owner "other": edgesync never adopts another owner\'s edge',
    ],
    [
      'a missing edge',
      liveTls({ id: 'edgtls_y' }),
      'guard',
      'id edgtls_x: no such TLS edge in the account',
    ],
  ])('refuses id: naming %s', (_name, edge, kind, reason) => {
    const plan = buildPlan(
      desiredSet({ tls: [tlsManifest({ name: 'n', id: 'edgtls_x' })] }),
      liveState({ tls: [edge] }),
    );
    expect(plan.blocked).toEqual([{ address: 'tls_edge.n', kind, reason }]);
    expect(plan.changes).toEqual([]);
  });

  it('refuses id: naming an edge of the other kind', () => {
    const plan = buildPlan(
      desiredSet({ tls: [tlsManifest({ name: 'n', id: 'edgtls_h' })] }),
      liveState({ https: [liveHttps({ id: 'edgtls_h' })] }),
    );
    expect(plan.blocked[0]?.reason).toBe('id edgtls_h is a HTTPS edge, not a TLS edge');
  });

  it('keeps the oldest of duplicates and deletes the others', () => {
    const live = liveState({
      tls: [
        liveTls({ id: 'edgtls_b', name: 'api', created_at: '2024-01-02T00:00:00Z' }),
        liveTls({ id: 'edgtls_a', name: 'api', created_at: '2024-01-01T00:00:00Z' }),
      ],
    });
    const plan = buildPlan(desiredSet({ tls: [tlsManifest({ name: 'api' })] }), live);
    expect(plan.changes.map((c) => [c.address, c.action, c.id, c.reason])).toEqual([
      ['tls_edge.api', 'noop', 'edgtls_a', 'up to date'],
      [
        'tls_edge.api#edgtls_b',
        'delete',
        'edgtls_b',
        'duplicate of edgtls_a (same edgesync/name; the oldest is kept)',
      ],
    ]);
  });

  it('matches by kind and owner id', () => {
    const live = liveState({ https: [liveHttps({ id: 'edghts_1', name: 'api', owner: 'blue' })] });
    const plan = buildPlan(desiredSet({ tls: [tlsManifest({ name: 'api' })] }), live, {
      owner: 'blue',
    });
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
      'delete https_edge.api',
      'create tls_edge.api',
    ]);
    expect(plan.owner).toBe('blue');
  });
});

describe('guards', () => {
  const owned = (n: number) =>
    Array.from({ length: n }, (_, i) => liveTls({ id: `edgtls_${i}`, name: `e${i}` }));

  it('an empty desired set deletes nothing without allowEmpty', () => {
    const plan = buildPlan(
      desiredSet({ bots: [botManifest({ name: 'b' })] }),
      liveState({ tls: owned(2) }),
    );
    expect(plan.changes.map((c) => c.action)).toEqual(['create']);
    expect(plan.blocked).toHaveLength(2);
    expect(plan.blocked[0]).toEqual({
      address: 'tls_edge.e0',
      kind: 'guard',
      reason:
        'edgtls_0: the manifests declare no edges: refusing to delete the 2 edge(s) owned by "default" (pass --allow-empty to delete them)',
    });
    expect(
      buildPlan(desiredSet(), liveState({ tls: owned(2) }), { allowEmpty: true }).summary.delete,
    ).toBe(2);
  });

  it('an orphan an excluded file declares is left alone, duplicates included; the rest go', () => {
    const live = liveState({
      tls: [
        ...owned(2),
        liveTls({ id: 'edgtls_dup', name: 'e0', created_at: '2030-01-01T00:00:00Z' }),
      ],
    });
    const desired = {
      ...desiredSet({ tls: [tlsManifest({ name: 'keep' })] }),
      excluded: {
        declared: [
          { kind: 'TLSEdge' as const, name: 'e0', file: 'internal/a.yaml' },
          // Another kind of the same name protects nothing of this one.
          { kind: 'HTTPSEdge' as const, name: 'e1', file: 'internal/a.yaml' },
        ],
        unreadable: [],
      },
    };
    const plan = buildPlan(desired, live);
    expect(plan.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([
      'tls_edge.e1',
    ]);
    expect(plan.blocked.map((b) => [b.address, b.kind])).toEqual([
      ['tls_edge.e0', 'excluded'],
      ['tls_edge.e0', 'excluded'],
    ]);
    expect(plan.blocked[0]?.reason).toBe(
      'edgtls_0: declared in internal/a.yaml, which --exclude skips: left as it is live (an excluded file is never a reason to delete)',
    );
    expect(planHasChanges({ ...plan, changes: [] })).toBe(false);
  });

  it('an excluded file that cannot be read deletes nothing', () => {
    const desired = {
      ...desiredSet({ tls: [tlsManifest({ name: 'keep' })] }),
      excluded: { declared: [], unreadable: ['internal'] },
    };
    const plan = buildPlan(desired, liveState({ tls: owned(2) }));
    expect(plan.summary.delete).toBe(0);
    expect(plan.blocked.map((b) => b.reason)).toEqual([
      'edgtls_0: the excluded internal cannot be read, so what it declares is unknown: nothing is deleted',
      'edgtls_1: the excluded internal cannot be read, so what it declares is unknown: nothing is deleted',
    ]);
  });

  it('more deletions than maxDeletes blocks all of them', () => {
    const desired = desiredSet({ tls: [tlsManifest({ name: 'keep' })] });
    const plan = buildPlan(desired, liveState({ tls: owned(4) }), { maxDeletes: 3 });
    expect(plan.summary.delete).toBe(0);
    expect(plan.blocked.map((b) => b.reason)).toContain(
      'edgtls_3: 4 edge deletions exceed the limit of 3 (--max-deletes): no edge is deleted',
    );
    expect(buildPlan(desired, liveState({ tls: owned(4) }), { maxDeletes: 4 }).summary.delete).toBe(
      4,
    );
    expect(buildPlan(desired, liveState({ tls: owned(11) })).summary.delete).toBe(0);
    // One deletion over a limit of 0 is said in the singular.
    expect(
      buildPlan(desired, liveState({ tls: owned(1) }), { maxDeletes: 0 }).blocked.map(
        (b) => b.reason,
      ),
    ).toContain(
      'edgtls_0: 1 edge deletion exceeds the limit of 0 (--max-deletes): no edge is deleted',
    );
  });

  it('never deletes a protected edge', () => {
    const live = liveState({ tls: [liveTls({ id: 'edgtls_p', name: 'p', protect: true })] });
    const plan = buildPlan(desiredSet({ tls: [tlsManifest({ name: 'other' })] }), live);
    expect(plan.changes.map((c) => c.address)).toEqual(['tls_edge.other']);
    expect(plan.blocked).toEqual([
      {
        address: 'tls_edge.p',
        kind: 'guard',
        reason:
          'edgtls_p is protected (edgesync/protect=true) and is never deleted; to delete it, apply its manifest with protect: false first',
      },
    ]);
  });
});

describe('hostports are released before they are claimed', () => {
  it('moves the releasing edge PATCH to phase release', () => {
    const live = liveState({
      tls: [
        liveTls({
          id: 'edgtls_a',
          name: 'a',
          hostports: ['h.example.com:443', 'keep.example.com:443'],
        }),
      ],
      https: [liveHttps({ id: 'edghts_b', name: 'b' })],
    });
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'a', hostports: ['keep.example.com:443'] })],
        https: [httpsManifest({ name: 'b', hostports: ['H.example.com:443'] })],
      }),
      live,
    );
    expect(ops(plan)).toEqual([
      'main PATCH /edges/https/edghts_b',
      'release PATCH /edges/tls/edgtls_a',
    ]);
  });

  it('splits a swap into a release PATCH and the main PATCH', () => {
    const live = liveState({
      tls: [
        liveTls({ id: 'edgtls_a', name: 'a', hostports: ['one.example.com:443'] }),
        liveTls({ id: 'edgtls_b', name: 'b', hostports: ['two.example.com:443'] }),
      ],
    });
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({ name: 'a', hostports: ['two.example.com:443'] }),
          tlsManifest({ name: 'b', hostports: ['one.example.com:443'] }),
        ],
      }),
      live,
    );
    expect(change(plan, 'tls_edge.a').operations.map((o) => [o.phase, o.method, o.body])).toEqual([
      ['release', 'PATCH', { hostports: [] }],
      ['main', 'PATCH', { hostports: ['two.example.com:443'] }],
    ]);
  });

  it('releases the hostports of an edge being deleted before its DELETE', () => {
    const live = liveState({
      tls: [
        liveTls({
          id: 'edgtls_old',
          name: 'old',
          hostports: ['h.example.com:443', 'x.example.com:443'],
        }),
      ],
    });
    const plan = buildPlan(
      desiredSet({ tls: [tlsManifest({ name: 'new', hostports: ['h.example.com:443'] })] }),
      live,
    );
    expect(change(plan, 'tls_edge.old').operations.map((o) => [o.phase, o.method, o.body])).toEqual(
      [
        ['release', 'PATCH', { hostports: ['x.example.com:443'] }],
        ['delete', 'DELETE', undefined],
      ],
    );
  });

  it('blocks the claim when the holder is kept (protected, or its own change blocked)', () => {
    const live = liveState({
      tls: [
        liveTls({ id: 'edgtls_p', name: 'p', protect: true, hostports: ['p.example.com:443'] }),
        liveTls({ id: 'edgtls_f', name: 'f', owner: 'other', hostports: ['f.example.com:443'] }),
        liveTls({ id: 'edgtls_m', name: 'm', hostports: ['m.example.com:443'] }),
      ],
    });
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({ name: 'wants-p', hostports: ['p.example.com:443'] }),
          tlsManifest({ name: 'm', hostports: ['f.example.com:443'] }),
          tlsManifest({ name: 'wants-m', hostports: ['m.example.com:443'] }),
        ],
      }),
      live,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.blocked.map((b) => `${b.address}: ${b.reason}`)).toEqual([
      'tls_edge.m: hostport f.example.com:443 is held by TLS edge edgtls_f which belongs to owner "other"; not attempted',
      expect.stringContaining('tls_edge.p: edgtls_p is protected'),
      'tls_edge.wants-m: hostport m.example.com:443 is held by TLS edge edgtls_m (tls_edge.m) whose own change is blocked; not attempted',
      'tls_edge.wants-p: hostport p.example.com:443 is held by TLS edge edgtls_p which is ours but is not deleted (see the blocked entries); not attempted',
    ]);
  });
});

describe('bot users', () => {
  it('updates active, deletes only with ensure: absent, never prunes', () => {
    const live = liveState({
      bots: [
        liveBot({ id: 'bot_1', name: 'ci', active: true }),
        liveBot({ id: 'bot_2', name: 'gone' }),
        liveBot({ id: 'bot_3', name: 'gone', created_at: '2024-02-01T00:00:00Z' }),
        liveBot({ id: 'bot_4', name: 'unmanaged' }),
      ],
    });
    const plan = buildPlan(
      desiredSet({
        bots: [
          botManifest({ name: 'ci', active: false }),
          botManifest({ name: 'gone', ensure: 'absent' }),
        ],
      }),
      live,
    );
    expect(
      plan.changes.map((c) => [
        c.address,
        c.action,
        c.operations.map(
          (o) => `${o.phase} ${o.method} ${o.path} ${JSON.stringify(o.body ?? null)}`,
        ),
      ]),
    ).toEqual([
      ['bot_user.ci', 'update', ['main PATCH /bot_users/bot_1 {"active":false}']],
      ['bot_user.gone', 'delete', ['delete DELETE /bot_users/bot_2 null']],
      ['bot_user.gone#bot_3', 'delete', ['delete DELETE /bot_users/bot_3 null']],
    ]);
    expect(plan.warnings).toEqual([
      '2 bot users named "gone" (bot_2, bot_3): ensure: absent deletes all of them',
    ]);
  });

  it('applies the desired active to every namesake and warns about them', () => {
    const bots = (activeB: boolean, activeC: boolean) =>
      liveState({
        bots: [
          liveBot({ id: 'bot_c', name: 'ci', active: activeC, created_at: '2024-03-01T00:00:00Z' }),
          liveBot({ id: 'bot_a', name: 'ci', active: true, created_at: '2024-01-01T00:00:00Z' }),
          liveBot({ id: 'bot_b', name: 'ci', active: activeB, created_at: '2024-02-01T00:00:00Z' }),
        ],
      });
    const desired = desiredSet({ bots: [botManifest({ name: 'ci', active: true })] });
    const plan = buildPlan(desired, bots(false, true));
    expect(plan.changes.map((c) => `${c.address} ${c.action} ${c.reason}`)).toEqual([
      'bot_user.ci noop up to date',
      'bot_user.ci#bot_b update changed active (a namesake)',
      'bot_user.ci#bot_c noop up to date',
    ]);
    expect(plan.warnings).toEqual([
      '3 bot users named "ci" (bot_a, bot_b, bot_c): active: true is applied to every one; delete the extra ones by hand',
    ]);
    // Once every namesake matches, the plan has nothing to do (the warning stays).
    const after = buildPlan(desired, bots(true, true));
    expect(after.changes.every((c) => c.action === 'noop')).toBe(true);
    expect(after.warnings).toHaveLength(1);
    expect(
      buildPlan(desiredSet({ bots: [botManifest({ name: 'ci' })] }), liveState({ bots: [] }))
        .warnings,
    ).toEqual([]);
  });

  it('deletes a namesake it provably created itself (ownBotUsers), keeping the others', () => {
    const live = liveState({
      bots: [
        liveBot({ id: 'bot_a', name: 'ci', created_at: '2024-01-01T00:00:00Z' }),
        liveBot({ id: 'bot_b', name: 'ci', created_at: '2024-02-01T00:00:00Z' }),
      ],
    });
    const desired = desiredSet({ bots: [botManifest({ name: 'ci' })] });
    // The oldest is ours: it goes, although the oldest is the usual survivor.
    const plan = buildPlan(desired, live, { ownBotUsers: new Set(['bot_a']) });
    expect(plan.changes.map((c) => `${c.address} ${c.action}`)).toEqual([
      'bot_user.ci noop',
      'bot_user.ci#bot_a delete',
    ]);
    expect(change(plan, 'bot_user.ci').id).toBe('bot_b');
    expect(change(plan, 'bot_user.ci#bot_a').operations.map((o) => o.path)).toEqual([
      '/bot_users/bot_a',
    ]);
    expect(plan.warnings).toEqual([]);
    // Both ours: the oldest stays. None ours, or no namesake: nothing is deleted.
    const both = buildPlan(desired, live, { ownBotUsers: new Set(['bot_a', 'bot_b']) });
    expect(both.changes.map((c) => `${c.address} ${c.action}`)).toEqual([
      'bot_user.ci noop',
      'bot_user.ci#bot_b delete',
    ]);
    expect(buildPlan(desired, live).changes.every((c) => c.action === 'noop')).toBe(true);
    const alone = liveState({ bots: [liveBot({ id: 'bot_a', name: 'ci' })] });
    expect(
      buildPlan(desired, alone, { ownBotUsers: new Set(['bot_a']) }).changes.map((c) => c.action),
    ).toEqual(['noop']);
  });
});

describe('suspend: true', () => {
  it('leaves a live edge exactly as it is, never deletes it, and is no change for --detailed-exitcode', () => {
    const desired = desiredSet({
      tls: [tlsManifest({ name: 'db', hostports: ['db.example.com:443'] })],
      bots: [botManifest({ name: 'ci' })],
    });
    const live = liveFromDesired(desired);
    const edited = desiredSet({
      tls: [
        tlsManifest({
          name: 'db',
          suspend: true,
          description: 'changed while suspended',
          hostports: ['db.example.com:443'],
        }),
      ],
      bots: [botManifest({ name: 'ci', suspend: true, active: false })],
    });
    const plan = buildPlan(edited, live);
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.map((b) => [b.address, b.kind])).toEqual([
      ['bot_user.ci', 'suspended'],
      ['tls_edge.db', 'suspended'],
    ]);
    expect(planHasChanges(plan)).toBe(false);
  });

  it('does not create a suspended edge, and its live hostports stay its own', () => {
    const desired = desiredSet({
      tls: [tlsManifest({ name: 'db', hostports: ['db.example.com:443'] })],
    });
    const live = liveFromDesired(desired);
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({ name: 'db', suspend: true, hostports: [] }),
          tlsManifest({ name: 'other', hostports: ['db.example.com:443'] }),
          tlsManifest({ name: 'new', suspend: true, hostports: ['new.example.com:443'] }),
        ],
      }),
      live,
    );
    expect(ops(plan)).toEqual([]);
    expect(plan.blocked.find((b) => b.address === 'tls_edge.other')?.kind).toBe('conflict');
    expect(plan.blocked.find((b) => b.address === 'tls_edge.new')?.reason).toContain(
      'not created while suspended',
    );
  });
});
