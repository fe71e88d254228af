/**
 * What two versions of a policy have in common, rule by rule: a rule's identity is its content
 * as JSON (`sameRule`: read in place, written as text by `ruleKey` only where it must be), and
 * in each phase the rules both versions run in the same order are a longest common subsequence
 * of the two lists; the others are the rules that differ (`differingRules`). The impact preview
 * needs no more: a request on which no differing rule fires goes through both versions alike
 * (./impact.ts). Pure.
 */
import { phaseRules } from './evaluate.js';

type Json = Readonly<Record<string, unknown>>;

/** Rule texts by rule object: a policy is read, never changed, and the same rules plan after plan. */
const keys = new WeakMap<object, string>();

/** A rule's identity: its content as JSON (two rules alike in content decide alike). */
export function ruleKey(rule: unknown): string {
  if (typeof rule !== 'object' || rule === null) return JSON.stringify(rule) ?? 'undefined';
  let key = keys.get(rule);
  if (key === undefined) {
    key = JSON.stringify(rule);
    keys.set(rule, key);
  }
  return key;
}

/**
 * Whether `a` and `b` are alike as JSON, without writing either: walked side by side, plain
 * objects key by key in order, arrays item by item. Undefined when a value is one JSON writes
 * otherwise than it reads (undefined, a function, a number not finite, a hole, an object of
 * another kind): the caller then compares the texts.
 */
function sameJson(a: unknown, b: unknown): boolean | undefined {
  if (a === b) return true;
  const kindA = jsonKind(a);
  const kindB = jsonKind(b);
  if (kindA === undefined || kindB === undefined) return undefined;
  if (kindA !== kindB || kindA === 'leaf') return false;
  if (kindA === 'list') {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) {
      // A hole reads as undefined (an item that is there is rarely undefined: asked then only).
      if ((x[i] === undefined && !(i in x)) || (y[i] === undefined && !(i in y))) return undefined;
      const same = sameJson(x[i], y[i]);
      if (same !== true) return same;
    }
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const xKeys = Object.keys(x);
  const yKeys = Object.keys(y);
  // Key by key as JSON writes them: in order, leaving out those whose value it leaves out.
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < xKeys.length && leftOut(x[xKeys[i] as string])) i += 1;
    while (j < yKeys.length && leftOut(y[yKeys[j] as string])) j += 1;
    if (i === xKeys.length || j === yKeys.length) return i === xKeys.length && j === yKeys.length;
    const k = xKeys[i] as string;
    if (k !== yKeys[j]) return false;
    const same = sameJson(x[k], y[k]);
    if (same !== true) return same;
    i += 1;
    j += 1;
  }
}

