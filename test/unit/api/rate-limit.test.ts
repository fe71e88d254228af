import { describe, expect, it } from 'vitest';
import { createTokenBucket } from '../../../src/api/rate-limit.js';
import { AbortedError, ConfigError } from '../../../src/errors.js';

/** A clock that only moves when someone sleeps on it. */
function fakeClock() {
  let t = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
  };
}

describe('token bucket', () => {
  it('allows a burst of `limit`, then spaces requests at the refill rate', async () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ limit: 3, windowMs: 3000 }, clock);
    for (let i = 0; i < 5; i++) await bucket.take();
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  it('refills with elapsed time, capped at the limit', async () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ limit: 2, windowMs: 1000 }, clock);
    await bucket.take();
    await bucket.take();
    clock.advance(60_000); // a long idle period refills two tokens, not 120
    await bucket.take();
    await bucket.take();
    await bucket.take();
    expect(clock.sleeps).toEqual([500]);
  });

  it('queues concurrent callers in arrival order with growing waits', async () => {
    const clock = fakeClock();
    const waits: number[] = [];
    // Sleeps that do not advance the clock: every caller reserves before anyone has waited.
    const bucket = createTokenBucket(
      { limit: 1, windowMs: 100 },
      { now: clock.now, sleep: async (ms) => void waits.push(ms) },
    );
    await Promise.all([bucket.take(), bucket.take(), bucket.take(), bucket.take()]);
    expect(waits).toEqual([100, 200, 300]);
  });

  it('gives the token back when a waiting caller aborts', async () => {
    const clock = fakeClock();
    const waits: number[] = [];
    const bucket = createTokenBucket(
      { limit: 1, windowMs: 100 },
      {
        now: clock.now,
        sleep: (ms, signal) =>
          new Promise<void>((resolve, reject) => {
            waits.push(ms);
            if (signal) signal.addEventListener('abort', () => reject(signal.reason));
            else resolve();
          }),
      },
    );
    await bucket.take();
    const controller = new AbortController();
    const aborted = bucket.take(controller.signal);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortedError);
    await bucket.take(); // waits 100 (one token of debt), not 200
    expect(waits).toEqual([100, 100]);
  });

  it('rejects at once when the signal has already fired', async () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ limit: 1, windowMs: 100 }, clock);
    await expect(bucket.take(AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
    await bucket.take();
    expect(clock.sleeps).toEqual([]);
  });

  it.each([
    [0, 1000],
    [-1, 1000],
    [5, 0],
    [Number.NaN, 10],
  ])('refuses limit %d per %d ms', (limit, windowMs) => {
    expect(() => createTokenBucket({ limit, windowMs }, fakeClock())).toThrow(ConfigError);
  });
});
