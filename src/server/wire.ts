/**
 * The local server's small wire-level pieces: API keys to accounts and service users (a
 * digest, compared in constant time), operation IDs, the error body of api-notes, the JSON content-type check, and
 * the decoding of a request body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ERROR_CODE } from '../hosted/edge-api.js';
import { type ApiErrorCode, RequestError } from './errors.js';

/** The account an API key maps to: a digest, so the log never holds keys. */
export function accountIdForKey(key: string): string {
  return createHash('sha256').update(`edgesync-account:${key}`).digest('hex').slice(0, 32);
}

/** Who a request's key speaks for: its account, and the service user it belongs to, if any. */
export interface Credential {
  readonly accountId: string;
  /** The service user (`bot_`) owning the key; undefined for the account's own key. */
  readonly serviceUser?: string | undefined;
}

/**
 * The keys the server accepts: each account's own (`apiKeys`, one account per key), and keys
 * belonging to a service user of an account (added at run time, as the service issues a service
 * user its API keys). Constant-time: every key is compared, whatever matches.
 */
export class Authenticator {
  readonly #keys: { readonly digest: Buffer; readonly credential: Credential }[];

  constructor(apiKeys: readonly string[]) {
    this.#keys = apiKeys.map((key) => ({
      digest: createHash('sha256').update(key).digest(),
      credential: { accountId: accountIdForKey(key) },
    }));
  }

  /** Accepts `key` for `serviceUser` of `accountId` from now on. */
  addServiceUserKey(key: string, accountId: string, serviceUser: string): void {
    this.#keys.push({
      digest: createHash('sha256').update(key).digest(),
      credential: { accountId, serviceUser },
    });
  }

  /** The credential of an `Authorization: Bearer <key>` header, or undefined. */
  authenticate(header: string | undefined): Credential | undefined {
    if (header === undefined) return undefined;
    const m = /^Bearer +(\S+) *$/i.exec(header);
    if (m === null) return undefined;
    const digest = createHash('sha256')
      .update(m[1] as string)
      .digest();
    let found: Credential | undefined;
    for (const k of this.#keys) {
      if (timingSafeEqual(digest, k.digest) && found === undefined) found = k.credential;
    }
    return found;
  }
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Operation IDs: a per-process time-ordered stem plus a counter (cheap, unique, sortable). */
export function createOperationIds(stem: string): () => string {
  let counter = 0;
  return () => {
    counter = (counter + 1) % 62 ** 6;
    let n = counter;
    let tail = '';
    for (let i = 0; i < 8; i++) {
      tail = ALPHABET[n % 62] + tail;
      n = Math.floor(n / 62);
    }
    return stem + tail;
  };
}

export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const media = value.split(';', 1)[0]?.trim().toLowerCase();
  return media === 'application/json';
}

export function errorBody(
  status: number,
  code: ApiErrorCode | undefined,
  msg: string,
  operationId: string,
): string {
  const body: Record<string, unknown> = {};
  if (code !== undefined) body.error_code = code;
  body.status_code = status;
  body.msg = msg;
  body.details = { operation_id: operationId };
  return JSON.stringify(body);
}

/**
 * Strict: bytes that are not UTF-8 throw instead of turning into U+FFFD (a body's text must be
 * what the client sent, or be refused); a byte-order mark is kept, so JSON.parse refuses it as
 * it always did.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A request body as JSON: 400 (213) when it is not UTF-8 or not JSON, 400 (215) when an object
 * anywhere in it has a key named `__proto__`. JSON.parse makes such a key an own property, but
 * every copy into a plain object (a schema's record of header names, say) would set the
 * prototype instead and drop the entry: the request would be answered 201 without it.
 */
export function parseJsonBody(raw: Uint8Array): unknown {
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw new RequestError(400, ERROR_CODE.notJson, 'the request body is not valid UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RequestError(400, ERROR_CODE.notJson, 'the request body is not valid JSON');
  }
  const at = protoKeyPath(body);
  if (at !== undefined) {
    throw new RequestError(
      400,
      ERROR_CODE.invalidValue,
      `${at === '' ? 'the body' : at}: a key named "__proto__" is not accepted`,
    );
  }
  return body;
}

/** Where the first own `__proto__` key is (dotted path of its object), or undefined. */
function protoKeyPath(root: unknown): string | undefined {
  // An explicit stack: a deeply nested body must not overflow the call stack.
  const stack: { value: unknown; path: string }[] = [{ value: root, path: '' }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path } = next;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i], path: `${path}[${i}]` });
      }
      continue;
    }
    if (Object.hasOwn(value, '__proto__')) return path;
    for (const [key, child] of Object.entries(value)) {
      stack.push({ value: child, path: path === '' ? key : `${path}.${key}` });
    }
  }
  return undefined;
}
