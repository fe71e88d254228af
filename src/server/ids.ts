/**
 * Resource IDs of the local server: `<prefix>_<27 base62>`, KSUID-like. The 160-bit body is
 * 32 bits of seconds since the KSUID epoch, 10 bits of milliseconds, then random bits; the
 * generator never returns a body less than or equal to the previous one (it bumps by one
 * instead), so within one process, and after `observe()`-ing a loaded store, sorting by ID is
 * sorting by creation, even for IDs minted in the same millisecond. Base62 with the digits in
 * ASCII order keeps string order equal to numeric order.
 */
import { randomBytes } from 'node:crypto';
import { EdgesyncError } from '../errors.js';
import { ID_BODY_LENGTH } from '../hosted/edge-api.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH_SECONDS = 1_400_000_000;
const BODY_BITS = 160n;
const RANDOM_BITS = 118n; // 160 - 32 (seconds) - 10 (milliseconds)
const BODY_MAX = (1n << BODY_BITS) - 1n;
const BODY_PATTERN = new RegExp(`^[0-9A-Za-z]{${ID_BODY_LENGTH}}$`);

export function encodeBase62(value: bigint): string {
  let out = '';
  let v = value;
  while (v > 0n) {
    out = ALPHABET[Number(v % 62n)] + out;
    v /= 62n;
  }
  return out.padStart(ID_BODY_LENGTH, '0');
}

export function decodeBase62(body: string): bigint {
  let v = 0n;
  for (const ch of body) {
    const digit = ALPHABET.indexOf(ch);
    // Only bodies `idBody` accepted reach here: another character is a bug, not bad input.
    if (digit < 0) throw new EdgesyncError('ES_INTERNAL', `not base62: ${ch}`);
    v = v * 62n + BigInt(digit);
  }
  return v;
}

export interface IdGenerator {
  /** A new ID with the given prefix (e.g. `edgtls_`), greater than every earlier one. */
  next(prefix: string): string;
  /** Makes later IDs sort after `id` (used when loading a persisted store). */
  observe(id: string): void;
}

export interface IdGeneratorOptions {
  readonly now?: () => number;
  readonly random?: (bytes: number) => Buffer;
}

export function createIdGenerator(options: IdGeneratorOptions = {}): IdGenerator {
  const now = options.now ?? Date.now;
  const random = options.random ?? randomBytes;
  let last = -1n;
  return {
    next(prefix) {
      const ms = now();
      const seconds = BigInt(Math.max(0, Math.floor(ms / 1000) - KSUID_EPOCH_SECONDS));
      const millis = BigInt(((ms % 1000) + 1000) % 1000);
      let rand = 0n;
      for (const byte of random(15)) rand = (rand << 8n) | BigInt(byte);
      rand &= (1n << RANDOM_BITS) - 1n;
      let body = (seconds << (BODY_BITS - 32n)) | (millis << RANDOM_BITS) | rand;
      if (body <= last) body = last + 1n;
      if (body > BODY_MAX) body = BODY_MAX; // year ~2150; unreachable in practice
      last = body;
      return prefix + encodeBase62(body);
    },
    observe(id) {
      const body = idBody(id);
      if (body === undefined) return;
      const v = decodeBase62(body);
      if (v > last) last = v;
    },
  };
}

/** The base62 body of a well-formed ID, or undefined. */
export function idBody(id: string): string | undefined {
  const sep = id.lastIndexOf('_');
  const body = id.slice(sep + 1);
  return sep > 0 && BODY_PATTERN.test(body) ? body : undefined;
}
