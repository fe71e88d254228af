import { describe, expect, it } from 'vitest';
import {
  AccountThrottle,
  HeldWrites,
  type LateCreates,
  parseLatency,
  parseRate,
  parseRateLimit,
} from '../../../src/server/knobs.js';

describe('AccountThrottle (rolling window, injected time)', () => {
  it('admits up to the limit, then answers the seconds until a slot frees', () => {
    const throttle = new AccountThrottle();
    const limit = { limit: 2, windowMs: 10_000 };
    expect(throttle.check('a', limit, 1_000)).toBe(0);
    expect(throttle.check('a', limit, 4_000)).toBe(0);
    // The first admission (t=1000) leaves the window at 11000: 7 s from t=4000.
    expect(throttle.check('a', limit, 4_000)).toBe(7);
    expect(throttle.check('a', limit, 10_999)).toBe(1);
    expect(throttle.check('a', limit, 11_000)).toBe(0);
    // Refused requests did not consume slots: the next frees at 14000.
    expect(throttle.check('a', limit, 11_500)).toBe(3);
  });

  it('keeps accounts apart', () => {
    const throttle = new AccountThrottle();
    const limit = { limit: 1, windowMs: 1_000 };
    expect(throttle.check('a', limit, 0)).toBe(0);
    expect(throttle.check('a', limit, 1)).toBe(1);
    expect(throttle.check('b', limit, 1)).toBe(0);
  });

  it('follows a limit lowered at runtime', () => {
    const throttle = new AccountThrottle();
    for (let i = 0; i < 5; i++)
      expect(throttle.check('a', { limit: 10, windowMs: 60_000 }, i)).toBe(0);
    expect(throttle.check('a', { limit: 3, windowMs: 60_000 }, 10)).toBe(60);
  });
});

describe('flag parsers', () => {
  it.each([
    ['120/60s', { limit: 120, windowMs: 60_000 }],
    ['5/1s', { limit: 5, windowMs: 1_000 }],
    ['10/500ms', { limit: 10, windowMs: 500 }],
    ['100/1m', { limit: 100, windowMs: 60_000 }],
    ['7/2', { limit: 7, windowMs: 2_000 }],
    ['0/1s', undefined],
    ['x/1s', undefined],
    ['10/0s', undefined],
    ['10', undefined],
  ])('parseRateLimit(%s)', (text, expected) => {
    expect(parseRateLimit(text)).toEqual(expected);
  });

  it.each([
    ['50', { min: 50, max: 50 }],
    ['10-200', { min: 10, max: 200 }],
    ['200-10', undefined],
    ['-5', undefined],
    ['abc', undefined],
  ])('parseLatency(%s)', (text, expected) => {
    expect(parseLatency(text)).toEqual(expected);
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['0.25', 0.25],
    ['.5', 0.5],
    ['1.5', undefined],
    ['-0.1', undefined],
    ['NaN', undefined],
    ['', undefined],
  ])('parseRate(%s)', (text, expected) => {
    expect(parseRate(text)).toBe(expected);
  });
});

describe('HeldWrites (the lateCreates knob)', () => {
  it('holds the next `count` POSTs under the prefix, and nothing else', () => {
    const late: LateCreates = { count: 2, holdMs: 1_000, pathPrefix: '/bot_users' };
    expect(HeldWrites.takes(late, 'GET', '/bot_users')).toBe(false);
    expect(HeldWrites.takes(late, 'POST', '/edges/https')).toBe(false);
    expect(HeldWrites.takes(late, 'POST', '/bot_users')).toBe(true);
    expect(HeldWrites.takes(late, 'POST', '/bot_users')).toBe(true);
    expect(HeldWrites.takes(late, 'POST', '/bot_users')).toBe(false);
    expect(late.count).toBe(0);
    expect(HeldWrites.takes(undefined, 'POST', '/bot_users')).toBe(false);
  });

  it('releases a request waiting for the next write when one is performed', async () => {
    const held = new HeldWrites();
    let released = false;
    const waiting = held.hold({ count: 0, holdMs: 60_000, untilNextWrite: true }).then(() => {
      released = true;
    });
    await Promise.resolve();
    expect(released).toBe(false);
    held.release();
    await waiting;
    expect(released).toBe(true);
  });
});
