import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { differingRules, ruleIds, ruleKey, sameRule } from '../../../src/policy-eval/rules.js';

/** Pairs whose texts as JSON are equal or not in ways a side-by-side reading could miss. */
const PAIRS: readonly (readonly [unknown, unknown])[] = [
  [
    { name: 'a', actions: [] },
    { name: 'a', actions: [] },
  ],
  [
    { name: 'a', actions: [] },
    { actions: [], name: 'a' },
  ],
  [{ name: 'a' }, { name: 'a', expressions: undefined }],
  [{ name: 'a', f: () => 1 }, { name: 'a' }],
  [
    { name: 'a', expressions: undefined },
    { name: 'a', expressions: null },
  ],
  [{ name: 'a' }, { name: 'b' }],
  [
    { name: 'app', actions: [] },
    { name: 'app', expressions: ['true'], actions: [] },
  ],
  [{ n: 1 }, { n: '1' }],
  [{ n: null }, { n: 'null' }],
  [{ n: Number.NaN }, { n: null }],
  [{ n: Number.POSITIVE_INFINITY }, { n: null }],
  [{ n: 0 }, { n: -0 }],
  [{ l: [undefined] }, { l: [null] }],
  // biome-ignore lint/suspicious/noSparseArray: a hole JSON writes as null
  [{ l: [, 1] }, { l: [null, 1] }],
  [{ l: [1, 2] }, { l: [1, 2, 3] }],
  [{ l: [] }, { l: {} }],
  [{ d: new Date(0) }, { d: '1970-01-01T00:00:00.000Z' }],
  [{ o: { toJSON: () => 'x' } }, { o: 'x' }],
  [{ o: Object.assign(Object.create(null), { a: 1 }) }, { o: { a: 1 } }],
  [{ o: { a: { b: [1, { c: true }] } } }, { o: { a: { b: [1, { c: true }] } } }],
  [{ o: { a: { b: [1, { c: true }] } } }, { o: { a: { b: [1, { c: false }] } } }],
  [null, null],
  [null, {}],
  ['x', 'x'],
];

describe('sameRule', () => {
  it.each(PAIRS.map((p, i) => [i, ...p]))(
    'agrees with the rules as JSON texts (pair %i)',
    (_i, a, b) => {
      expect(sameRule(a, b)).toBe(ruleKey(a) === ruleKey(b));
      expect(sameRule(b, a)).toBe(ruleKey(a) === ruleKey(b));
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
        { ...rule('b', ['false']), extra: undefined },
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
  const ta = a.map(ruleKey);
  const tb = b.map(ruleKey);
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

describe('differingRules, against the rules as JSON texts', () => {
  // A few rules, some alike in content as different objects, some differing in one field.
  const rule = fc.record({
    name: fc.constantFrom('a', 'b', 'c'),
    expressions: fc.constantFrom(['x'], ['y'], undefined),
    actions: fc.constantFrom([{ type: 'deny' }], [{ type: 'log' }]),
  });
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
        expect(got[0]!.map((i) => ruleKey(a[i])).sort()).toEqual(
          refA.map((i) => ruleKey(a[i])).sort(),
        );
        expect(got[1]!.map((i) => ruleKey(b[i])).sort()).toEqual(
          refB.map((i) => ruleKey(b[i])).sort(),
        );
      }),
      { seed: 20261129, numRuns: 300 },
    );
  });
});

describe('ruleIds', () => {
  it('numbers rules alike in content alike, across lists', () => {
    const ids = ruleIds([PAIRS.map((p) => p[0]), PAIRS.map((p) => p[1])]);
    const texts = [...PAIRS.map((p) => ruleKey(p[0])), ...PAIRS.map((p) => ruleKey(p[1]))];
    const flat = ids.flat();
    for (let i = 0; i < flat.length; i++)
      for (let j = 0; j < flat.length; j++)
        expect(flat[i] === flat[j], `${texts[i]} / ${texts[j]}`).toBe(texts[i] === texts[j]);
  });
});
