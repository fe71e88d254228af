/**
 * Sensitive paths are segments, not text: a key holding `.` or `[` (a label `team.name`, a header
 * `X.Api.Key`, a policy header `x.api`) is one key, never the path of another field. Text paths
 * split on their dots would mask the wrong value (or none) and show the secret.
 */
import { describe, expect, it } from 'vitest';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { MASKED, secretValues, sensitiveValues } from '../../../src/manifest/secrets.js';
import { Sensitivity } from '../../../src/plan/diff.js';
import { maskPlan } from '../../../src/plan/mask.js';
import type { Plan } from '../../../src/plan/model.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderJson } from '../../../src/plan/render/json.js';
import { renderText } from '../../../src/plan/render/text.js';
import { liveState } from '../plan/builders.js';
import { buildFrom, errorLines } from './helpers.js';

/** One resource where `a.b` the key and `a` then `b` both exist, and so do `a[0]` and `a`, 0. */
const twins = {
  m: { 'a.b': 'hidden-dot', a: { b: 'shown-nested' }, 'l[0]': 'hidden-bracket', l: ['shown-item'] },
};

describe('sensitive paths as segments', () => {
  it('a key holding "." or "[" names that key only: its values, not its look-alikes', () => {
    const set = {
      tlsEdges: [
        {
          ...twins,
          sensitive: [
            ['m', 'a.b'],
            ['m', 'l[0]'],
          ],
        },
      ],
      httpsEdges: [],
      botUsers: [],
      cloudEndpoints: [],
    } as unknown as DesiredSet;
    expect(sensitiveValues(set).sort()).toEqual(['hidden-bracket', 'hidden-dot']);
  });

  it('sensitivity of a field: the key with a dot is not the nested path it reads like', () => {
    const s = new Sensitivity([['metadata', 'a.b']]);
    expect(s.isSensitive(['metadata', 'a.b'])).toBe(true);
    expect(s.isSensitive(['metadata'])).toBe(true);
    expect(s.isSensitive(['metadata', 'a', 'b'])).toBe(false);
    expect(s.isSensitive(['metadata', 'a'])).toBe(false);
    expect(new Sensitivity([['metadata', 'a']]).isSensitive(['metadata', 'a.b'])).toBe(false);
  });

  it("an operation's body is masked at the key itself, and the paths are shown formatted", () => {
    const plan: Plan = {
      format_version: 2,
      owner: 'default',
      changes: [
        {
          address: 'tls_edge.x',
          kind: 'tls_edge',
          name: 'x',
          root: 'tls_edge.x',
          action: 'create',
          reason: 'not found live',
          fields: [],
          modules: [],
          operations: [
            {
              method: 'POST',
              target: { kind: 'edges', edge_kind: 'tls' },
              path: '/edges/tls',
              phase: 'main',
              description: 'create',
              sensitive_paths: [
                ['m', 'l[0]'],
                ['m', 'a.b'],
              ],
              body: twins,
            },
          ],
        },
      ],
      blocked: [],
      warnings: [],
      summary: { create: 1, update: 0, delete: 0, adopt: 0, noop: 0 },
    };
    const op = maskPlan(plan, []).changes[0]?.operations[0];
    expect(op?.body).toEqual({
      m: { 'a.b': MASKED, a: { b: 'shown-nested' }, 'l[0]': MASKED, l: ['shown-item'] },
    });
    expect(op?.sensitive_paths).toEqual(['m["a.b"]', 'm["l[0]"]']);
    // The plan in memory is left as it was.
    expect(plan.changes[0]?.operations[0]?.body).toBe(twins);
  });

  it('from the manifests to every output: dotted header names and policy keys, secret and plain', () => {
    const built = buildFrom(
      {
        'shop.yaml': [
          'kind: HTTPSEdge',
          'name: shop',
          'hostports: ["shop.example.com:443"]',
          'routes:',
          '  - match_type: path_prefix',
          '    match: /',
          '    request_headers: { add: { "X.Api.Key": { env: K1 }, "x.api": plain-x-api, X: plain-x } }',
          '',
        ].join('\n'),
        'web.yaml': [
          'kind: CloudEndpoint',
          'name: web',
          'url: https://web.example.com',
          'traffic_policy:',
          '  on_http_request:',
          '    - actions:',
          '        - type: add-headers',
          '          config: { headers: { "x.api": { env: K2 }, x: plain-policy } }',
          '        - type: deny',
          '',
        ].join('\n'),
      },
      { env: { K1: 'secret-header-1', K2: 'secret-policy-2' } },
    );
    expect(errorLines(built)).toEqual([]);
    if (!built.ok) return;
    const route = built.set.httpsEdges[0]?.routes[0];
    expect(route?.sensitive).toEqual([['request_headers', 'add', 'X.Api.Key']]);
    expect(built.set.cloudEndpoints[0]?.sensitive).toEqual([
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'headers', 'x.api'],
    ]);

    const live = liveState();
    const plan = buildPlan(built.set, live, { owner: 'default' });
    const masked = maskPlan(plan, secretValues(built.set, { httpsEdges: [], cloudEndpoints: [] }));
    const json = renderJson(masked);
    const text = renderText(masked, { color: false });
    for (const out of [json, text]) {
      expect(out).not.toContain('secret-header-1');
      expect(out).not.toContain('secret-policy-2');
      // The look-alike keys beside them are no secret, and are shown.
      expect(out).toContain('plain-x-api');
      expect(out).toContain('plain-x');
    }
    const routeOp = masked.changes.find((c) => c.kind === 'route')?.operations[0];
    expect(routeOp?.sensitive_paths).toEqual(['request_headers.add["X.Api.Key"]']);
    expect(routeOp?.body).toMatchObject({
      request_headers: { add: { 'X.Api.Key': MASKED, 'x.api': 'plain-x-api', X: 'plain-x' } },
    });
    const fields = masked.changes.find((c) => c.kind === 'cloud_endpoint')?.fields ?? [];
    const headers = 'traffic_policy.on_http_request[0].actions[0].config.headers';
    expect(fields.find((f) => f.path === `${headers}["x.api"]`)).toMatchObject({
      after: MASKED,
      sensitive: true,
    });
    expect(fields.find((f) => f.path === `${headers}.x`)).toMatchObject({
      after: 'plain-policy',
      sensitive: false,
    });
  });
});

