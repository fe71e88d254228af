import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { differingRules, ruleIds, sameRule } from '../../../src/policy-eval/rules.js';

/** Pairs of rules alike in content or not, however their objects were made. */
const PAIRS: readonly (readonly [unknown, unknown])[] = [
  [
    { name: 'a', actions: [] },
    { name: 'a', actions: [] },
  ],
  [
    { name: 'a', actions: [] },
    { actions: [], name: 'a' },
  ],
  [
    { name: 'a', expressions: ['x'], actions: [{ type: 'deny' }] },
    JSON.parse('{"actions":[{"type":"deny"}],"expressions":["x"],"name":"a"}'),
  ],
  [{ name: 'a' }, { name: 'b' }],
  [
    { name: 'app', actions: [] },
    { name: 'app', expressions: ['true'], actions: [] },
  ],
  [{ n: 1 }, { n: '1' }],
  [{ n: null }, { n: 'null' }],
  [{ l: [1, 2] }, { l: [1, 2, 3] }],
  [{ l: [] }, { l: {} }],
  [{ o: { a: { b: [1, { c: true }] } } }, { o: { a: { b: [1, { c: true }] } } }],
  [{ o: { a: { b: [1, { c: true }] } } }, { o: { a: { b: [1, { c: false }] } } }],
  [null, null],
  [null, {}],
  ['x', 'x'],
];

/** A value as JSON with every object's keys in order: one text for one content. */
function contentText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

describe('sameRule', () => {
  it('takes a rule without a prototype as differing, never as alike', () => {
    const bare = Object.assign(Object.create(null) as object, { name: 'a' });
    expect(sameRule(bare, { name: 'a' })).toBe(false);
    expect(sameRule(bare, Object.assign(Object.create(null) as object, { name: 'a' }))).toBe(false);
  });

  it.each(PAIRS.map((p, i) => [i, ...p]))(
    "holds where the contents are the same, whatever the keys' order (pair %i)",
    (_i, a, b) => {
      expect(sameRule(a, b)).toBe(contentText(a) === contentText(b));
      expect(sameRule(b, a)).toBe(contentText(a) === contentText(b));
    },
  );
});

describe('differingRules', () => {
  it('tells rules apart by content, whatever the objects', () => {
    const rule = (name: string, expressions?: string[]) => ({
      name,
      ...(expressions === undefined ? {} : { expressions }),
      actions: [{ type: 'deny' }],
    });
    const before = { on_http_request: [rule('x', ['true']), rule('a'), rule('b', ['false'])] };
    const after = {
      on_http_request: [
        rule('a'),
        // The same content, its keys in another order.
        { actions: [{ type: 'deny' }], expressions: ['false'], name: 'b' },
        rule('c', ['true']),
      ],
    };
    const [old, now] = differingRules(before, after) ?? [];
    expect([...(old?.byKey.get('on_http_request') ?? [])]).toEqual([0]);
    expect([...(now?.byKey.get('on_http_request') ?? [])]).toEqual([2]);
  });
});

/** The rules of `a` and of `b` outside a longest common subsequence of their JSON texts. */
function referenceDiffering(a: readonly unknown[], b: readonly unknown[]): [number[], number[]] {
  const ta = a.map(contentText);
  const tb = b.map(contentText);
  const n = ta.length;
  const m = tb.length;
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      len[i]![j] =
        ta[i] === tb[j] ? len[i + 1]![j + 1]! + 1 : Math.max(len[i + 1]![j]!, len[i]![j + 1]!);
  const keptA = new Set<number>();
  const keptB = new Set<number>();
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (ta[i] === tb[j]) {
      keptA.add(i++);
      keptB.add(j++);
    } else if (len[i + 1]![j]! >= len[i]![j + 1]!) i += 1;
    else j += 1;
  }
  return [
    a.map((_, i) => i).filter((i) => !keptA.has(i)),
    b.map((_, j) => j).filter((j) => !keptB.has(j)),
  ];
}

describe('differingRules, against the rules as texts of their content', () => {
  // A few rules, some alike in content as different objects, some differing in one field.
  const rule = fc.record(
    {
      name: fc.constantFrom('a', 'b', 'c'),
      expressions: fc.constantFrom(['x'], ['y']),
      actions: fc.constantFrom([{ type: 'deny' }], [{ type: 'log' }]),
    },
    // Parsed policies' objects (with a prototype): a rule without one is never alike.
    { requiredKeys: ['name', 'actions'], noNullPrototype: true },
  );
  it('finds as many rules in common as the longest common sequence of texts (seeded)', () => {
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 8 }), fc.array(rule, { maxLength: 8 }), (a, b) => {
        const clone = (list: unknown[]) => JSON.parse(JSON.stringify(list)) as unknown[];
        const [old, now] =
          differingRules({ on_http_request: a }, { on_http_request: clone(b) }) ?? [];
        const [refA, refB] = referenceDiffering(a, b);
        // The same number differ (a longest common sequence has one length), and the same texts.
        const got = [
          [...(old?.byKey.get('on_http_request') ?? [])],
          [...(now?.byKey.get('on_http_request') ?? [])],
        ];
        expect(got.map((l) => l.length)).toEqual([refA.length, refB.length]);
        expect(got[0]!.map((i) => contentText(a[i])).sort()).toEqual(
          refA.map((i) => contentText(a[i])).sort(),
        );
        expect(got[1]!.map((i) => contentText(b[i])).sort()).toEqual(
          refB.map((i) => contentText(b[i])).sort(),
        );
      }),
      { seed: 20261129, numRuns: 300 },
    );
  });
});

describe('ruleIds', () => {
  it('numbers rules alike in content alike, across lists', () => {
    const ids = ruleIds([PAIRS.map((p) => p[0]), PAIRS.map((p) => p[1])]);
    const texts = [...PAIRS.map((p) => contentText(p[0])), ...PAIRS.map((p) => contentText(p[1]))];
    const flat = ids.flat();
    for (let i = 0; i < flat.length; i++)
      for (let j = 0; j < flat.length; j++)
        expect(flat[i] === flat[j], `${texts[i]} / ${texts[j]}`).toBe(texts[i] === texts[j]);
  });
});
