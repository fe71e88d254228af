/**
 * The one duration notation: the daemon's flags (`--interval 60s`, `--debounce 250ms`,
 * `--grace 10s`), the traffic policy's duration fields on the manifest side and the local
 * server's statement of them. Go-style units, possibly combined (`1m30s`), decimals allowed
 * (`1.5s`) as long as the result is a whole number of milliseconds. A bare number is refused (is `60` seconds or milliseconds?), except `0`.
 */
import { UsageError } from './errors.js';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** setTimeout's ceiling (about 24.8 days): Node fires longer timers immediately. */
export const MAX_DURATION_MS = 2_147_483_647;

const PART = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)/gy;

export function parseDuration(text: string, flag = 'duration'): number {
  const fail = (why: string) =>
    new UsageError(`${flag}: ${why}: "${text}" (use e.g. 250ms, 10s, 5m, 1h30m)`);
  const value = text.trim();
  if (value === '0') return 0;
  if (value === '') throw fail('empty duration');
  if (/^[+-]?\d+(\.\d+)?$/.test(value)) throw fail('missing unit');
  if (value.startsWith('-')) throw fail('negative duration');
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null = PART.exec(value);
  while (match !== null) {
    const [whole, amount, unit] = match;
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
    consumed += whole.length;
    match = PART.exec(value);
  }
  if (consumed !== value.length || consumed === 0) throw fail('invalid duration');
  // Decimal arithmetic: 1.1s is 1100.0000000000002 in floating point.
  const ms = Math.round(total * 1e6) / 1e6;
  if (!Number.isInteger(ms)) throw fail('finer than a millisecond');
  if (ms > MAX_DURATION_MS) throw fail('too long (at most 596h)');
  return ms;
}
