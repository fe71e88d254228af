/**
 * `{ env }` / `{ file }` references in the migration: a value that must be written into CEL, a
 * name or a URL cannot stay a reference, so it is a located error (never resolved into the
 * output); a value inside an action's config stays the same reference.
 */
import { describe, expect, it } from 'vitest';
import { translateEdge } from '../../../src/migrate/translate.js';
import { edgeFromYaml } from './helpers.js';

const BACKEND = 'bkdtg_2kt3xG55hdajmiOILUFbeDE0v5z';
const BACKENDS = new Map([
  [BACKEND, 'https://web.internal'],
  ['bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a', 'tls://db.internal:5432'],
]);

/** Resolved values that must never reach an endpoint. */
const ENV = {
  EDGE_NAME: 'secretedge',
  HP: 'secret-host.example.com:443',
  ROUTE_PATH: '/secret-path',
  MATCH_TYPE: 'path_prefix',
  HEADER: 'x-secret-header',
  IPP: 'ipp_2YvG88zHTBUrwWfAPU0bnvSECRET',
  CA: 'ca_2YvG88zHTBUrwWfAPU0bnv6SECRET',
  BACKEND_ID: BACKEND,
  AT: 'edge',
  MIN: '1.3',
  OLD: '1.0',
};

function translate(yaml: string) {
  return translateEdge(edgeFromYaml(yaml, 'edges.yaml', ENV), BACKENDS);
}

const httpsEdge = (edge: string, route: string) => `kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
${edge}routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: ${BACKEND} }
${route}`;

const tlsEdge = (fields: string) => `kind: TLSEdge
name: db
hostports: [db.example.com:443]
backend: { backend_id: bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a }
${fields}`;

function leaked(value: unknown): string[] {
  const text = JSON.stringify(value);
  return Object.values(ENV).filter(
    (v) => v.length > 6 && v !== BACKEND && v !== 'path_prefix' && text.includes(v),
  );
}

describe('translateEdge: a reference where the value would be written into CEL, a name or a URL', () => {
  it.each([
    ['the edge name', httpsEdge('', '').replace('name: shop', 'name: { env: EDGE_NAME }'), 'name'],
    [
      'a hostport',
      httpsEdge('', '').replace('[shop.example.com:443]', '[shop.example.com:443, { env: HP }]'),
      'hostports[1]',
    ],
    [
      "a route's match",
      httpsEdge('', '').replace('match: /', 'match: { env: ROUTE_PATH }'),
      'routes[0].match',
    ],
    [
      "a route's match_type",
      httpsEdge('', '').replace('match_type: path_prefix', 'match_type: { env: MATCH_TYPE }'),
      'routes[0].match_type',
    ],
    [
      'a request header name to remove',
      httpsEdge('', '    request_headers: { remove: [x-a, { env: HEADER }] }\n'),
      'routes[0].request_headers.remove[1]',
    ],
    [
      'a response header name to remove',
      httpsEdge('', '    response_headers: { remove: [{ env: HEADER }] }\n'),
      'routes[0].response_headers.remove[0]',
    ],
    [
      'a backend ID (the mapping is keyed by the ID as written)',
      httpsEdge('', '').replace(`backend_id: ${BACKEND}`, 'backend_id: { env: BACKEND_ID }'),
      'routes[0].backend.backend_id',
    ],
    [
      "a TLS edge's terminate_at",
      tlsEdge('tls_termination: { terminate_at: { env: AT } }\n'),
      'tls_termination.terminate_at',
    ],
  ])('%s is a located error, and the value reaches no endpoint', (_what, yaml, path) => {
    const { endpoints, diagnostics } = translate(yaml);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        path,
        file: 'edges.yaml',
        line: expect.any(Number),
        column: expect.any(Number),
        message: expect.stringContaining('read from env or file'),
      }),
    );
    expect(leaked(endpoints)).toEqual([]);
    expect(leaked(diagnostics)).toEqual([]);
  });

  it("a route's match written as a reference is not resolved into the guards or the rule names", () => {
    const { endpoints } = translate(
      httpsEdge('', '    compression: {}\n').replace('match: /', 'match: { env: ROUTE_PATH }'),
    );
    expect(JSON.stringify(endpoints)).not.toContain('/secret-path');
  });
});

describe('translateEdge: a reference inside an action config stays a reference', () => {
  it('ip_policy_ids on a TLS edge and on a route', () => {
    const tls = translate(tlsEdge('ip_restriction: { ip_policy_ids: [{ env: IPP }] }\n'));
    expect(tls.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(tls.endpoints[0]!.traffic_policy.on_tcp_connect![0]!.actions[0]).toEqual({
      type: 'restrict-ips',
      config: { enforce: true, ip_policies: [{ env: 'IPP' }] },
    });
    const https = translate(
      httpsEdge(
        '',
        '    ip_restriction: { ip_policy_ids: [ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY, { env: IPP }] }\n',
      ),
    );
    const actions = https.endpoints[0]!.traffic_policy.on_http_request!.flatMap((r) => r.actions);
    expect(actions.find((a) => a.type === 'restrict-ips')!.config!.ip_policies).toEqual([
      'ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY',
      { env: 'IPP' },
    ]);
    expect(leaked(https.endpoints)).toEqual([]);
  });

  it("mutual TLS's certificate_authority_ids and tls_termination.min_version", () => {
    const { endpoints, diagnostics } = translate(
      tlsEdge(
        'mutual_tls: { certificate_authority_ids: [{ env: CA }] }\ntls_termination: { min_version: { env: MIN } }\n',
      ),
    );
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(endpoints[0]!.traffic_policy.on_tcp_connect![0]!.actions[0]!.config).toEqual({
      min_version: { env: 'MIN' },
      mutual_tls_certificate_authorities: [{ env: 'CA' }],
      mutual_tls_verification_strategy: 'require-and-verify',
    });
  });

  it('an HTTPS edge keeps its CA references too', () => {
    const { endpoints } = translate(
      httpsEdge('mutual_tls: { certificate_authority_ids: [{ env: CA }] }\n', ''),
    );
    expect(endpoints[0]!.traffic_policy.on_tcp_connect![0]!.actions[0]!.config).toMatchObject({
      mutual_tls_certificate_authorities: [{ env: 'CA' }],
    });
    expect(leaked(endpoints)).toEqual([]);
  });

  it('a min_version reference that reads 1.0 is the same warning as a written 1.0, and becomes 1.2', () => {
    const { endpoints, diagnostics } = translate(
      tlsEdge('tls_termination: { min_version: { env: OLD } }\n'),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'warning', path: 'tls_termination.min_version' }),
    );
    expect(endpoints[0]!.traffic_policy.on_tcp_connect![0]!.actions[0]!.config).toEqual({
      min_version: '1.2',
    });
  });
});
