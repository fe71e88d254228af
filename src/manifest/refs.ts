/**
 * `{ env: NAME }` / `{ file: PATH }` resolution, guided by the zod schemas: a reference is
 * recognised only where the schema marks the value as REFABLE (string fields), so a label or a
 * header that happens to be called `env` is never mistaken for one. The walk also copies the
 * document into fresh plain objects, dropping (and reporting) any `__proto__` key, so nothing
 * from a manifest can reach a prototype. Pure: environment and file access are injected.
 */
import type { z } from 'zod';
import type { FieldPath, Segment } from './paths.js';
import { REFABLE } from './schema.js';

/** A file reference's read; `missing` when nothing is there (as opposed to something wrong). */
export type ReadResult =
  | { ok: true; text: string }
  | { ok: false; message: string; missing?: true };

/** Access to what references point at. The loader implements it on the real environment/disk. */
export interface RefReader {
  env(name: string): string | undefined;
  /** `path` as written in the manifest; `fromFile` is the manifest's path relative to the root. */
  file(fromFile: string, path: string): ReadResult;
  /**
   * Which of the controller's own credentials (./own-credentials.ts) a reference reads, by the
   * variable it names or the value it read (`"the API key"`); undefined when none. Such a
   * reference is refused, its value never shown.
   */
  ownCredential?(read: { readonly env?: string; readonly value?: string }): string | undefined;
  /**
   * Set by `validate`: a reference whose value is not there (a variable not set, a file not
   * found: the secrets of a CI job without them) is left for later rather than an error. Its
   * form is checked; the checks of its value run where values are resolved (plan, apply, run).
   */
  readonly deferUnresolved?: boolean;
}

/** A reference whose value was not there, left for later (`RefReader.deferUnresolved`). */
export interface DeferredRef {
  readonly path: FieldPath;
  /** As written: `env NAME` or `file PATH` (names and paths, never a value). */
  readonly reference: string;
}

export interface RefIssue {
  /** The field the problem is about (shown in the diagnostic). */
  readonly path: FieldPath;
  /** Where to point (defaults to `path`'s value). */
  readonly at?: FieldPath;
  readonly anchor?: 'value' | 'key';
  readonly message: string;
}

export interface ResolveResult {
  readonly value: unknown;
  /** Paths of values read from env or file: sensitive. */
  readonly sensitive: FieldPath[];
  /** Paths whose reference failed: shape errors under them are noise and get dropped. */
  readonly failed: FieldPath[];
  readonly issues: RefIssue[];
  /** References left for later (also in `failed`: their value is a hole, not an error). */
  readonly deferred: DeferredRef[];
}

const REF_KEYS = new Set(['env', 'file']);

export function resolveRefs(
  schema: z.ZodType,
  value: unknown,
  file: string,
  reader: RefReader,
): ResolveResult {
  const w: RefWalk = {
    file,
    reader,
    path: [],
    sensitive: [],
    failed: [],
    issues: [],
    deferred: [],
  };
  const resolved = walk(w, schema, value);
  return {
    value: resolved,
    sensitive: w.sensitive,
    failed: w.failed,
    issues: w.issues,
    deferred: w.deferred,
  };
}

/** One resolution: its inputs, where the walk is, and what it has recorded. */
interface RefWalk {
  readonly file: string;
  readonly reader: RefReader;
  /**
   * One mutable path for the whole walk (copied only when something is recorded): this walk
   * visits every node of every manifest, so it must not allocate per node.
   */
  readonly path: Segment[];
  readonly sensitive: FieldPath[];
  readonly failed: FieldPath[];
  readonly issues: RefIssue[];
  readonly deferred: DeferredRef[];
}

function walk(w: RefWalk, s: z.ZodType | undefined, v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const { inner: outer, refable } = unwrap(s);
  const inner = unionOption(outer, v);
  if (refable && isPlainObject(v)) {
    const keys = Object.keys(v);
    if (keys.length > 0 && keys.every((k) => REF_KEYS.has(k))) {
      return resolveOne(w, v, keys, [...w.path]);
    }
  }
  // Copy-on-write: a subtree without references or `__proto__` keys is returned as is, so a
  // manifest without references costs no allocation here.
  if (Array.isArray(v)) return walkArray(w, inner, v);
  if (isPlainObject(v)) return walkObject(w, inner, v);
  return v;
}

