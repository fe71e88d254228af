import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRateLimiter, sharedRateLimiter } from '../../../src/api/rate-limit.js';
import { AbortedError, ConfigError } from '../../../src/errors.js';

/** A clock that only moves when someone sleeps on it (or the test advances it). */
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
      // Time moves after the callers already let through have run (as with a real timer).
      await new Promise<void>((resolve) => setImmediate(resolve));
      t += ms;
    },
  };
}

/** The largest number of sends inside any window of `windowMs` (half-open). */
function maxInWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] as number) - (times[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe('rolling-window limiter', () => {
  it('lets `limit` requests go at once, then one per slot as the oldest leaves the window', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 3, windowMs: 1000 }, clock);
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      await limiter.acquire();
      times.push(clock.now());
    }
    expect(maxInWindow(times, 1000)).toBe(3);
    // Not a token bucket: the 4th waits for the 1st to leave the window (plus a 50 ms margin).
    expect((times[3] as number) - (times[0] as number)).toBe(1050);
  });

  it('times a slot from its answer: a slow answer holds the slot a window past its arrival', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 2, windowMs: 1000 }, clock);
    const t0 = clock.now();
    const first = await limiter.acquire();
    const second = await limiter.acquire();
    // The second answer is instant; the first takes 400 ms.
    limiter.answered(second);
    clock.advance(400);
    limiter.answered(first);
    // The second's slot frees first: a window (and the 50 ms margin) after its answer at t0.
    await limiter.acquire();
    expect(clock.now() - t0).toBe(1050);
    // The next one waits for the first's slot, timed from its answer (t0 + 400), not its send.
    await limiter.acquire();
    expect(clock.now() - t0).toBe(400 + 1050);
  });

  it('keeps no abort listener on the signal once the slot is granted', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 100, windowMs: 1000 }, clock);
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    }) as typeof remove;
    for (let i = 0; i < 20; i++) await limiter.acquire(controller.signal);
    expect(listeners).toBe(0);
  });

  it('never lets more than `limit` requests into any window, whatever the arrival pattern', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 10, max: 5000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 8 })), {
          maxLength: 30,
        }),
        async (limit, windowMs, arrivals) => {
          const clock = fakeClock();
          const limiter = createRateLimiter({ limit, windowMs }, clock);
          const times: number[] = [];
          for (const [gap, burst] of arrivals) {
            clock.advance(gap);
            await Promise.all(
              Array.from({ length: burst }, () =>
                limiter.acquire().then(() => void times.push(clock.now())),
              ),
            );
          }
          times.sort((a, b) => a - b);
          expect(maxInWindow(times, windowMs)).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a process started on a spent budget: one 429, a pause until Retry-After, then the full rate', async () => {
    // 10 per 1,000 ms (margin 50 ms: a slot is held 1,050 ms). Five of ours went at T; the
    // sixth is refused: Retry-After 550 ms says the oldest of the service's window leaves at
    // T + 550, so the others' five went between T - 500 and T (spread: T - 400 ... T).
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 10, windowMs: 1000 }, clock);
    const T = clock.now();
    const ours = [];
    for (let i = 0; i < 6; i++) ours.push(await limiter.acquire());
    for (const sentAt of ours.slice(0, 5)) limiter.answered(sentAt);
    limiter.throttled(550, ours[5]);
    expect(limiter.snapshot()).toMatchObject({ inWindow: 10, throttled: 1 });
    const at: number[] = [];
    for (let i = 0; i < 12; i++) {
      await limiter.acquire();
      at.push(clock.now() - T);
    }
    // Nothing before Retry-After; then each slot as the others' requests leave (T - 400 + 1,050
    // ...), then ours and the last of theirs together at T + 1,050: the window's full rate,
    // not a halved pace.
    expect(at).toEqual([650, 750, 850, 950, 1050, 1050, 1050, 1050, 1050, 1050, 1700, 1800]);
    expect(maxInWindow(at, 1000)).toBeLessThanOrEqual(10);
  });

  it('a burst of 429s pauses once; each refused slot goes back, taken by the others', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 4, windowMs: 1000 }, clock);
    const T = clock.now();
    const ours = [];
    for (let i = 0; i < 4; i++) ours.push(await limiter.acquire());
    limiter.answered(ours[0] as number);
    limiter.answered(ours[1] as number);
    limiter.throttled(300, ours[2]);
    clock.advance(10);
    limiter.throttled(300, ours[3]); // in flight with the first: the same pause, 10 ms later
    expect(limiter.snapshot()).toMatchObject({ inWindow: 4, throttled: 2 });
    // Two of ours at T, two of theirs (the latest they can be: T and T + 10).
    const at: number[] = [];
    for (let i = 0; i < 5; i++) {
      await limiter.acquire();
      at.push(clock.now() - T);
    }
    expect(at).toEqual([1050, 1050, 1050, 1060, 2100]);
  });

  it('Retry-After longer than the window: everything waits for it, then the window is whole', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 3, windowMs: 1000 }, clock);
    const T = clock.now();
    limiter.throttled(5000);
    const at: number[] = [];
    for (let i = 0; i < 4; i++) {
      await limiter.acquire();
      at.push(clock.now() - T);
    }
    expect(at).toEqual([5000, 5000, 5000, 6050]);
  });

  it('without Retry-After, waits until the oldest send leaves the window', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 4, windowMs: 1000 }, clock);
    await limiter.acquire();
    clock.advance(200);
    limiter.throttled(undefined);
    const before = clock.now();
    await limiter.acquire();
    expect(clock.now() - before).toBe(850);
  });

  it('serves high-priority requests first', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 1, windowMs: 100 }, clock);
    await limiter.acquire();
    const order: string[] = [];
    await Promise.all([
      limiter.acquire(undefined, 'normal').then(() => void order.push('resync-1')),
      limiter.acquire(undefined, 'normal').then(() => void order.push('resync-2')),
      limiter.acquire(undefined, 'high').then(() => void order.push('change')),
    ]);
    expect(order).toEqual(['change', 'resync-1', 'resync-2']);
  });

  it('an aborted waiter leaves the queue with AbortedError, and costs no slot', async () => {
    const clock = fakeClock();
    let wake: (() => void) | undefined;
    const limiter = createRateLimiter(
      { limit: 1, windowMs: 100 },
      {
        now: clock.now,
        sleep: (ms) =>
          new Promise<void>((resolve) => {
            wake = () => {
              clock.advance(ms);
              resolve();
            };
          }),
      },
    );
    await limiter.acquire();
    const controller = new AbortController();
    const aborted = limiter.acquire(controller.signal);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortedError);
    expect(limiter.snapshot().waiting).toBe(0);
    await expect(limiter.acquire(AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
    wake?.();
  });

  it('is shared per account and process', () => {
    const clock = fakeClock();
    const a = sharedRateLimiter('https://api|k1', { limit: 5, windowMs: 1000 }, clock);
    expect(sharedRateLimiter('https://api|k1', { limit: 5, windowMs: 1000 }, clock)).toBe(a);
    expect(sharedRateLimiter('https://api|k2', { limit: 5, windowMs: 1000 }, clock)).not.toBe(a);
  });

  it.each([
    [0, 1000],
    [-1, 1000],
    [5, 0],
    [1.5, 10],
    [Number.NaN, 10],
  ])('refuses limit %d per %d ms', (limit, windowMs) => {
    expect(() => createRateLimiter({ limit, windowMs }, fakeClock())).toThrow(ConfigError);
  });
});
