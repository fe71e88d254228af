/**
 * The per-module diff and the field-level before/after lists of the plan. Pure. A module is
 * `unchanged`, `set` (added or changed: the manifest's whole value is written) or `removed`;
 * both sides are compared in canonical form (./normalize.ts), so only real differences count.
 */
import equal from 'fast-deep-equal';
import { type FieldPath, formatPath, type Segment } from '../manifest/paths.js';
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
  const change: FieldChange = {
    path: sharedPath(formatPath(prefix)),
    sensitive: sensitivity.isSensitive(prefix),
  };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  out.push(change);
  return out;
}

/**
 * One string per field path. A plan of 25,000 creates lists the same few hundred paths 250,000
 * times, and a daemon keeps the plan's resources (`/status`) until its next cycle: shared, they
 * cost one string each instead of one per field of every resource. Bounded: a set of manifests
 * with more distinct paths than this only shares less.
 */
const paths = new Map<string, string>();
const MAX_SHARED_PATHS = 10_000;

function sharedPath(formatted: string): string {
  const known = paths.get(formatted);
  if (known !== undefined) return known;
  if (paths.size >= MAX_SHARED_PATHS) paths.clear();
  paths.set(formatted, formatted);
  return formatted;
}

function isPlainObject(value: Plain | undefined): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
