import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { HttpsEdge, LiveSnapshot, TlsEdge } from '../../../src/api/index.js';
import { importLive } from '../../../src/apply/import.js';
import { route as liveRoute } from '../api/records.js';
import { buildFrom, errorLines } from '../manifest/helpers.js';
import { owned } from './fake.js';

function https(id: string, metadata: string | null, extra: Partial<HttpsEdge> = {}): HttpsEdge {
  return {
    id,
    created_at: '2024-01-01T00:00:00Z',
    description: null,
    metadata,
    hostports: ['Shop.Example.com:443'],
    mutual_tls: null,
    tls_termination: { enabled: true, terminate_at: 'edge', min_version: '1.2' },
    routes: [],
    ...extra,
  };
}

function tls(id: string, metadata: string | null): TlsEdge {
  return {
    id,
    created_at: '2024-01-01T00:00:00Z',
    description: 'tcp',
    metadata,
    hostports: [],
    backend: { enabled: false, backend: { id: 'bkdtg_1' } },
    ip_restriction: null,
    mutual_tls: null,
    tls_termination: { enabled: true, terminate_at: 'upstream', min_version: null },
    traffic_policy: null,
  };
}

function live(partial: Partial<LiveSnapshot>): LiveSnapshot {
  return {
    tlsEdges: [],
    httpsEdges: [],
    botUsers: [],
    cloudEndpoints: [],
    calls: { tls: 1, https: 1, botUsers: 1, endpoints: 1 },
    ...partial,
  };
}

const options = { owner: 'default', schemaUrl: 'schema.json' };

describe('importLive', () => {
  it('writes owned edges in manifest form: IDs for Refs, defaults and zero values left out', () => {
    const route = liveRoute('edghts_1', 'edghtsrt_1', {
      backend: { enabled: true, backend: { id: 'bkdhr_1' } },
      oauth: {
        enabled: true,
        provider: {
          google: {
            client_id: 'cid',
            client_secret: 'hunter2-value',
            scopes: [],
            email_domains: ['a.com'],
          },
          github: null,
        },
        options_passthrough: false,
        cookie_prefix: 'svc.',
        inactivity_timeout: 0,
        maximum_duration: 0,
        auth_check_interval: 0,
      },
    } as unknown as Partial<HttpsEdge['routes'][number]>);
    const result = importLive(
      live({
        httpsEdges: [
          https('edghts_1', JSON.stringify({ ...JSON.parse(owned('shop')), team: 'web' }), {
            routes: [route],
          }),
        ],
      }),
      options,
    );
    expect(result.files.map((f) => f.file)).toEqual(['https-shop.yaml']);
    const text = result.files[0]?.text ?? '';
    expect(text.startsWith('# yaml-language-server: $schema=schema.json\n')).toBe(true);
    expect(text).not.toContain('hunter2-value');
    expect(parse(text)).toEqual({
      kind: 'HTTPSEdge',
      name: 'shop',
      metadata: { team: 'web' },
      hostports: ['Shop.Example.com:443'],
      // Set live with the server's defaults only: still set, so still in the manifest.
      tls_termination: {},
      routes: [
        {
          match_type: 'path_prefix',
          match: '/',
          backend: { backend_id: 'bkdhr_1' },
          oauth: {
            provider: {
              google: {
                client_id: 'cid',
                client_secret: {
                  env: 'EDGESYNC_HTTPS_EDGE_SHOP_ROUTE1_OAUTH_PROVIDER_GOOGLE_CLIENT_SECRET',
                },
                email_domains: ['a.com'],
              },
            },
          },
        },
      ],
    });
    expect(result.secrets).toEqual([
      {
        env: 'EDGESYNC_HTTPS_EDGE_SHOP_ROUTE1_OAUTH_PROVIDER_GOOGLE_CLIENT_SECRET',
        address: 'https_edge.shop.route["/"]',
        path: 'oauth.provider.google.client_secret',
      },
    ]);
  });

  it.each([
    [false, ['https-shop.yaml']],
    [true, ['https-shop.yaml', 'https-shop.example.com.yaml', 'tls-edgtls_9.yaml']],
  ])('with all=%s imports %j', (all, files) => {
    const result = importLive(
      live({
        httpsEdges: [
          https('edghts_1', owned('shop')),
          https('edghts_2', 'hand made'),
          https('edghts_3', owned('x', 'team-b')),
        ],
        tlsEdges: [tls('edgtls_9', null)],
      }),
      { ...options, all },
    );
    expect(result.files.map((f) => f.file)).toEqual(files);
    expect(result.notes.join('\n')).toMatch(/owned by "team-b", skipped/);
    if (all) {
      const foreign = result.files.find((f) => f.adopts === 'edghts_2');
      expect(parse(foreign?.text ?? '')).toMatchObject({
        id: 'edghts_2',
        name: 'shop.example.com',
      });
      const t = parse(result.files[2]?.text ?? '') as Record<string, unknown>;
      expect(t).toEqual({
        kind: 'TLSEdge',
        name: 'edgtls_9',
        id: 'edgtls_9',
        description: 'tcp',
        backend: { enabled: false, backend_id: 'bkdtg_1' },
        tls_termination: { terminate_at: 'upstream' },
      });
    }
  });

  it.each([
    ['a path', '../../../tmp/escape'],
    ['an absolute path', '/etc/cron.d/x'],
    ['upper case', 'Shop'],
  ])(
    'skips an owned edge whose edgesync/name is %s (it would become the file name)',
    (_what, name) => {
      const result = importLive(
        live({
          httpsEdges: [https('edghts_1', owned(name)), https('edghts_2', owned('fine'))],
        }),
        options,
      );
      expect(result.files.map((f) => f.file)).toEqual(['https-fine.yaml']);
      expect(result.notes).toEqual([
        `edghts_1: its edgesync/name ${JSON.stringify(name)} is not a valid manifest name, skipped`,
      ]);
    },
  );

  it('writes bot users, skipping names a manifest cannot carry', () => {
    const bot = (id: string, name: string, active: boolean) => ({
      id,
      created_at: '2024-01-01T00:00:00Z',
      name,
      active,
    });
    const result = importLive(
      live({
        botUsers: [
          bot('bot_1', 'ci', true),
          bot('bot_2', 'Deploy Bot', false),
          bot('bot_3', 'ops', false),
        ],
      }),
      options,
    );
    expect(result.files.map((f) => [f.file, parse(f.text)])).toEqual([
      ['bot-ci.yaml', { kind: 'ServiceUser', name: 'ci' }],
      ['bot-ops.yaml', { kind: 'ServiceUser', name: 'ops', active: false }],
    ]);
    expect(result.notes.join('\n')).toMatch(/"Deploy Bot" is not a valid manifest name/);
  });
});