function walkArray(w: RefWalk, inner: z.ZodType | undefined, v: unknown[]): unknown {
  const def = defOf(inner);
  const element = def?.type === 'array' ? (def.element as z.ZodType) : undefined;
  let out: unknown[] | undefined;
  for (let i = 0; i < v.length; i++) {
    const item: unknown = v[i];
    w.path.push(i);
    const next = walk(w, element, item);
    w.path.pop();
    if (next !== item && out === undefined) out = v.slice(0, i);
    if (out !== undefined) out.push(next);
  }
  return out ?? v;
}

function walkObject(w: RefWalk, inner: z.ZodType | undefined, v: Record<string, unknown>): unknown {
  const { path } = w;
  const def = defOf(inner);
  const shape = def?.type === 'object' ? (def.shape as Record<string, z.ZodType>) : undefined;
  const keys = Object.keys(v);
  let out: Record<string, unknown> | undefined;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k] as string;
    if (key === '__proto__') {
      w.issues.push({
        path: [...path],
        at: [...path, key],
        anchor: 'key',
        message: 'unknown field "__proto__"',
      });
      out ??= copyKeys(v, keys, k);
      continue;
    }
    let child: z.ZodType | undefined;
    if (shape !== undefined) child = Object.hasOwn(shape, key) ? shape[key] : undefined;
    else if (def?.type === 'record') child = def.valueType as z.ZodType;
    const item = v[key];
    path.push(key);
    const next = walk(w, child, item);
    path.pop();
    if (next !== item) out ??= copyKeys(v, keys, k);
    if (out !== undefined) out[key] = next;
  }
  return out ?? v;
}

/** The value an `{ env }` or `{ file }` reference reads; undefined, recorded, when it fails. */
function resolveOne(
  w: RefWalk,
  ref: Record<string, unknown>,
  keys: string[],
  path: Segment[],
): unknown {
  const fail = (message: string, at: FieldPath = path): undefined => {
    w.issues.push({ path, at, message });
    w.failed.push(path);
    return undefined;
  };
  if (keys.length !== 1) return fail('a reference takes exactly one of "env" or "file"');
  const kind = keys[0] as 'env' | 'file';
  const arg = ref[kind];
  if (typeof arg !== 'string' || arg === '') {
    return fail(`"${kind}" must be a non-empty string`, [...path, kind]);
  }
  const refused = (whose: string) =>
    fail(
      `${kind === 'env' ? 'environment variable' : 'file'} ${arg} holds ${whose}, the controller's own credential: a manifest may not read it`,
      [...path, kind],
    );
  const defer = (): undefined => {
    w.deferred.push({ path, reference: `${kind} ${arg}` });
    w.failed.push(path);
    return undefined;
  };
  if (kind === 'env') {
    const whose = w.reader.ownCredential?.({ env: arg });
    if (whose !== undefined) return refused(whose);
    const found = w.reader.env(arg);
    if (found === undefined) {
      if (w.reader.deferUnresolved === true) return defer();
      return fail(`environment variable ${arg} is not set`, [...path, kind]);
    }
    const held = w.reader.ownCredential?.({ value: found });
    if (held !== undefined) return refused(held);
    w.sensitive.push(path);
    return found;
  }
  const read = w.reader.file(w.file, arg);
  if (!read.ok && read.missing === true && w.reader.deferUnresolved === true) return defer();
  if (!read.ok) return fail(read.message, [...path, kind]);
  const held = w.reader.ownCredential?.({ value: read.text });
  if (held !== undefined) return refused(held);
  w.sensitive.push(path);
  // Files written by editors and `echo` end with a newline that is not part of the value.
  return read.text.endsWith('\r\n')
    ? read.text.slice(0, -2)
    : read.text.endsWith('\n')
      ? read.text.slice(0, -1)
      : read.text;
}

/**
 * The option of a union that `value` is meant for, so references inside it are found: by the
 * discriminator's literal for a discriminated union (an action by its `type`), else the one
 * option of the value's own shape (a mapping or a list). Anything else is not descended.
 */
