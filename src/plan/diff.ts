/**
 * The per-module diff and the field-level before/after lists of the plan. Pure. A module is
 * `unchanged`, `set` (added or changed: the manifest's whole value is written) or `removed`;
 * both sides are compared in canonical form (./normalize.ts), so only real differences count.
 */
import equal from 'fast-deep-equal';
import { formatPath, parsePath, type Segment } from '../manifest/paths.js';
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
 * does not declare (a header set by hand on the live edge). Compared lower-cased, because header
 * names are shown lower-cased: masking more is safe, masking less is not.
 */
export class Sensitivity {
  readonly #given: readonly string[];
  /** Lower-cased on first use: most resources of a plan never ask. */
  #paths: readonly string[] | undefined;

  constructor(paths: readonly string[]) {
    this.#given = paths;
  }

  isSensitive(path: string): boolean {
    const p = path.toLowerCase();
    if (SECRET_HINT.test(p)) {
      // A path that cannot be read back is taken as a secret: masking more is safe.
      const segments = parsePath(p);
      if (segments === undefined || isSecretField(segments)) return true;
    }
    this.#paths ??= this.#given.map((s) => s.toLowerCase());
    return this.#paths.some((s) => s === p || isBelow(s, p) || isBelow(p, s));
  }
}

/** Only paths like these can name a secret field: the others are not parsed. */
const SECRET_HINT = /secret|headers\.add/;

/** True when `path` lies strictly below `parent` (`a.b` below `a`, `a[0]` below `a`). */
function isBelow(path: string, parent: string): boolean {
  return (
    path.length > parent.length &&
    path.startsWith(parent) &&
    (path[parent.length] === '.' || path[parent.length] === '[')
  );
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
  const path = formatPath(prefix);
  const change: FieldChange = { path, sensitive: sensitivity.isSensitive(path) };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  out.push(change);
  return out;
}

function isPlainObject(value: Plain | undefined): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