/** A value JSON leaves out of an object. */
const leftOut = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** How JSON writes a value: a leaf, a list, a map, or undefined when not as it reads. */
function jsonKind(v: unknown): 'leaf' | 'list' | 'map' | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return 'leaf';
    case 'number':
      return Number.isFinite(v) ? 'leaf' : undefined;
    case 'object': {
      if (v === null) return 'leaf';
      const proto = Object.getPrototypeOf(v);
      if (Array.isArray(v))
        return proto === Array.prototype && !('toJSON' in v) ? 'list' : undefined;
      return (proto === Object.prototype || proto === null) && !('toJSON' in v) ? 'map' : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Whether two rules are alike in content (their `ruleKey`s equal), read in place where the
 * content is plain JSON (a policy parsed from a file or an answer), by text otherwise.
 */
export function sameRule(a: unknown, b: unknown): boolean {
  return sameJson(a, b) ?? ruleKey(a) === ruleKey(b);
}

/**
 * A rule's name where it is a plain string: two rules alike in content have the same one, so
 * rules are read against each other only when their names are equal (or one has none).
 */
function nameOf(rule: unknown): string | undefined {
  if (jsonKind(rule) !== 'map') return undefined;
  const name = (rule as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * Each rule of `lists` numbered by content: rules alike (`sameRule`) get the same number, the
 * first of them read against each later rule of the same name (or without one) once.
 */
export function ruleIds(lists: readonly (readonly unknown[])[]): number[][] {
  const seen: unknown[] = [];
  /** Numbers by name; those of rules without one are read against every rule. */
  const byName = new Map<string, number[]>();
  const unnamed: number[] = [];
  const find = (rule: unknown, ids: readonly number[]): number | undefined => {
    for (const id of ids) if (sameRule(seen[id], rule)) return id;
    return undefined;
  };
  return lists.map((list) =>
    list.map((rule) => {
      const name = nameOf(rule);
      const named = name === undefined ? undefined : byName.get(name);
      // A rule without a name may match any; one with a name, those of its name or none.
      const found =
        name === undefined
          ? find(
              rule,
              seen.map((_, id) => id),
            )
          : (find(rule, named ?? []) ?? find(rule, unnamed));
      if (found !== undefined) return found;
      const id = seen.push(rule) - 1;
      if (name === undefined) unnamed.push(id);
      else if (named === undefined) byName.set(name, [id]);
      else named.push(id);
      return id;
    }),
  );
}

/**
 * Every list of rules of each policy (each array under a key, in the policy's order), numbered
 * by content together (`ruleIds`): by policy, each list's numbers by its key. What the preview
 * reads of the rules that differ and of those in common is read from these, each pair of rules
 * compared once.
 */
export type RuleNumbers = readonly ReadonlyMap<string, readonly number[]>[];

export function numberRules(policies: readonly Json[]): RuleNumbers {
  const keys: string[][] = [];
  const lists: unknown[][] = [];
  for (const policy of policies) {
    const own: string[] = [];
    // In the policy's order, as `Object.values` reads it (the probes read the rules so).
    for (const [key, list] of Object.entries(policy)) {
      if (!Array.isArray(list)) continue;
      own.push(key);
      lists.push(list);
    }
    keys.push(own);
  }
  const ids = ruleIds(lists);
  let at = 0;
  return keys.map((own) => {
    const byKey = new Map<string, readonly number[]>();
    for (const key of own) byKey.set(key, ids[at++] as number[]);
    return byKey;
  });
}

/** The rules of one version that the other lacks: by phase key, their indexes, and the last. */
export interface Differing {
  readonly byKey: ReadonlyMap<string, ReadonlySet<number>>;
  /** The last differing rule (its phase's index in `phaseRules`, its index); none: undefined. */
  readonly last: readonly [number, number] | undefined;
}

/**
 * Cells of the comparison table past which the middle of two rule lists is taken as differing
 * whole (still exact, only fewer requests are told apart early): 500 rules against 500.
 */
const MAX_TABLE = 250_000;

/**
 * Indexes of `a` and of `b` (rules by their numbers, `numberRules`) in a longest common
 * subsequence of the two lists.
 */
function common(a: readonly number[], b: readonly number[]): [Set<number>, Set<number>] {
  const inA = new Set<number>();
  const inB = new Set<number>();
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) {
    inA.add(start);
    inB.add(start);
    start += 1;
  }
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
    inA.add(endA);
    inB.add(endB);
  }
  const n = endA - start;
  const m = endB - start;
  if (n === 0 || m === 0 || n * m > MAX_TABLE) return [inA, inB];
  // lengths[i][j]: the longest common subsequence of a[start+i..endA) and b[start+j..endB).
  const width = m + 1;
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[start + i] === b[start + j]
          ? (lengths[(i + 1) * width + j + 1] as number) + 1
          : Math.max(lengths[(i + 1) * width + j] as number, lengths[i * width + j + 1] as number);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[start + i] === b[start + j]) {
      inA.add(start + i);
      inB.add(start + j);
      i += 1;
      j += 1;
    } else if ((lengths[(i + 1) * width + j] as number) >= (lengths[i * width + j + 1] as number))
      i += 1;
    else j += 1;
  }
  return [inA, inB];
}

/**
 * The rules each of `a` and `b` has that the other does not run in the same order, or
 * undefined when a phase's rules are not a list (then nothing is known in common).
 */
export function differingRules(
  a: Json,
  b: Json,
  numbers: RuleNumbers = numberRules([a, b]),
): [Differing, Differing] | undefined {
  const phasesA = phaseRules(a);
  const phasesB = phaseRules(b);
  const out: [Map<string, Set<number>>, Map<string, Set<number>>] = [new Map(), new Map()];
  const last: [[number, number] | undefined, [number, number] | undefined] = [undefined, undefined];
  for (const [p, phaseA] of phasesA.entries()) {
    const phaseB = phasesB[p];
    if (phaseB === undefined || !Array.isArray(phaseA.rules) || !Array.isArray(phaseB.rules))
      return undefined;
    const lists = [phaseA.rules as unknown[], phaseB.rules as unknown[]] as const;
    // A phase's rules are a list under its key, numbered; or none (no key, or null): no numbers.
    const idsOf = (side: 0 | 1, key: string | undefined) =>
      (key === undefined ? undefined : numbers[side]?.get(key)) ?? [];
    const kept = common(idsOf(0, phaseA.key), idsOf(1, phaseB.key));
    for (const side of [0, 1] as const) {
      const key = (side === 0 ? phaseA : phaseB).key;
      for (let r = 0; r < lists[side].length; r++) {
        if (kept[side].has(r) || key === undefined) continue;
        const set = out[side].get(key) ?? new Set<number>();
        set.add(r);
        out[side].set(key, set);
        last[side] = [p, r];
      }
    }
  }
  return [
    { byKey: out[0], last: last[0] },
    { byKey: out[1], last: last[1] },
  ];
}