describe('credential headers in a policy, however they are written', () => {
  it('an add-headers or custom-response credential header is sensitive as a literal too', () => {
    const built = buildFrom({
      'web.yaml': [
        'kind: CloudEndpoint',
        'name: web',
        'url: https://web.example.com',
        'traffic_policy:',
        '  on_http_request:',
        '    - actions:',
        '        - type: add-headers',
        '          config:',
        '            headers:',
        '              authorization: Bearer literal-bearer-77',
        '              x-api-key: literal-api-key-88',
        '              x-trace: shown-trace',
        '        - type: custom-response',
        '          config: { status_code: 200, headers: { set-cookie: literal-cookie-99 } }',
        '',
      ].join('\n'),
    });
    expect(errorLines(built)).toEqual([]);
    if (!built.ok) return;
    const at = ['traffic_policy', 'on_http_request', 0, 'actions'] as const;
    expect(built.set.cloudEndpoints[0]?.sensitive).toEqual([
      [...at, 0, 'config', 'headers', 'authorization'],
      [...at, 0, 'config', 'headers', 'x-api-key'],
      [...at, 1, 'config', 'headers', 'set-cookie'],
    ]);
    const plan = buildPlan(built.set, liveState(), { owner: 'default' });
    const masked = maskPlan(plan, secretValues(built.set, { httpsEdges: [], cloudEndpoints: [] }));
    const fields = masked.changes[0]?.fields ?? [];
    const headers = 'traffic_policy.on_http_request[0].actions[0].config.headers';
    expect(fields.find((f) => f.path === `${headers}.authorization`)).toMatchObject({
      after: MASKED,
      sensitive: true,
    });
    for (const out of [renderJson(masked), renderText(masked, { color: false })]) {
      for (const secret of ['literal-bearer-77', 'literal-api-key-88', 'literal-cookie-99']) {
        expect(out).not.toContain(secret);
      }
      expect(out).toContain('shown-trace');
    }
  });
});
