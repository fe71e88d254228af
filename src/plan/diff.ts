/**
 * The per-module diff and the field-level before/after lists of the plan. Pure. A module is
 * `unchanged`, `set` (added or changed: the manifest's whole value is written) or `removed`;
 * both sides are compared in canonical form (./normalize.ts), so only real differences count.
 */
import equal from 'fast-deep-equal';
import { compareCodeUnits } from '../compare.js';
import { Interned } from '../intern.js';
import { type FieldPath, formatPath, type Segment } from '../manifest/paths.js';
import { parsePolicyText } from '../manifest/policy-text.js';
import { isSecretField } from '../manifest/secrets.js';
import type { FieldChange, ModuleChange } from './model.js';
import { canonicalModule, type Plain, type PlainObject } from './normalize.js';

export type ModuleStatus = ModuleChange['status'];

export interface ModuleDiff {
  readonly module: string;
  readonly status: ModuleStatus;
  /** Canonical live value (server defaults the manifest leaves unset are left out). */
  readonly before: PlainObject | undefined;
  /** Canonical desired value. */
  readonly after: PlainObject | undefined;
}

/**
 * Diffs one module. `desired` is the manifest's value (write shape), `live` the live value
 * already in write shape (`liveModuleToWrite`). Undefined when the module is set on neither side.
 */
export function diffModule(
  module: string,
  desired: Readonly<Record<string, unknown>> | undefined,
  live: Readonly<Record<string, unknown>> | undefined,
): ModuleDiff | undefined {
  if (desired === undefined && live === undefined) return undefined;
  // An unset field means the service's default (rule 3): filled in before comparing.
  const after = canonicalModule(module, desired, true);
  const before = canonicalModule(module, live);
  if (after === undefined) return { module, status: 'removed', before, after };
  if (before === undefined) return { module, status: 'set', before, after };
  return { module, status: equal(before, after) ? 'unchanged' : 'set', before, after };
}

/**
 * Sensitivity of field paths: a field is sensitive when a sensitive path equals it, lies below
 * it or above it, or when it is a secret by definition (`isSecretField`: a `client_secret`, a
 * webhook `secret`, a credential header's value), which also covers live values the manifest
 * does not declare (a header set by hand on the live edge). Keys are compared lower-cased,
 * because header names are shown lower-cased: masking more is safe, masking less is not.
 */
export class Sensitivity {
  readonly #given: readonly FieldPath[];
  /** Lower-cased on first use: most resources of a plan never ask. */
  #paths: readonly FieldPath[] | undefined;

  constructor(paths: readonly FieldPath[]) {
    this.#given = paths;
  }

  isSensitive(path: FieldPath): boolean {
    if (isSecretField(path)) return true;
    if (this.#given.length === 0) return false;
    this.#paths ??= this.#given.map(lowerCased);
    const p = lowerCased(path);
    // Equal, below or above: the shorter one is a prefix of the other.
    return this.#paths.some((s) =>
      isPrefix(s.length <= p.length ? s : p, s.length <= p.length ? p : s),
    );
  }
}

function lowerCased(path: FieldPath): FieldPath {
  return path.map((s) => (typeof s === 'string' ? s.toLowerCase() : s));
}

function isPrefix(prefix: FieldPath, path: FieldPath): boolean {
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== path[i]) return false;
  return true;
}

/**
 * Field-level changes between two canonical values: objects are walked, lists and scalars are
 * leaves. `prefix` is the path of the values (e.g. `['oauth']`).
 */
export function fieldChanges(
  prefix: readonly Segment[],
  before: Plain | undefined,
  after: Plain | undefined,
  sensitivity: Sensitivity,
  out: FieldChange[] = [],
): FieldChange[] {
  if (equal(before, after)) return out;
  const bothObjects =
    isPlainObject(before) || isPlainObject(after)
      ? (before === undefined || isPlainObject(before)) &&
        (after === undefined || isPlainObject(after))
      : false;
  if (bothObjects) {
    const b = (before ?? {}) as PlainObject;
    const a = (after ?? {}) as PlainObject;
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
    for (const key of keys) fieldChanges([...prefix, key], b[key], a[key], sensitivity, out);
    return out;
  }
  out.push(
    fieldChange(sharedPath(formatPath(prefix)), sensitivity.isSensitive(prefix), before, after),
  );
  return out;
}

