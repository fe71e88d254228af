/** `{ env }` / `{ file }` references: where they are recognised, what they read, what is sensitive. */
import { describe, expect, it } from 'vitest';
import { buildFrom, errorLines } from './helpers.js';

describe('secret references', () => {
  it('resolves env and file references in any string field and marks them sensitive', () => {
    const result = buildFrom(
      {
        'teams/web/shop.yaml': `kind: HTTPSEdge
name: shop
description: { env: SHOP_DESCRIPTION }
metadata:
  env: { env: DEPLOY_ENV }
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: { file: ids/backend.txt } }
    request_headers:
      add:
        env: literal
        X-Key: { env: API_KEY }
    traffic_policy: { value: { file: ../../policies/web.json } }
`,
      },
      {
        env: { SHOP_DESCRIPTION: 'The shop', DEPLOY_ENV: 'prod', API_KEY: 'k-123' },
        refFiles: {
          'teams/web/ids/backend.txt': 'bkdhr_2abc\n',
          'policies/web.json': '{"on_http_request":[]}\r\n',
        },
      },
    );
    expect(errorLines(result)).toEqual([]);
    if (!result.ok) return;
    const edge = result.set.httpsEdges[0];
    expect(edge?.description).toBe('The shop');
    // A label called `env` whose value is a plain string stays a label.
    expect(edge?.metadata).toEqual({ env: 'prod' });
    expect(edge?.sensitive).toEqual([['description'], ['metadata', 'env']]);
    const route = edge?.routes[0];
    expect(route?.backend?.backend_id).toBe('bkdhr_2abc');
    expect(route?.request_headers?.add).toEqual({ env: 'literal', 'X-Key': 'k-123' });
    expect(route?.traffic_policy?.value).toBe('{"on_http_request":[]}');
    expect(route?.sensitive).toEqual([
      ['backend', 'backend_id'],
      ['request_headers', 'add', 'X-Key'],
      ['traffic_policy', 'value'],
    ]);
  });

  it('drops exactly one trailing newline from a file', () => {
    const result = buildFrom(
      { 'a.yaml': 'kind: TLSEdge\nname: x\ndescription: { file: d.txt }\n' },
      { refFiles: { 'd.txt': 'two lines\n\n' } },
    );
    expect(result.ok && result.set.tlsEdges[0]?.description).toBe('two lines\n');
  });

  it('an empty variable is a value, not a missing one', () => {
    const result = buildFrom(
      { 'a.yaml': 'kind: TLSEdge\nname: x\ndescription: { env: EMPTY }\n' },
      { env: { EMPTY: '' } },
    );
    expect(result.ok && result.set.tlsEdges[0]?.description).toBe('');
  });

  it('a mapping is not a reference where the schema wants a mapping', () => {
    // `traffic_policy.value` may be a mapping: one with other keys is a policy, not a reference.
    const result = buildFrom({
      'a.yaml':
        'kind: TLSEdge\nname: x\ntraffic_policy: { value: { env: x, on_tcp_connect: [] } }\n',
    });
    expect(result.ok && result.set.tlsEdges[0]?.traffic_policy?.value).toBe(
      '{"env":"x","on_tcp_connect":[]}',
    );
  });

  it('reports every failed reference, and nothing else about those fields', () => {
    const result = buildFrom({
      'a.yaml': `kind: HTTPSEdge
name: x
routes:
  - match_type: path_prefix
    match: /
    oidc:
      issuer: { env: ISSUER }
      client_id: { env: "" }
      client_secret: { file: nope.txt }
`,
    });
    expect(errorLines(result)).toEqual([
      'a.yaml:7:22: routes[0].oidc.issuer: environment variable ISSUER is not set',
      'a.yaml:8:25: routes[0].oidc.client_id: "env" must be a non-empty string',
      'a.yaml:9:30: routes[0].oidc.client_secret: file nope.txt not found',
    ]);
  });
});
