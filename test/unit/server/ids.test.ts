import { describe, expect, it } from 'vitest';
import { createIdGenerator, decodeBase62, encodeBase62, idBody } from '../../../src/server/ids.js';

describe('IDs', () => {
  it('have the prefix and 27 base62 characters', () => {
    const ids = createIdGenerator({ now: () => 1_700_000_000_000 });
    expect(ids.next('edgtls_')).toMatch(/^edgtls_[0-9A-Za-z]{27}$/);
  });

  it('are strictly increasing within one millisecond, even when the random part is not', () => {
    let flip = 0;
    const ids = createIdGenerator({
      now: () => 1_700_000_000_123,
      // Alternating high and low random bytes: without the bump, order would break.
      random: (n) => Buffer.alloc(n, flip++ % 2 === 0 ? 0xff : 0x00),
    });
    const made = Array.from({ length: 50 }, () => ids.next('bot_'));
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(50);
  });

  it('order by time across seconds and milliseconds', () => {
    let t = 1_700_000_000_999;
    const ids = createIdGenerator({ now: () => t, random: (n) => Buffer.alloc(n, 0xff) });
    const a = ids.next('x_');
    t += 1;
    const b = ids.next('x_');
    t += 1000;
    const c = ids.next('x_');
    expect([a, b, c]).toEqual([a, b, c].sort());
  });

  it('sort after an observed ID even if the clock went back', () => {
    const late = createIdGenerator({ now: () => 1_800_000_000_000 }).next('bot_');
    const ids = createIdGenerator({ now: () => 1_700_000_000_000 });
    ids.observe(late);
    expect(ids.next('bot_') > late).toBe(true);
  });

  it('base62 round-trips and keeps numeric order as string order', () => {
    const values = [0n, 1n, 61n, 62n, 2n ** 100n, 2n ** 160n - 1n];
    for (const v of values) expect(decodeBase62(encodeBase62(v))).toBe(v);
    const encoded = values.map(encodeBase62);
    expect([...encoded].sort()).toEqual(encoded);
    expect(encodeBase62(2n ** 160n - 1n)).toHaveLength(27);
  });

  it.each([
    ['bot_0123456789ABCDEFGHIJKLMNOPQ', '0123456789ABCDEFGHIJKLMNOPQ'],
    ['bot_short', undefined],
    ['nounderscore', undefined],
    ['bot_0123456789ABCDEFGHIJKLMNO!', undefined],
  ])('idBody(%s)', (id, body) => {
    expect(idBody(id)).toBe(body);
  });
});
