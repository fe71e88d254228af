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
