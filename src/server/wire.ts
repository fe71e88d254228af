/**
 * The local server's small wire-level pieces: API keys to accounts (a digest, compared in
 * constant time), operation IDs, the error body of api-notes, the JSON content-type check.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiErrorCode } from './errors.js';

/** The account an API key maps to: a digest, so the log never holds keys. */
export function accountIdForKey(key: string): string {
  return createHash('sha256').update(`edgesync-account:${key}`).digest('hex').slice(0, 32);
}

/**
 * The account of an `Authorization: Bearer <key>` header, or undefined. Constant-time: every
 * configured key is compared, whatever matches.
 */
export function createAuthenticator(
  apiKeys: readonly string[],
): (header: string | undefined) => string | undefined {
  const keys = apiKeys.map((key) => ({
    digest: createHash('sha256').update(key).digest(),
    accountId: accountIdForKey(key),
  }));
  return (header) => {
    if (header === undefined) return undefined;
    const m = /^Bearer +(\S+) *$/i.exec(header);
    if (m === null) return undefined;
    const digest = createHash('sha256')
      .update(m[1] as string)
      .digest();
    let found: string | undefined;
    for (const k of keys) {
      if (timingSafeEqual(digest, k.digest) && found === undefined) found = k.accountId;
    }
    return found;
  };
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