describe('importLive: cloud endpoints', () => {
  const policy = {
    on_http_request: [
      {
        actions: [
          { type: 'oauth', config: { provider: 'google', client_secret: 'live-secret-xyz' } },
          { type: 'custom-response', config: { status_code: 200 } },
        ],
      },
    ],
  };
  const endpoint = (id: string, type: string, metadata: string | undefined, extra = {}) => ({
    id,
    type,
    created_at: '2024-01-01T00:00:00Z',
    url: 'https://web.example.com',
    traffic_policy: JSON.stringify(policy),
    bindings: ['public'],
    pooling_enabled: false,
    ...(metadata === undefined ? {} : { metadata }),
    ...extra,
  });

  it('writes ours as CloudEndpoint manifests, the policy a mapping, secrets as env', () => {
    const result = importLive(
      live({
        cloudEndpoints: [
          endpoint('ep_1', 'cloud', owned('web'), { description: 'site' }),
          endpoint('ep_2', 'agent', owned('agent')),
          endpoint(
            'ep_3',
            'cloud',
            JSON.stringify({ 'edgesync/owner': 'team-b', 'edgesync/name': 'x' }),
          ),
          endpoint('ep_4', 'cloud', undefined),
        ],
      }),
      options,
    );
    expect(result.files.map((f) => `${f.kind} ${f.file}`)).toEqual([
      'CloudEndpoint endpoint-web.yaml',
    ]);
    const text = result.files[0]?.text ?? '';
    expect(text).not.toContain('live-secret-xyz');
    expect(parse(text)).toEqual({
      kind: 'CloudEndpoint',
      name: 'web',
      url: 'https://web.example.com',
      description: 'site',
      traffic_policy: {
        on_http_request: [
          {
            actions: [
              {
                type: 'oauth',
                config: {
                  provider: 'google',
                  client_secret: {
                    env: 'EDGESYNC_CLOUD_ENDPOINT_WEB_TRAFFIC_POLICY_ON_HTTP_REQUEST_0_ACTIONS_0_CONFIG_CLIENT_SECRET',
                  },
                },
              },
              { type: 'custom-response', config: { status_code: 200 } },
            ],
          },
        ],
      },
    });
    expect(result.secrets.map((s) => s.address)).toEqual(['cloud_endpoint.web']);
    expect(result.notes.join('\n')).toMatch(/ep_3: owned by "team-b", skipped/);
    expect(result.notes.join('\n')).toMatch(/1 cloud endpoint\(s\) not managed by edgesync/);
  });

  it('applies one credential rule to every kind: nothing that looks like a credential is written in clear', () => {
    const KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
    const GHP = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
    const AKIA = 'AKIAIOSFODNN7EXAMPLE';
    const PASSWORD = 'password=hunter22';
    const leaky = {
      on_http_request: [
        {
          expressions: [`req.headers['x-token'][0] == '${GHP}'`],
          actions: [
            { type: 'add-headers', config: { headers: { 'x-upstream': `token ${GHP}` } } },
            { type: 'add-headers', config: { headers: { 'x-aws': AKIA } } },
            { type: 'custom-response', config: { status_code: 200, body: KEY } },
          ],
        },
        { actions: [{ type: 'deny' }] },
      ],
    };
    const edgeDescription = `an edge, ${PASSWORD}`;
    const result = importLive(
      live({
        cloudEndpoints: [
          endpoint('ep_1', 'cloud', owned('web'), {
            description: `the site, ${PASSWORD}`,
            traffic_policy: JSON.stringify(leaky),
          }),
        ],
        httpsEdges: [
          https('edghts_1', JSON.stringify({ ...JSON.parse(owned('shop')), deploy: AKIA }), {
            description: edgeDescription,
          }),
        ],
      }),
      options,
    );
    const text = result.files.map((f) => f.text).join('\n');
    // Where a reference can stand, nothing is left in clear, for the endpoint as for the edge.
    for (const secret of ['hunter22', AKIA, 'BEGIN RSA PRIVATE KEY', `token ${GHP}`]) {
      expect(text).not.toContain(secret);
    }
    const endpointDoc = parse(result.files.find((f) => f.kind === 'CloudEndpoint')?.text ?? '');
    expect(endpointDoc.description).toEqual({ env: 'EDGESYNC_CLOUD_ENDPOINT_WEB_DESCRIPTION' });
    const actions = endpointDoc.traffic_policy.on_http_request[0].actions;
    expect(actions[0].config.headers['x-upstream']).toHaveProperty('env');
    expect(actions[1].config.headers['x-aws']).toHaveProperty('env');
    expect(actions[2].config.body).toHaveProperty('env');
    expect(parse(result.files.find((f) => f.kind === 'HTTPSEdge')?.text ?? '').description).toEqual(
      { env: 'EDGESYNC_HTTPS_EDGE_SHOP_DESCRIPTION' },
    );
    // Each is said, with its variable; a CEL expression takes no reference: said so.
    const warnings = result.warnings.join('\n');
    expect(warnings).toMatch(
      /^cloud_endpoint\.web description looks like it holds an assignment of a secret; it is written as \{ env: EDGESYNC_CLOUD_ENDPOINT_WEB_DESCRIPTION \}/m,
    );
    expect(warnings).toMatch(/x-upstream looks like it holds a GitHub token/);
    expect(warnings).toMatch(/x-aws looks like it holds an AWS access key/);
    expect(warnings).toMatch(/body looks like it holds a private key/);
    expect(warnings).toMatch(/^https_edge\.shop description looks like it holds/m);
    expect(warnings).toMatch(/^https_edge\.shop metadata\.deploy looks like it holds an AWS/m);
    expect(warnings).toMatch(
      /expressions\.0 looks like it holds a GitHub token; this field takes no \{ env \} reference, so it is written to the manifest as it is/,
    );
    // The files validate once the variables are set to the live values.
    const env = Object.fromEntries(result.secrets.map((v) => [v.env, 'value-from-env']));
    const built = buildFrom(Object.fromEntries(result.files.map((f) => [f.file, f.text])), { env });
    expect(errorLines(built)).toEqual([]);
  });

  it('writes only the fields of the owner’s definition, and names a one-of choice with no settings', () => {
    const route = liveRoute('edghts_1', 'edghtsrt_1', {
      oauth: {
        enabled: true,
        provider: { google: { client_id: null, client_secret: null, scopes: [] }, github: null },
        options_passthrough: false,
        cookie_prefix: 'svc.',
        inactivity_timeout: 0,
        maximum_duration: 0,
        auth_check_interval: 300,
      },
    } as unknown as Partial<HttpsEdge['routes'][number]>);
    const result = importLive(
      live({
        httpsEdges: [
          https('edghts_1', owned('shop'), {
            tls_termination: { enabled: true, terminate_at: 'agent', min_version: '1.0' },
            routes: [route],
          }),
        ],
      }),
      options,
    );
    const doc = parse(result.files[0]?.text ?? '');
    // An HTTPS edge's TLS termination has no terminate_at (its definition does not list it),
    // whatever the live record says.
    expect(doc.tls_termination).toEqual({ min_version: '1.0' });
    // The managed application: every setting unset, the provider still named (after the rest,
    // as import has always written it).
    expect(doc.routes[0].oauth).toEqual({ auth_check_interval: 300, provider: { google: {} } });
    expect(Object.keys(doc.routes[0].oauth)).toEqual(['auth_check_interval', 'provider']);
  });
});
