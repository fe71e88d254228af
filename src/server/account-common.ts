/**
 * What the account resources' handlers share (reserved domains, certificate authorities,
 * service users, IP policies and their rules, vaults and secrets; account-resources.md's common
 * part): the description and metadata fields with their limits, their read shape (an unset one
 * is left out, as for endpoints) and what a list filter sees of them (null when unset, so
 * `obj.description == null` matches), the path ID lookup (400 when malformed, 404 when unknown
 * here, another account's included), the refusal of a PATCH with no field, an `updated_at` that
 * moves on every update, and the JSON of a record cached by its identity. The IDs of these kinds
 * are checked whole (prefix and 27 base62 characters), as the specification asks of every
 * account resource.
 */
import { ERROR_CODE } from '../hosted/edge-api.js';
import { type ApiErrorCode, invalidValue, RequestError } from './errors.js';
import type { Call } from './handler-common.js';
import { idBody } from './ids.js';
import { descriptionSchema, metadataSchema } from './schema-blocks.js';

/** description and metadata in a write shape, with the limits every account resource shares. */
export const describedFields = {
  description: descriptionSchema.optional(),
  metadata: metadataSchema.optional(),
};

interface Described {
  readonly description: string;
  readonly metadata: string;
}

/**
 * `description` and `metadata` as a write leaves them: what `b` sends, else what `rec` had
 * (unset, the empty string, on a create).
 */
export function describedWrite(
  b: { readonly description?: string | undefined; readonly metadata?: string | undefined },
  rec?: Described,
): Described {
  return {
    description: b.description ?? rec?.description ?? '',
    metadata: b.metadata ?? rec?.metadata ?? '',
  };
}

/** `description` and `metadata`, each only when set. */
export function describedJson(rec: Described): { description?: string; metadata?: string } {
  return {
    ...(rec.description === '' ? {} : { description: rec.description }),
    ...(rec.metadata === '' ? {} : { metadata: rec.metadata }),
  };
}

/** `description` and `metadata` for a filter: null when unset. */
export function describedCel(rec: Described): {
  description: string | null;
  metadata: string | null;
} {
  return {
    description: rec.description === '' ? null : rec.description,
    metadata: rec.metadata === '' ? null : rec.metadata,
  };
}

// ---- lookups

/**
 * The path's ID, which must be well formed (its prefix, checked by the router, then 27 base62
 * characters): a malformed ID is a 400, only a well-formed unknown one a 404.
 */
export function pathId(ids: readonly string[]): string {
  const id = ids[0] as string;
  if (idBody(id) === undefined || id.indexOf('_') !== id.lastIndexOf('_')) {
    throw new RequestError(
      400,
      ERROR_CODE.wrongIdPrefix,
      `malformed ID ${JSON.stringify(id.slice(0, 100))}: a prefix and 27 letters or digits`,
    );
  }
  return id;
}

/**
 * The record a path ID of the kind names: 400 when malformed, 404 (`notFoundCode`, the generic
 * one unless the kind has its own) when unknown here, another account's too.
 */
export function lookup<T>(
  call: Call,
  what: string,
  get: (id: string) => T | undefined,
  notFoundCode: ApiErrorCode = ERROR_CODE.notFound,
): T {
  const id = pathId(call.ids);
  const rec = get(id);
  if (rec === undefined) throw new RequestError(404, notFoundCode, `${what} ${id} not found`);
  return rec;
}

/**
 * 400 when an update's body names one of `fields`, which never change in place (`why` says,
 * for the field named, what to do instead).
 */
export function checkFixedFields(
  body: unknown,
  fields: readonly string[],
  why: (field: string) => string,
): void {
  if (typeof body !== 'object' || body === null) return;
  const field = fields.find((f) => Object.hasOwn(body, f));
  if (field !== undefined) throw new RequestError(400, ERROR_CODE.unknownField, why(field));
}

/** 400 for an update without any field. */
export function checkNotEmpty(body: object): void {
  if (Object.keys(body).length === 0) {
    throw invalidValue('the update has no field: send at least one to change');
  }
}

/**
 * `updated_at` for a change at `ms`: RFC 3339 with milliseconds, and always later than
 * `previous`, so that every update moves it (a client detects a change made by someone else
 * by it), even two in the same millisecond or after the clock went back.
 */
export function updatedAt(previous: string | undefined, ms: number): string {
  const before = previous === undefined ? Number.NEGATIVE_INFINITY : Date.parse(previous);
  return new Date(Math.max(ms, before + 1)).toISOString();
}

/** A record's JSON, built once per record (records are immutable, replaced whole). */
export class JsonCache {
  readonly #cache = new WeakMap<object, string>();

  of(rec: object, build: () => object): string {
    let out = this.#cache.get(rec);
    if (out === undefined) {
      out = JSON.stringify(build());
      this.#cache.set(rec, out);
    }
    return out;
  }
}
