/**
 * The run-time values of the service's CEL object types that the engine cannot build from a
 * plain object where it reads one: the types that are both a string and the parent of fields
 * (`req.url`, `conn.client_ip`), and the types of list elements (`svc.JwtToken`,
 * `svc.ReqCookie`), which the engine does not convert; and `svc.Req`, which an evaluator builds
 * whole for each request rather than have the engine convert it. Shared by the environment that
 * declares them (./cel.ts) and the evaluator that builds them (src/policy-eval/). Pure.
 */

/** How a function runs, by its signature (its implementation for an evaluator). */
export type CelImplementations = Readonly<Record<string, (...args: never[]) => unknown>>;

/**
 * A value of one of those object types: its fields, read in place (the engine reads it as a
 * `Map`; an evaluation builds several per request and reads a field or two of each, so no map is
 * filled unless it is walked whole). One subclass per type (`celObject`). Never changed.
 */
export class CelObject extends Map<string, unknown> {
  readonly #fields: Readonly<Record<string, unknown>>;
  #filled = false;

  constructor(fields: Readonly<Record<string, unknown>> = {}) {
    super();
    this.#fields = fields;
  }

  override get(key: string): unknown {
    return Object.hasOwn(this.#fields, key) ? this.#fields[key] : undefined;
  }

  override has(key: string): boolean {
    return Object.hasOwn(this.#fields, key);
  }

  override get size(): number {
    this.#fill();
    return super.size;
  }

  override entries(): MapIterator<[string, unknown]> {
    this.#fill();
    return super.entries();
  }

  override keys(): MapIterator<string> {
    this.#fill();
    return super.keys();
  }

  override values(): MapIterator<unknown> {
    this.#fill();
    return super.values();
  }

  override forEach(fn: (value: unknown, key: string, map: Map<string, unknown>) => void): void {
    this.#fill();
    super.forEach(fn);
  }

  override [Symbol.iterator](): MapIterator<[string, unknown]> {
    this.#fill();
    return super[Symbol.iterator]();
  }

  /** The map's entries set from the fields, the first time it is walked. */
  #fill(): void {
    if (this.#filled) return;
    this.#filled = true;
    for (const [key, value] of Object.entries(this.#fields)) super.set(key, value);
  }
}

/** A value of an object type that is not also a string (`svc.JwtToken`). */
export function celObject(type: string, fields: Readonly<Record<string, unknown>>): CelObject {
  return new (objectClass(type))(fields);
}

type ObjectClass = new (fields?: Readonly<Record<string, unknown>>) => CelObject;
const objectClasses = new Map<string, ObjectClass>();

/** The class of `type`'s values (the engine tells object types apart by constructor). */
export function objectClass(type: string): ObjectClass {
  let ctor = objectClasses.get(type);
  if (ctor === undefined) {
    ctor = class extends CelObject {};
    objectClasses.set(type, ctor);
  }
  return ctor;
}

/** A plain object given where a value of `ctor`'s type is read, as one. */
export function objectFrom(ctor: ObjectClass, v: unknown): CelObject | undefined {
  if (v instanceof ctor) return v;
  if (typeof v !== 'object' || v === null) return undefined;
  return new ctor((v instanceof Map ? Object.fromEntries(v) : v) as Record<string, unknown>);
}

/**
 * A value of a type documented both as a string and as the parent of fields (`req.url`,
 * `conn.client_ip`), as an evaluator hands it to the implementation: its fields, and its string
 * form (`text`, also `toString()`), on which the string overloads run. One subclass per type
 * (`celStringLike`): the implementation tells object types apart by their constructor.
 */
export class CelStringLike extends CelObject {
  constructor(
    readonly text: string,
    fields: Readonly<Record<string, unknown>> = {},
  ) {
    super(fields);
  }

  override toString(): string {
    return this.text;
  }
}

export type StringLikeClass = new (
  text: string,
  fields?: Readonly<Record<string, unknown>>,
) => CelStringLike;
const stringLikeClasses = new Map<string, StringLikeClass>();

export function stringLikeClass(type: string): StringLikeClass {
  let ctor = stringLikeClasses.get(type);
  if (ctor === undefined) {
    ctor = class extends CelStringLike {};
    stringLikeClasses.set(type, ctor);
  }
  return ctor;
}

/** A plain object given where a string-like value is read: its fields, `raw` as its string form. */
export function stringLikeFrom(ctor: StringLikeClass, v: unknown): CelStringLike | undefined {
  if (v instanceof ctor) return v;
  if (typeof v !== 'object' || v === null) return undefined;
  const fields = (v instanceof Map ? Object.fromEntries(v) : v) as Record<string, unknown>;
  return new ctor(typeof fields.raw === 'string' ? fields.raw : '', fields);
}

/**
 * The value, for an evaluation, of `type` (`svc.Url`, `svc.Ip`, one of the types documented both
 * as a string and as the parent of fields): `text` with `fields`.
 */
export function celStringLike(
  type: string,
  text: string,
  fields: Readonly<Record<string, unknown>> = {},
): CelStringLike {
  return new (stringLikeClass(type))(text, fields);
}
