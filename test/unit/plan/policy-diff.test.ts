/**
 * Policy diffs people can review: the rules of a phase are aligned (by name where given, else by
 * content) before they are compared, so one rule inserted at the top is one rule added; a
 * changed rule shows the fields that changed; an edge's traffic policy module is compared as
 * data, not as two escaped JSON strings.
 */
import { describe, expect, it } from 'vitest';
import { alignRules } from '../../../src/plan/diff.js';
import { maskPlan } from '../../../src/plan/mask.js';
import type { Plan } from '../../../src/plan/model.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderText } from '../../../src/plan/render/text.js';
import {
  desiredSet,
  endpointManifest,
  liveEndpoint,
  liveState,
  liveTls,
  tlsManifest,
} from './builders.js';

const rule = (name: string | undefined, status: number, path = `/${name ?? 'x'}`) => ({
  ...(name === undefined ? {} : { name }),
  expressions: [`req.url.path.startsWith('${path}')`],
  actions: [{ type: 'custom-response', config: { status_code: status } }],
});

const RULES = Array.from({ length: 12 }, (_, i) => rule(`rule-${i}`, 200 + i));

function endpointPlan(before: unknown[], after: unknown[]): Plan {
  const manifest = endpointManifest({
    name: 'web',
    url: 'https://web.example.com',
    traffic_policy: { on_http_request: after },
  });
  const live = liveEndpoint({
    id: 'ep_web',
    name: 'web',
    url: 'https://web.example.com',
    traffic_policy: JSON.stringify({ on_http_request: before }),
  });
  return buildPlan(desiredSet({ endpoints: [manifest] }), liveState({ endpoints: [live] }));
}

function fieldPaths(plan: Plan): string[] {
  return (plan.changes[0]?.fields ?? []).map((f) => f.path);
}

describe('aligning rules', () => {
  it('one named rule inserted at the top is one rule added, not every rule shifted', () => {
    const plan = endpointPlan(RULES, [rule('block-bots', 403), ...RULES]);
    const paths = fieldPaths(plan);
    expect(paths.every((p) => p.startsWith('traffic_policy.on_http_request[0].'))).toBe(true);
    expect(paths).toContain('traffic_policy.on_http_request[0].name');
    const text = renderText(maskPlan(plan, []));
    expect(text).toContain('+ traffic_policy.on_http_request[0].name = "block-bots"');
    // 12 rules of 4 fields each would have been 52 lines of shifted changes.
    expect(text.split('\n').filter((l) => l.includes('traffic_policy.')).length).toBe(paths.length);
    expect(paths.length).toBeLessThan(6);
  });

  it('unnamed rules are aligned by content; a removed one is shown where it was', () => {
    const unnamed = RULES.map((r) => ({ ...r, name: undefined }));
    const plain = unnamed.map(({ name: _, ...r }) => r);
    const plan = endpointPlan(plain, plain.slice(1));
    const paths = fieldPaths(plan);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith('traffic_policy.on_http_request[0].'))).toBe(true);
    expect(plan.changes[0]?.fields.every((f) => f.after === undefined)).toBe(true);
  });

  it('a changed rule shows the field that changed, found by its name', () => {
    const after = [rule('new', 401), ...RULES.map((r, i) => (i === 5 ? rule('rule-5', 418) : r))];
    const fields = endpointPlan(RULES, after).changes[0]?.fields ?? [];
    const changed = fields.filter((f) => f.before !== undefined && f.after !== undefined);
    expect(changed).toEqual([
      {
        path: 'traffic_policy.on_http_request[6].actions[0].config.status_code',
        before: 205,
        after: 418,
        sensitive: false,
      },
    ]);
  });

  it.each([
    [
      'named, reordered',
      [{ name: 'a' }, { name: 'b' }],
      [{ name: 'b' }, { name: 'a' }],
      [
        [1, 0],
        [0, 1],
      ],
    ],
    [
      'unnamed, one inserted',
      [{ x: 1 }, { x: 2 }],
      [{ x: 0 }, { x: 1 }, { x: 2 }],
      [
        [undefined, 0],
        [0, 1],
        [1, 2],
      ],
    ],
    [
      'one edited in place',
      [{ x: 1 }, { x: 2 }],
      [{ x: 1 }, { x: 3 }],
      [
        [0, 0],
        [1, 1],
      ],
    ],
    [
      'scalars by index',
      ['a', 'b'],
      ['b'],
      [
        [0, 0],
        [1, undefined],
      ],
    ],
  ])('%s', (_, before, after, pairs) => {
    expect(alignRules(before, after)).toEqual(pairs);
  });
});

describe("an edge's traffic policy module", () => {
  it('is shown as data, rule by rule, not as two escaped JSON strings', () => {
    const policy = (rules: unknown[]) => JSON.stringify({ on_tcp_connect: rules });
    const deny = { name: 'deny', actions: [{ type: 'deny' }] };
    const allow = {
      name: 'office',
      expressions: ["conn.client_ip == '1.2.3.4'"],
      actions: [{ type: 'log' }],
    };
    const plan = buildPlan(
      desiredSet({
        tls: [
          tlsManifest({
            name: 'db',
            hostports: ['db.example.com:443'],
            traffic_policy: { value: policy([allow, deny]) },
          }),
        ],
      }),
      liveState({
        tls: [
          liveTls({
            id: 'edgtls_db',
            name: 'db',
            hostports: ['db.example.com:443'],
            traffic_policy: { enabled: true, value: policy([deny]) },
          }),
        ],
      }),
    );
    const paths = fieldPaths(plan);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith('traffic_policy.value.on_tcp_connect[0].'))).toBe(true);
    const text = renderText(maskPlan(plan, []));
    expect(text).toContain('+ traffic_policy.value.on_tcp_connect[0].name = "office"');
    expect(text).not.toContain('\\"');
  });
});
