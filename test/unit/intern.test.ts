import { describe, expect, it } from 'vitest';
import { Interned } from '../../src/intern.js';

describe('Interned', () => {
  it('hands back the value first kept for a key, and starts over when full', () => {
    const table = new Interned<string[]>(2);
    const a = ['a'];
    expect(table.of('a', a)).toBe(a);
    expect(table.of('a', ['a'])).toBe(a);
    expect(table.of('b', ['b'])).toEqual(['b']);
    // Full: the next new key clears the table, so `a` is kept afresh.
    const c = ['c'];
    expect(table.of('c', c)).toBe(c);
    const again = ['a'];
    expect(table.of('a', again)).toBe(again);
  });
});
