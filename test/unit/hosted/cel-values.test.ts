import { describe, expect, it } from 'vitest';
import { celObject, celStringLike } from '../../../src/hosted/cel-values.js';

describe('the run-time values of CEL object types', () => {
  it('reads fields in place and walks them whole as a map', () => {
    const cookie = celObject('svc.ReqCookie', { name: 'sid', value: 'abc' });
    expect(cookie.get('value')).toBe('abc');
    expect(cookie.has('name')).toBe(true);
    expect(cookie.get('other')).toBeUndefined();
    expect(cookie.size).toBe(2);
    expect([...cookie]).toEqual([
      ['name', 'sid'],
      ['value', 'abc'],
    ]);
    expect(Object.fromEntries(cookie.entries())).toEqual({ name: 'sid', value: 'abc' });
  });

  it('gives a value that is also a string its text, one class per type', () => {
    const url = celStringLike('svc.Url', 'https://a.example/p', { path: '/p' });
    expect(String(url)).toBe('https://a.example/p');
    expect(url.get('path')).toBe('/p');
    expect(url.constructor).toBe(celStringLike('svc.Url', '').constructor);
    expect(url.constructor).not.toBe(celStringLike('svc.Ip', '').constructor);
  });
});
