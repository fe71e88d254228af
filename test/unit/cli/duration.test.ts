import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/duration.js';
import { UsageError } from '../../../src/errors.js';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['60s', 60_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5s', 1500],
    ['1.1s', 1100],
    ['.5s', 500],
    ['0', 0],
    ['0s', 0],
    [' 10s ', 10_000],
    ['596h', 2_145_600_000],
  ])('%s -> %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['', 'empty duration'],
    ['60', 'missing unit'],
    ['1.5', 'missing unit'],
    ['-5s', 'negative duration'],
    ['5 s', 'invalid duration'],
    ['5sec', 'invalid duration'],
    ['5d', 'invalid duration'],
    ['s', 'invalid duration'],
    ['1.5.2s', 'invalid duration'],
    ['1s foo', 'invalid duration'],
    ['0.5ms', 'finer than a millisecond'],
    ['597h', 'too long'],
  ])('refuses %j (%s)', (text, why) => {
    expect(() => parseDuration(text, '--interval')).toThrow(UsageError);
    expect(() => parseDuration(text, '--interval')).toThrow(`--interval: ${why}`);
  });
});
