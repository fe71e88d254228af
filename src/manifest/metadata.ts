/**
 * How labels are stored in the API's `metadata` string (design section 3), in one place: the
 * validator measures exactly the string the plan will write, and the plan's normaliser parses
 * live metadata with the inverse. Pure.
 *
 * Edge metadata = key-sorted JSON of the user's labels plus `edgesync/owner`, `edgesync/name`
 * and, when protected, `edgesync/protect: "true"`. Route metadata = key-sorted JSON of the
 * route's labels only, or the empty string when it has none (routes are keyed by `match` inside
 * an owned edge, so they need no ownership keys).
 */
import { RESERVED_LABEL_PREFIX } from './schema.js';

export const OWNER_KEY = `${RESERVED_LABEL_PREFIX}owner`;
export const NAME_KEY = `${RESERVED_LABEL_PREFIX}name`;
export const PROTECT_KEY = `${RESERVED_LABEL_PREFIX}protect`;
/**
 * The keyed digest of a resource's write-only values (a secret's value), which the service
 * never returns: HMAC-SHA-256 under the controller's key, never a bare hash (./digest.ts).
 */
export const DIGEST_KEY = `${RESERVED_LABEL_PREFIX}digest`;
/**
 * Beside the digest: the actor edgesync wrote the values as (the service's `last_updated_by`),
 * bound into the digest. A live `last_updated_by` other than it is a write made outside Git.
 */
export const WRITER_KEY = `${RESERVED_LABEL_PREFIX}by`;
export const DEFAULT_OWNER = 'default';

export interface Ownership {
  readonly owner: string;
  readonly name: string;
  readonly protect: boolean;
}

/** Keys JSON.stringify writes first whatever the order (array indexes): then the slow path. */
const INDEX_LIKE = /^(0|[1-9][0-9]*)$/;

/** `JSON.stringify` of `entries` with its keys sorted, written directly (one per edge per plan). */
function sortedJson(entries: Readonly<Record<string, string>>): string {
  const keys = Object.keys(entries).sort();
  if (keys.some((k) => INDEX_LIKE.test(k))) {
    const sorted: Record<string, string> = {};
    for (const key of keys) sorted[key] = entries[key] as string;
    return JSON.stringify(sorted);
  }
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(entries[key])}`;
  }
  return `${out}}`;
}

/** The `metadata` string edgesync writes on an edge it owns. */
export function storedMetadata(labels: Readonly<Record<string, string>>, own: Ownership): string {
  const all: Record<string, string> = { ...labels, [OWNER_KEY]: own.owner, [NAME_KEY]: own.name };
  if (own.protect) all[PROTECT_KEY] = 'true';
  return sortedJson(all);
}

/** The `metadata` string edgesync writes on a route. */
export function storedRouteMetadata(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels).length === 0 ? '' : sortedJson(labels);
}

export interface ParsedMetadata {
  /** The labels without edgesync's keys. */
  readonly labels: Record<string, string>;
  readonly owner: string | undefined;
  readonly name: string | undefined;
  readonly protect: boolean;
  /** The keyed digest of the resource's write-only values (`edgesync/digest`), if kept. */
  readonly digest?: string | undefined;
  /** The actor those values were written as (`edgesync/by`), if kept. */
  readonly writer?: string | undefined;
}

/**
 * Reads a live `metadata` string. Returns undefined when it is not a JSON object of strings
 * (written by someone else): such an edge is not edgesync's. The empty string is no labels.
 */
export function parseStoredMetadata(
  metadata: string | null | undefined,
): ParsedMetadata | undefined {
  if (metadata === null || metadata === undefined || metadata === '') {
    return { labels: {}, owner: undefined, name: undefined, protect: false };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const labels: Record<string, string> = {};
  let owner: string | undefined;
  let name: string | undefined;
  let protect = false;
  let digest: string | undefined;
  let writer: string | undefined;
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') return undefined;
    if (key === OWNER_KEY) owner = value;
    else if (key === NAME_KEY) name = value;
    else if (key === PROTECT_KEY) protect = value === 'true';
    else if (key === DIGEST_KEY) digest = value;
    else if (key === WRITER_KEY) writer = value;
    else if (key !== '__proto__') labels[key] = value;
  }
  return {
    labels,
    owner,
    name,
    protect,
    ...(digest === undefined ? {} : { digest }),
    ...(writer === undefined ? {} : { writer }),
  };
}

/** Each live record's parsed metadata: records are never changed, and the daemon keeps them. */
const parsedOfRecord = new WeakMap<object, ParsedMetadata | undefined>();

/** `parseStoredMetadata(record.metadata)`, computed once per record object. */
export function recordMetadata(record: {
  readonly metadata?: string | null | undefined;
}): ParsedMetadata | undefined {
  if (parsedOfRecord.has(record)) return parsedOfRecord.get(record);
  const meta = parseStoredMetadata(record.metadata);
  parsedOfRecord.set(record, meta);
  return meta;
}
