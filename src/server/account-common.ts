/**
 * What the IP policy and vault handlers share: the read shape's optional scalars (an unset
 * description or metadata is left out, as for endpoints), what a list filter sees of them (null
 * when unset, so `obj.description == null` matches), the empty-update refusal, and the JSON of
 * a record cached by its identity, an `updated_at` that moves on every update, and the path ID's
 * form.
 */
import { ERROR_CODE } from '../hosted/edge-api.js';
import { invalidValue, RequestError } from './errors.js';
import { idBody } from './ids.js';

interface Described {
  readonly description: string;
  readonly metadata: string;
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

/**
 * The path's ID, which must be well formed (its prefix, checked by the router, then 27 base62
 * characters): a malformed ID is a 400, only a well-formed unknown one a 404.
 */
export function pathId(ids: readonly string[]): string {
  const id = ids[0] as string;
  if (idBody(id) === undefined) {
    throw new RequestError(
      400,
      ERROR_CODE.wrongIdPrefix,
      `malformed ID ${JSON.stringify(id.slice(0, 100))}: a prefix and 27 letters or digits`,
    );
  }
  return id;
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
