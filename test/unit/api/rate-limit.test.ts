import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRateLimiter,
  type Priority,
  type RateLimiter,
  sharedRateLimiter,
} from '../../../src/api/rate-limit.js';
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

/** One request let go and answered at once (its slot timed from now). */
async function send(
  limiter: RateLimiter,
  signal?: AbortSignal,
  priority?: Priority,
): Promise<number> {
  const sentAt = await limiter.acquire(signal, priority);
  limiter.answered(sentAt);
  return sentAt;
}

/** Whether a promise has settled after the pending callbacks ran (the fake clock never moved). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
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
      await send(limiter);
      times.push(clock.now());
    }
    expect(maxInWindow(times, 1000)).toBe(3);
    // Not a token bucket: the 4th waits for the 1st to leave the window (plus a 50 ms margin).
    expect((times[3] as number) - (times[0] as number)).toBe(1050);
  });

  it('times a slot from its answer: a slow answer holds the slot a window past its arrival', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 1, windowMs: 1000 }, clock);
    const t0 = clock.now();
    const first = await limiter.acquire();
    // The answer takes 400 ms: the slot frees a window (and the 50 ms margin) after it, not
    // after the send.
    clock.advance(400);
    limiter.answered(first);
    await send(limiter);
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
    for (let i = 0; i < 20; i++) await send(limiter, controller.signal);
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
                limiter.acquire().then((sentAt) => {
                  times.push(clock.now());
                  limiter.answered(sentAt);
                }),
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

  it('a first 429 teaches: the others fill the window, a pause until Retry-After, then the full rate', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 10, windowMs: 1000 }, clock);
    const t0 = clock.now();
    await send(limiter);
    clock.advance(100);
    const refused = await limiter.acquire();
    // Behind the refused one, before the lesson: these wait for its answer (one 429, no burst).
    const behind = [limiter.acquire(), limiter.acquire()];
    expect(await settled(Promise.race(behind))).toBe(false);
    limiter.throttled(400, refused);
    expect(limiter.snapshot()).toMatchObject({ currentLimit: 10, throttled: 1, inWindow: 10 });
    // Taught: the first goes when the oldest slot frees (Retry-After); the others' other
    // requests are taken to be no later than this process's first (a budget spent before it
    // began), so the second goes a window after that, without waiting for the first's answer.
    await behind[0];
    expect(clock.now() - t0).toBe(500);
    const granted = await Promise.all(behind);
    expect(clock.now() - t0).toBe(1050);
    // No halving and no pacing: the slots the others' requests leave go at once as they free.
    const at: number[] = [];
    for (let i = 0; i < 3; i++) {
      await limiter.acquire();
      at.push(clock.now() - t0);
    }
    for (const sentAt of granted) limiter.answered(sentAt);
    expect(limiter.snapshot().currentLimit).toBe(10);
    expect(Math.max(...at)).toBeLessThan(1100);
  });

  it('while the budget is unknown, a request waits for the answer of the one in flight, not for time', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 100, windowMs: 1000 }, clock);
    const first = await limiter.acquire();
    const second = limiter.acquire();
    expect(await settled(second)).toBe(false);
    expect(clock.sleeps).toEqual([]);
    limiter.answered(first);
    limiter.answered(await second);
    // A lesson a window old is stale: one at a time again.
    limiter.throttled(100, await limiter.acquire());
    const a = await limiter.acquire();
    expect(await settled(limiter.acquire().then((b) => limiter.answered(b)))).toBe(true);
    limiter.answered(a);
    clock.advance(1200);
    const c = await limiter.acquire();
    const d = limiter.acquire();
    expect(await settled(d)).toBe(false);
    limiter.answered(c);
    limiter.answered(await d);
  });

  it('a process started on a budget others spent meets one 429, however unevenly they spent it', async () => {
    // A service counting a rolling window and answering Retry-After in whole seconds, as the
    // local server and the hosted service do; others spent part or all of the budget, at any
    // times, before this process's first request; this process then sends its requests one
    // after another (a paginated listing).
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 1, max: 150 }),
        async (othersAt, gap, requests) => {
          const limit = 120;
          const windowMs = 60_000;
          const clock = fakeClock();
          const t0 = clock.now();
          const counted = othersAt.map((at) => t0 + at).sort((a, b) => a - b);
          const start = Math.max(...counted) + gap;
          clock.advance(start - t0);
          const limiter = createRateLimiter({ limit, windowMs }, clock);
          let refused = 0;
          for (let sentOk = 0; sentOk < requests; ) {
            const sentAt = await limiter.acquire();
            const now = clock.now();
            const inWindow = counted.filter((at) => at > now - windowMs);
            if (inWindow.length >= limit) {
              refused += 1;
              const leaves = (inWindow[0] as number) + windowMs;
              limiter.throttled(Math.ceil((leaves - now) / 1000) * 1000, sentAt);
            } else {
              counted.push(now);
              limiter.answered(sentAt);
              sentOk += 1;
            }
          }
          expect(refused).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a 429 soon after a lesson means a shared budget: pause, halve the pace, then recover', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 10, windowMs: 1000 }, clock);
    limiter.throttled(0, await limiter.acquire()); // the lesson
    const sentAt = await limiter.acquire();
    limiter.throttled(5000, sentAt);
    limiter.throttled(5000, sentAt); // the same burst of 429s: one pause, one halving
    const before = clock.now();
    await send(limiter);
    expect(clock.now() - before).toBe(5000);
    expect(limiter.snapshot()).toMatchObject({ currentLimit: 5, throttled: 3 });
    // Quiet windows give a tenth of the limit back each.
    clock.advance(3000);
    await send(limiter);
    expect(limiter.snapshot().currentLimit).toBe(8);
    clock.advance(10_000);
    await send(limiter);
    expect(limiter.snapshot().currentLimit).toBe(10);
    // A quiet window at the full pace: the next 429 teaches again instead of halving.
    clock.advance(2000);
    await send(limiter);
    limiter.throttled(0, await limiter.acquire());
    expect(limiter.snapshot().currentLimit).toBe(10);
  });

  it('a 429 a window or more after a lesson is a new lesson, not sharing', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 10, windowMs: 1000 }, clock);
    limiter.throttled(100, await limiter.acquire());
    await send(limiter);
    clock.advance(1000);
    limiter.throttled(100, await limiter.acquire());
    expect(limiter.snapshot().currentLimit).toBe(10);
  });

  it('recovers slowly near the pace of the last 429, then faster past it', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 120, windowMs: 1000 }, clock);
    const paceAfter = async (windows: number): Promise<number> => {
      clock.advance(windows * 1000);
      await send(limiter);
      return limiter.snapshot().currentLimit;
    };
    limiter.throttled(0, await limiter.acquire()); // the lesson
    limiter.throttled(0, await limiter.acquire()); // at 120: the ceiling is 120, the pace 60
    // A tenth (12) per window up to 85% of the ceiling (102), then a fortieth (3).
    expect(await paceAfter(1)).toBe(72);
    expect(await paceAfter(3)).toBe(108);
    expect(await paceAfter(1)).toBe(111);
    limiter.throttled(0, await limiter.acquire()); // at 111: the ceiling is 111, the pace 55
    expect(await paceAfter(4)).toBe(103);
    expect(await paceAfter(3)).toBe(112);
    // Past the ceiling: 3, 6, 12, 12... (the other client may be gone).
    expect(await paceAfter(1)).toBe(115);
    expect(await paceAfter(1)).toBe(120);
  });

  it('once the pace is lowered, sends at an even pace instead of a burst at the end of the pause', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 120, windowMs: 1200 }, clock);
    limiter.throttled(0, await limiter.acquire()); // the lesson: the others fill the window
    clock.advance(1199);
    limiter.throttled(0, await limiter.acquire()); // the pace is 60 per 1.2 s: one every 20 ms
    clock.advance(100); // what the lesson counted has left the window
    const start = clock.now();
    const at: number[] = [];
    for (let i = 0; i < 5; i++) {
      await send(limiter);
      at.push(clock.now() - start);
    }
    expect(at).toEqual([0, 20, 40, 60, 80]);
    // Unthrottled, the window's sends may go at once.
    const fresh = createRateLimiter({ limit: 120, windowMs: 1200 }, clock);
    const before = clock.now();
    for (let i = 0; i < 5; i++) await send(fresh);
    expect(clock.now()).toBe(before);
  });

  it('without Retry-After, waits until the oldest send leaves the window', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 4, windowMs: 1000 }, clock);
    await send(limiter);
    clock.advance(200);
    limiter.throttled(undefined, await limiter.acquire());
    const before = clock.now();
    await send(limiter);
    expect(clock.now() - before).toBe(850);
  });

  it('serves high-priority requests first', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ limit: 1, windowMs: 100 }, clock);
    await send(limiter);
    const order: string[] = [];
    await Promise.all([
      send(limiter, undefined, 'normal').then(() => void order.push('resync-1')),
      send(limiter, undefined, 'normal').then(() => void order.push('resync-2')),
      send(limiter, undefined, 'high').then(() => void order.push('change')),
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
    await send(limiter);
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