function unionOption(schema: z.ZodType | undefined, value: unknown): z.ZodType | undefined {
  const def = defOf(schema);
  if (def?.type !== 'union') return schema;
  const options = def.options as z.ZodType[];
  const key = def.discriminator as string | undefined;
  if (key !== undefined) {
    if (!isPlainObject(value)) return undefined;
    const wanted = value[key];
    return options.find((o) => {
      const shape = defOf(o)?.shape as Record<string, z.ZodType> | undefined;
      const values = defOf(shape?.[key])?.values as unknown[] | undefined;
      return values?.includes(wanted) === true;
    });
  }
  const kinds = Array.isArray(value) ? ['array'] : isPlainObject(value) ? ['object', 'record'] : [];
  const fits = options.filter((o) => kinds.includes(defOf(unwrap(o).inner)?.type ?? ''));
  return fits.length === 1 ? unwrap(fits[0]).inner : undefined;
}

/** A fresh plain object with the first `count` keys of `v` (never `__proto__`). */
function copyKeys(
  v: Record<string, unknown>,
  keys: readonly string[],
  count: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let k = 0; k < count; k++) {
    const key = keys[k] as string;
    if (key !== '__proto__') out[key] = v[key];
  }
  return out;
}

interface Def {
  type: string;
  [key: string]: unknown;
}

function defOf(schema: z.ZodType | undefined): Def | undefined {
  return schema === undefined ? undefined : (schema.def as unknown as Def);
}

interface Unwrapped {
  readonly inner: z.ZodType | undefined;
  readonly refable: boolean;
}
const NOTHING: Unwrapped = { inner: undefined, refable: false };
/** Memo of `unwrap` per schema object (schemas are immutable, so this is a pure cache). */
const unwrapped = new WeakMap<z.ZodType, Unwrapped>();

/** Strips optional/default/pipe wrappers, noting whether any layer accepts a reference. */
function unwrap(schema: z.ZodType | undefined): Unwrapped {
  if (schema === undefined) return NOTHING;
  let result = unwrapped.get(schema);
  if (result === undefined) {
    result = unwrapUncached(schema);
    unwrapped.set(schema, result);
  }
  return result;
}

function unwrapUncached(schema: z.ZodType): Unwrapped {
  let s: z.ZodType | undefined = schema;
  let refable = false;
  for (let depth = 0; s !== undefined && depth < 10; depth++) {
    if (REFABLE.has(s)) refable = true;
    const def = defOf(s);
    if (def === undefined) break;
    if (
      def.type === 'optional' ||
      def.type === 'default' ||
      def.type === 'nullable' ||
      def.type === 'prefault'
    ) {
      s = def.innerType as z.ZodType;
    } else if (def.type === 'pipe') {
      s = def.in as z.ZodType;
    } else {
      break;
    }
  }
  return { inner: s, refable };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The zod schema found at `path` inside `schema` (for "did you mean" over accepted keys). */
export function schemaAt(
  schema: z.ZodType,
  path: FieldPath,
  input?: unknown,
): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  let value = input;
  for (const segment of path) {
    const def = defOf(unionOption(unwrap(s).inner, value));
    value =
      typeof value === 'object' && value !== null && Object.hasOwn(value, segment)
        ? (value as Record<Segment, unknown>)[segment]
        : undefined;
    if (def === undefined) return undefined;
    if (def.type === 'object') {
      const shape = def.shape as Record<string, z.ZodType>;
      s = typeof segment === 'string' && Object.hasOwn(shape, segment) ? shape[segment] : undefined;
    } else if (def.type === 'array') {
      s = def.element as z.ZodType;
    } else if (def.type === 'record') {
      s = def.valueType as z.ZodType;
    } else {
      return undefined;
    }
  }
  return unionOption(unwrap(s).inner, value);
}

/**
 * Whether a `{ env }` / `{ file }` reference may stand for the value at `path` of `input` (the
 * resolver's own rule, REFABLE): for a writer of manifests (`import`) that moves a value out.
 */
export function takesReference(schema: z.ZodType, path: FieldPath, input: unknown): boolean {
  const last = path[path.length - 1];
  if (last === undefined) return false;
  const def = defOf(schemaAt(schema, path.slice(0, -1), input));
  let child: z.ZodType | undefined;
  if (def?.type === 'object') {
    const shape = def.shape as Record<string, z.ZodType>;
    child = typeof last === 'string' && Object.hasOwn(shape, last) ? shape[last] : undefined;
  } else if (def?.type === 'array') child = def.element as z.ZodType;
  else if (def?.type === 'record') child = def.valueType as z.ZodType;
  return unwrap(child).refable;
}

/** Keys an object schema accepts, or none. */
export function objectKeys(schema: z.ZodType | undefined): string[] {
  const def = defOf(schema);
  return def?.type === 'object' ? Object.keys(def.shape as object) : [];
}