/**
 * A field's change, each side present only when given. Written as one literal per case, never
 * grown property by property: an object given a property after it was made keeps that property
 * in a separate store, and a plan of 25,000 creates holds some 250,000 of these (a daemon keeps
 * them in its report until the next cycle): about 30 bytes more each.
 */
export function fieldChange(
  path: string,
  sensitive: boolean,
  before: unknown,
  after: unknown,
): FieldChange {
  if (before === undefined)
    return after === undefined ? { path, sensitive } : { path, sensitive, after };
  return after === undefined ? { path, sensitive, before } : { path, sensitive, before, after };
}

/**
 * One string per field path. A plan of 25,000 creates lists the same few hundred paths 250,000
 * times, and a daemon keeps the plan's resources (`/status`) until its next cycle: shared, they
 * cost one string each instead of one per field of every resource. Bounded: a set of manifests
 * with more distinct paths than this only shares less.
 */
const paths = new Interned<string>(10_000);

function sharedPath(formatted: string): string {
  return paths.of(formatted, formatted);
}

function isPlainObject(value: Plain | undefined): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Field-level changes of a traffic policy (a cloud endpoint's, or an edge module's as data).
 * Objects are walked, and so are lists (a rule or an action is shown by its own path, so one
 * secret masks one value, not a whole phase); scalars are leaves. A list of mappings (a phase's
 * rules, a rule's actions) is aligned first (`alignRules`): a rule inserted at the top shows as
 * that one rule added, not as every later rule changed under a shifted index. A rule added or
 * removed is shown leaf by leaf at its own index; a changed one by the fields that changed.
 */
export function policyChanges(
  path: Segment[],
  before: unknown,
  after: unknown,
  sensitivity: Sensitivity,
  out: FieldChange[],
): void {
  if (equal(before, after)) return;
  // An absent side takes the other's shape, so a created or removed rule is shown leaf by leaf.
  const lists =
    (Array.isArray(before) || before === undefined) &&
    (Array.isArray(after) || after === undefined);
  if (lists && (before !== undefined || after !== undefined)) {
    const b = (before ?? []) as unknown[];
    const a = (after ?? []) as unknown[];
    for (const [i, j] of alignRules(b, a)) {
      // A rule is named by its index where it is now (where it was, once removed).
      policyChanges(
        [...path, j ?? i ?? 0],
        i === undefined ? undefined : b[i],
        j === undefined ? undefined : a[j],
        sensitivity,
        out,
      );
    }
    return;
  }
  const objects =
    (isRecord(before) || before === undefined) && (isRecord(after) || after === undefined);
  if (objects) {
    const b = (before ?? {}) as Record<string, unknown>;
    const a = (after ?? {}) as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort(compareCodeUnits);
    for (const key of keys) policyChanges([...path, key], b[key], a[key], sensitivity, out);
    return;
  }
  out.push(fieldChange(formatPath(path), sensitivity.isSensitive(path), before, after));
}

/**
 * Pairs the items of two lists: `[before index, after index]`, one side undefined for an item
 * removed or added; removals first (in their old order), then the new list in order. Mappings
 * are matched by `name` where both lists name their items uniquely, else by equal content, and
 * what is left is paired in order when as many items are left on each side (rules edited in
 * place), else by equal `expressions` (a rule whose guard stayed), the rest added or removed.
 * Lists of anything but mappings are paired by index, as before.
 */
export function alignRules(
  before: readonly unknown[],
  after: readonly unknown[],
): [number | undefined, number | undefined][] {
  if (!before.every(isRecord) || !after.every(isRecord)) {
    const n = Math.max(before.length, after.length);
    return Array.from({ length: n }, (_, i) => [
      i < before.length ? i : undefined,
      i < after.length ? i : undefined,
    ]);
  }
  const pairOf = new Map<number, number>();
  const used = new Set<number>();
  const match = (same: (b: Record<string, unknown>, a: Record<string, unknown>) => boolean) => {
    for (let j = 0; j < after.length; j++) {
      if (pairOf.has(j)) continue;
      for (let i = 0; i < before.length; i++) {
        if (
          used.has(i) ||
          !same(before[i] as Record<string, unknown>, after[j] as Record<string, unknown>)
        )
          continue;
        pairOf.set(j, i);
        used.add(i);
        break;
      }
    }
  };
  if (uniquelyNamed(before) && uniquelyNamed(after)) match((b, a) => b.name === a.name);
  match((b, a) => equal(b, a));
  // Loops, not `map` then `filter`: V8's `map` gives a packed array until this function is
  // optimised and a holey one after, and `filter` would then be compiled again (twice a plan).
  const leftBefore: number[] = [];
  for (let i = 0; i < before.length; i++) if (!used.has(i)) leftBefore.push(i);
  const leftAfter: number[] = [];
  for (let j = 0; j < after.length; j++) if (!pairOf.has(j)) leftAfter.push(j);
  if (leftBefore.length === leftAfter.length) {
    leftAfter.forEach((j, k) => {
      const i = leftBefore[k] as number;
      pairOf.set(j, i);
      used.add(i);
    });
  } else {
    match((b, a) => b.expressions !== undefined && equal(b.expressions, a.expressions));
  }
  const out: [number | undefined, number | undefined][] = [];
  for (let i = 0; i < before.length; i++) if (!used.has(i)) out.push([i, undefined]);
  for (let j = 0; j < after.length; j++) out.push([pairOf.get(j), j]);
  return out;
}

/** Every item has a string `name`, and no two the same. */
function uniquelyNamed(items: readonly unknown[]): boolean {
  const names = new Set<string>();
  for (const item of items) {
    const name = (item as Record<string, unknown>).name;
    if (typeof name !== 'string' || names.has(name)) return false;
    names.add(name);
  }
  return true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Field-level changes of one module (`fieldChanges` under `[module]`), except that a traffic
 * policy module's `value`, a policy document held as text, is shown as data when both sides read
 * as one (`policyChanges`): a changed rule by its fields, not two escaped JSON strings. Texts that
 * differ only in form (YAML against JSON, spacing) are shown as texts.
 */
export function moduleFieldChanges(
  module: string,
  before: PlainObject | undefined,
  after: PlainObject | undefined,
  sensitivity: Sensitivity,
  out: FieldChange[],
): FieldChange[] {
  if (module !== 'traffic_policy') return fieldChanges([module], before, after, sensitivity, out);
  const docB = policyDocument(before?.value);
  const docA = policyDocument(after?.value);
  const asData =
    (docB !== undefined || before?.value === undefined) &&
    (docA !== undefined || after?.value === undefined) &&
    !equal(docB, docA);
  if (!asData) return fieldChanges([module], before, after, sensitivity, out);
  const { value: _b, ...restBefore } = before ?? {};
  const { value: _a, ...restAfter } = after ?? {};
  fieldChanges(
    [module],
    before === undefined ? undefined : restBefore,
    after === undefined ? undefined : restAfter,
    sensitivity,
    out,
  );
  policyChanges([module, 'value'], docB, docA, sensitivity, out);
  return out;
}

/** A policy text as its document, when it is a mapping. */
function policyDocument(value: Plain | undefined): Record<string, unknown> | undefined {
  if (typeof value !== 'string') return undefined;
  const doc = parsePolicyText(value);
  return isRecord(doc) ? doc : undefined;
}
