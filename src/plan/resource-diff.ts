/**
 * The diff of one resource (an edge or a route) against its live record: changed scalars,
 * modules set or removed, the PATCH body that realises it, and the field list a plan shows.
 */
import { compareCodeUnits } from '../compare.js';
import { diffModule, fieldChange, moduleFieldChanges, type Sensitivity } from './diff.js';
import type { FieldChange, ModuleChange } from './model.js';

export interface ScalarDiff<W> {
  readonly name: keyof W & string;
  readonly before: unknown;
  readonly after: unknown;
}

export interface ResourceDiff<W> {
  readonly fields: FieldChange[];
  readonly modules: ModuleChange[];
  /** The PATCH body: changed scalars and `set` modules. */
  readonly patch: Partial<W>;
  readonly setModules: string[];
  readonly removedModules: string[];
  readonly changedScalars: string[];
}

type LiveModules = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/**
 * The modules of a manifest resource that are set, keyed by name, typed as the write shape `W`
 * carries them (the manifest's module types are the API's write types: see
 * test/unit/plan/write-shapes.test.ts).
 */
export function pickModules<R extends object, N extends keyof R & string>(
  resource: R,
  names: readonly N[],
): Partial<Pick<R, N>> {
  const out: Partial<Pick<R, N>> = {};
  for (const name of names) if (resource[name] !== undefined) out[name] = resource[name];
  return out;
}

/**
 * One shared, frozen object per module and status: a plan of 25,000 resources holds about
 * 70,000 of these, and the daemon keeps the plans of up-to-date edges between cycles.
 */
const moduleChanges: Record<ModuleChange['status'], Map<string, ModuleChange>> = {
  set: new Map(),
  unchanged: new Map(),
  removed: new Map(),
};

export function moduleChange(module: string, status: ModuleChange['status']): ModuleChange {
  const byModule = moduleChanges[status];
  let change = byModule.get(module);
  if (change === undefined) {
    change = Object.freeze({ module, status });
    byModule.set(module, change);
  }
  return change;
}

/**
 * Module lists, interned: the lists of a plan's 25,000 resources are a handful of distinct ones
 * (which modules are set, and whether each changed), so each is one shared, frozen array, found
 * by walking from the empty list one module change at a time (no key to build). Past
 * `MAX_INTERNED_LISTS` lists (unusual manifests), new lists are no longer kept.
 */
class ModuleList {
  static #interned = 0;
  readonly #next = new Map<ModuleChange, ModuleList>();
  constructor(readonly list: readonly ModuleChange[]) {}

  /** This list with `change` appended. */
  append(change: ModuleChange): ModuleList {
    const known = this.#next.get(change);
    if (known !== undefined) return known;
    const longer = new ModuleList(Object.freeze([...this.list, change]));
    if (ModuleList.#interned < MAX_INTERNED_LISTS) {
      ModuleList.#interned += 1;
      this.#next.set(change, longer);
    }
    return longer;
  }
}

const MAX_INTERNED_LISTS = 4096;
const NO_MODULES = new ModuleList(Object.freeze([]));

/**
 * Shared by every diff without such changes (a converged plan has 25,000 of them), and by every
 * change without operations: frozen, so that a push into one fails loudly.
 */
const NONE = Object.freeze<unknown[]>([]) as unknown[];

/** `operations` when there are none (see `NONE`). */
export function noOperations<T>(operations: T[]): T[] {
  return operations.length === 0 ? (NONE as T[]) : operations;
}
const NO_PATCH: Readonly<Record<string, never>> = Object.freeze({});

/** Diffs scalars and modules of one resource (edge or route) against its live record. */
export function diffResource<W extends object>(
  scalars: readonly ScalarDiff<W>[],
  moduleNames: readonly (keyof W & string)[],
  desired: Partial<W>,
  live: LiveModules,
  sensitivity: Sensitivity,
): ResourceDiff<W> {
  let modules = NO_MODULES;
  // Allocated on the first change: most resources of a plan have none.
  let fields: FieldChange[] | undefined;
  let patch: Partial<W> | undefined;
  let setModules: string[] | undefined;
  let removedModules: string[] | undefined;
  let changedScalars: string[] | undefined;
  for (const s of scalars) {
    changedScalars ??= [];
    changedScalars.push(s.name);
    patch ??= {};
    patch[s.name] = s.after as W[typeof s.name];
    fields ??= [];
    fields.push(fieldChange(s.name, sensitivity.isSensitive([s.name]), s.before, s.after));
  }
  for (const name of moduleNames) {
    const want = desired[name];
    const d = diffModule(name, want as Readonly<Record<string, unknown>> | undefined, live[name]);
    if (d === undefined) continue;
    modules = modules.append(moduleChange(name, d.status));
    if (d.status === 'unchanged') continue;
    fields ??= [];
    moduleFieldChanges(name, d.before, d.after, sensitivity, fields);
    if (d.status === 'set') {
      patch ??= {};
      patch[name] = want;
      setModules ??= [];
      setModules.push(name);
    } else {
      removedModules ??= [];
      removedModules.push(name);
    }
  }
  return {
    fields: fields ?? (NONE as FieldChange[]),
    modules: modules.list as ModuleChange[],
    patch: patch ?? (NO_PATCH as Partial<W>),
    setModules: setModules ?? (NONE as string[]),
    removedModules: removedModules ?? (NONE as string[]),
    changedScalars: changedScalars ?? (NONE as string[]),
  };
}

export function describeDiff(diff: ResourceDiff<object>): string {
  const parts: string[] = [];
  if (diff.changedScalars.length > 0) parts.push(`changed ${diff.changedScalars.join(', ')}`);
  if (diff.setModules.length > 0) parts.push(`set ${diff.setModules.join(', ')}`);
  if (diff.removedModules.length > 0) parts.push(`removed ${diff.removedModules.join(', ')}`);
  return parts.join('; ');
}

export function hasChanges(diff: ResourceDiff<object>): boolean {
  return Object.keys(diff.patch).length > 0 || diff.removedModules.length > 0;
}

/** Field list of a resource being created: every value it will have. */
export function createFields(values: object, sensitivity: Sensitivity): FieldChange[] {
  const out: FieldChange[] = [];
  const record = values as Readonly<Record<string, unknown>>;
  for (const key of Object.keys(record).sort(compareCodeUnits)) {
    const value = record[key];
    if (value === undefined) continue;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const d = diffModule(key, value as Readonly<Record<string, unknown>>, undefined);
      moduleFieldChanges(key, undefined, d?.after, sensitivity, out);
    } else {
      out.push({ path: key, after: value, sensitive: sensitivity.isSensitive([key]) });
    }
  }
  return out;
}
