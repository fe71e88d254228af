/**
 * What two versions of a policy have in common, rule by rule: a rule's identity is its content
 * (`sameRule`), and in each phase the rules both versions run in the same order are a longest
 * common subsequence of the two lists; the others are the rules that differ (`differingRules`).
 * The impact preview needs no more: a request on which no differing rule fires goes through both
 * versions alike (./impact.ts). Pure.
 */
import equal from 'fast-deep-equal';
import { type PhaseRules, phaseRules } from './evaluate.js';

type Json = Readonly<Record<string, unknown>>;

/**
 * Whether two rules are alike in content (fast-deep-equal: the planner's own comparison of
 * policies): two rules alike decide alike, wherever they stand and whatever objects carry them.
 * Only "alike" must be exact: a rule taken as differing is evaluated in full, which is always
 * right. So objects fast-deep-equal cannot read (it calls `valueOf`, which an object without a
 * prototype lacks; parsed policies have none such) are not alike.
 */
export function sameRule(a: unknown, b: unknown): boolean {
  try {
    return equal(a, b);
  } catch {
    return false;
  }
}

/**
 * A rule's name where it is a string: two rules alike in content have the same one, so rules
 * are read against each other only when their names are equal (or one has none).
 */
function nameOf(rule: unknown): string | undefined {
  if (typeof rule !== 'object' || rule === null) return undefined;
  const name = (rule as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * Each rule of `lists` numbered by content: rules alike (`sameRule`) get the same number, the
 * first of them read against each later rule of the same name (or without one) once.
 */
export function ruleIds(lists: readonly (readonly unknown[])[]): number[][] {
  // Loops, not callbacks: see "How the preview's code is written" (./impact.ts).
  const seen: unknown[] = [];
  /** Numbers by name; those of rules without one are read against every rule. */
  const byName = new Map<string, number[]>();
  const unnamed: number[] = [];
  const every: number[] = [];
  const out: number[][] = [];
  for (let l = 0; l < lists.length; l++) {
    const list = lists[l] as readonly unknown[];
    const own: number[] = [];
    for (let r = 0; r < list.length; r++) {
      const rule = list[r];
      const name = nameOf(rule);
      const named = name === undefined ? undefined : byName.get(name);
      // A rule without a name may match any; one with a name, those of its name or none.
      let found =
        name === undefined ? findRule(seen, rule, every) : findRule(seen, rule, named ?? []);
      if (found === undefined && name !== undefined) found = findRule(seen, rule, unnamed);
      if (found === undefined) {
        found = seen.push(rule) - 1;
        every.push(found);
        if (name === undefined) unnamed.push(found);
        else if (named === undefined) byName.set(name, [found]);
        else named.push(found);
      }
      own.push(found);
    }
    out.push(own);
  }
  return out;
}

/** The first of `ids` whose rule in `seen` is alike `rule`. */
function findRule(
  seen: readonly unknown[],
  rule: unknown,
  ids: readonly number[],
): number | undefined {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as number;
    if (sameRule(seen[id], rule)) return id;
  }
  return undefined;
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
  for (let p = 0; p < policies.length; p++) {
    const policy = policies[p] as Json;
    const own: string[] = [];
    // In the policy's order, as `Object.values` reads it (the probes read the rules so).
    for (const key in policy) {
      if (!Object.hasOwn(policy, key)) continue;
      const list = policy[key];
      if (!Array.isArray(list)) continue;
      own.push(key);
      lists.push(list);
    }
    keys.push(own);
  }
  const ids = ruleIds(lists);
  let at = 0;
  const out: Map<string, readonly number[]>[] = [];
  for (let p = 0; p < keys.length; p++) {
    const own = keys[p] as string[];
    const byKey = new Map<string, readonly number[]>();
    for (let k = 0; k < own.length; k++) byKey.set(own[k] as string, ids[at++] as number[]);
    out.push(byKey);
  }
  return out;
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
  const byKey: [Map<string, Set<number>>, Map<string, Set<number>>] = [new Map(), new Map()];
  const last: [[number, number] | undefined, [number, number] | undefined] = [undefined, undefined];
  // Loops, not callbacks: see "How the preview's code is written" (./impact.ts).
  for (let p = 0; p < phasesA.length; p++) {
    const phaseA = phasesA[p] as PhaseRules;
    const phaseB = phasesB[p];
    if (phaseB === undefined || !Array.isArray(phaseA.rules) || !Array.isArray(phaseB.rules))
      return undefined;
    // A phase's rules are a list under its key, numbered; or none (no key, or null): no numbers.
    const kept = common(idsOf(numbers[0], phaseA.key), idsOf(numbers[1], phaseB.key));
    for (let side = 0; side < 2; side++) {
      const phase = side === 0 ? phaseA : phaseB;
      const { key } = phase;
      if (key === undefined) continue;
      const rules = phase.rules as readonly unknown[];
      const inCommon = kept[side] as Set<number>;
      const out = byKey[side] as Map<string, Set<number>>;
      for (let r = 0; r < rules.length; r++) {
        if (inCommon.has(r)) continue;
        let set = out.get(key);
        if (set === undefined) {
          set = new Set<number>();
          out.set(key, set);
        }
        set.add(r);
        last[side] = [p, r];
      }
    }
  }
  return [
    { byKey: byKey[0], last: last[0] },
    { byKey: byKey[1], last: last[1] },
  ];
}

/** The numbers of a phase's rules under `key` in one version (none: an empty list). */
function idsOf(
  numbers: ReadonlyMap<string, readonly number[]> | undefined,
  key: string | undefined,
): readonly number[] {
  return (key === undefined ? undefined : numbers?.get(key)) ?? [];
}
