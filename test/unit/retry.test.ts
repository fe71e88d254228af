/**
 * The one retry helper (src/retry.ts): the backoff's bounds, `Retry-After`, the abortable sleep,
 * and the loop the API client's, the executor's and the notifications' retries share. No test
 * sleeps: waits are recorded by an injected sleep, or cut short by an abort.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AbortedError } from '../../src/errors.js';
import {
  type Attempted,
  abortableSleep,
  backoffDelay,
  parseRetryAfter,
  realSleep,
  retrying,
  retryWait,
  type Sleep,
} from '../../src/retry.js';

describe('backoffDelay (full jitter)', () => {
  const opts = { baseMs: 100, maxMs: 1000 };
  it.each([
    [0, 1, 100],
    [1, 1, 200],
    [2, 1, 400],
    [3, 1, 800],
    [4, 1, 1000],
    [10, 1, 1000],
    [3, 0.5, 400],
    [3, 0, 0],
  ])('retry %i with random %f waits %i ms', (retry, r, expected) => {
    // random() is in [0, 1); 1 stands for its supremum, to show the ceiling.
    expect(backoffDelay(retry, opts, () => r)).toBe(expected);
  });
});

describe('backoffDelay: bounds', () => {
  it('full jitter stays in [0, ceiling) for any draw of a seeded random', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        (retry, draw, baseMs, maxMs) => {
          const wait = backoffDelay(retry, { baseMs, maxMs }, () => draw);
          const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(retry, 40));
          expect(Number.isInteger(wait)).toBe(true);
          expect(wait).toBeGreaterThanOrEqual(0);
          expect(wait).toBeLessThan(ceiling);
        },
      ),
    );
  });

  it('without jitter, waits are the ceilings themselves, finite however many retries', () => {
    const none = { baseMs: 1000, maxMs: 300_000, jitter: 'none' } as const;
    const never = () => {
      throw new Error('no draw without jitter');
    };
    expect([0, 1, 2, 3, 8, 9, 5000].map((r) => backoffDelay(r, none, never))).toEqual([
      1000, 2000, 4000, 8000, 256_000, 300_000, 300_000,
    ]);
    const uncapped = { baseMs: 1, maxMs: Number.POSITIVE_INFINITY, jitter: 'none' } as const;
    expect(Number.isFinite(backoffDelay(10_000, uncapped, never))).toBe(true);
  });
});

describe('retryWait', () => {
  const backoff = { baseMs: 100, maxMs: 1000 };
  it("a server's Retry-After replaces the backoff; one longer than the bound means give up", () => {
    expect(retryWait(3, backoff, () => 0.5, undefined)).toBe(400);
    expect(retryWait(3, backoff, () => 0.5, 7000)).toBe(7000);
    expect(retryWait(3, backoff, () => 0.5, 0)).toBe(0);
    expect(retryWait(3, backoff, () => 0.5, 7000, 60_000)).toBe(7000);
    expect(retryWait(3, backoff, () => 0.5, 60_001, 60_000)).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    ['2', 2000],
    ['0', 0],
    [' 7 ', 7000],
    ['1.5', 1500],
    [['3', '9'], 3000],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    ['', undefined],
    [undefined, undefined],
  ] as const)('%o -> %o ms', (header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});

describe('abortableSleep', () => {
  it('never sleeps when the signal already fired', async () => {
    const calls: number[] = [];
    const controller = new AbortController();
    controller.abort();
    await expect(
      abortableSleep(async (ms) => void calls.push(ms), 10, controller.signal),
    ).rejects.toBeInstanceOf(AbortedError);
    expect(calls).toEqual([]);
  });

  it('turns whatever an aborted sleep rejects with into AbortedError', async () => {
    const controller = new AbortController();
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(new Error('raw abort')));
      });
    const pending = abortableSleep(sleep, 10_000, controller.signal);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
  });
});

/** An injected sleep that records each wait and returns at once. */
function recordingSleep(): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

/** Attempts that fail with `fail-N` (and the given Retry-After) until attempt `succeedAt`. */
function attemptsUntil(succeedAt: number, retryAfterMs?: number) {
  const tried: number[] = [];
  const attempt = async (n: number): Promise<Attempted<string>> => {
    tried.push(n);
    if (n >= succeedAt) return { done: true, value: `ok at ${n}` };
    return { done: false, failure: new Error(`fail-${n}`), retryAfterMs };
  };
  return { tried, attempt };
}

describe('retrying', () => {
  const backoff = { baseMs: 100, maxMs: 1000 };

  it('waits the exact backoff sequence (seeded draws) between failures, then returns', async () => {
    const { sleep, waits } = recordingSleep();
    const { tried, attempt } = attemptsUntil(5);
    const retries: number[] = [];
    const value = await retrying(
      { attempts: 6, backoff, sleep, random: () => 0.5, onRetry: (n) => retries.push(n) },
      attempt,
    );
    expect(value).toBe('ok at 5');
    expect(tried).toEqual([1, 2, 3, 4, 5]);
    expect(waits).toEqual([50, 100, 200, 400]);
    expect(retries).toEqual([1, 2, 3, 4]);
  });

  it('throws the last failure when no attempt is left, and never waits after it', async () => {
    const { sleep, waits } = recordingSleep();
    const { tried, attempt } = attemptsUntil(99);
    await expect(
      retrying({ attempts: 3, backoff, sleep, random: () => 0 }, attempt),
    ).rejects.toThrow('fail-3');
    expect(tried).toEqual([1, 2, 3]);
    expect(waits).toEqual([0, 0]);
  });

  it('does not retry an error the attempt throws', async () => {
    const { sleep, waits } = recordingSleep();
    let calls = 0;
    const attempt = async (): Promise<Attempted<never>> => {
      calls++;
      throw new Error('not transient');
    };
    await expect(retrying({ attempts: 5, backoff, sleep }, attempt)).rejects.toThrow(
      'not transient',
    );
    expect(calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it("waits a server's Retry-After instead of the backoff, and gives up on a longer one than allowed", async () => {
    const honoured = recordingSleep();
    const first = attemptsUntil(3, 2500);
    await retrying(
      { attempts: 5, backoff, sleep: honoured.sleep, random: () => 0.5 },
      first.attempt,
    );
    expect(honoured.waits).toEqual([2500, 2500]);

    const tooLong = recordingSleep();
    const second = attemptsUntil(3, 120_000);
    await expect(
      retrying(
        { attempts: 5, backoff, sleep: tooLong.sleep, maxRetryAfterMs: 60_000 },
        second.attempt,
      ),
    ).rejects.toThrow('fail-1');
    expect(second.tried).toEqual([1]);
    expect(tooLong.waits).toEqual([]);
  });

  it('an abort during a (real) wait ends it at once, with the last failure', async () => {
    const controller = new AbortController();
    const { tried, attempt } = attemptsUntil(99);
    const started = Date.now();
    const pending = retrying(
      {
        attempts: 5,
        backoff: { baseMs: 600_000, maxMs: 600_000, jitter: 'none' },
        sleep: realSleep,
        signal: controller.signal,
        onRetry: () => queueMicrotask(() => controller.abort(new Error('shutdown'))),
      },
      attempt,
    );
    await expect(pending).rejects.toThrow('fail-1');
    expect(tried).toEqual([1]);
    // Ten minutes were asked for; the abort, not the timer, ended the wait.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('an abort before a wait stops the loop without sleeping', async () => {
    const controller = new AbortController();
    const { sleep, waits } = recordingSleep();
    const tried: number[] = [];
    const attempt = async (n: number): Promise<Attempted<string>> => {
      tried.push(n);
      controller.abort();
      return { done: false, failure: new Error(`fail-${n}`) };
    };
    await expect(
      retrying({ attempts: 5, backoff, sleep, signal: controller.signal }, attempt),
    ).rejects.toThrow('fail-1');
    expect(tried).toEqual([1]);
    expect(waits).toEqual([]);
  });

  it('a sleep that fails for another reason than the abort surfaces that error', async () => {
    const { attempt } = attemptsUntil(99);
    const broken: Sleep = async () => {
      throw new Error('timer broke');
    };
    await expect(retrying({ attempts: 3, backoff, sleep: broken }, attempt)).rejects.toThrow(
      'timer broke',
    );
  });
});

describe('retrying: a failure that costs no attempt', () => {
  const backoff = { baseMs: 100, maxMs: 1000 };

  it('goes again at once under the same number, without a wait or using up an attempt', async () => {
    const { sleep, waits } = recordingSleep();
    const tried: number[] = [];
    // Attempt 1 is "not now" twice (a 429 a rate limiter absorbs), then fails; attempt 2 succeeds.
    const script: Attempted<string>[] = [
      { done: false, failure: new Error('429'), costsNoAttempt: true },
      { done: false, failure: new Error('429'), costsNoAttempt: true },
      { done: false, failure: new Error('503') },
      { done: true, value: 'ok' },
    ];
    const retries: number[] = [];
    const value = await retrying(
      { attempts: 2, backoff, sleep, random: () => 0.5, onRetry: (n) => retries.push(n) },
      async (n) => {
        tried.push(n);
        return script.shift() as Attempted<string>;
      },
    );
    expect(value).toBe('ok');
    expect(tried).toEqual([1, 1, 1, 2]);
    // One wait: the 503's backoff. The free failures neither waited nor told onRetry.
    expect(waits).toEqual([50]);
    expect(retries).toEqual([1]);
  });

  it('with one attempt in all, still goes again (it was not a failed attempt)', async () => {
    const { sleep, waits } = recordingSleep();
    let calls = 0;
    const value = await retrying({ attempts: 1, backoff, sleep }, async () => {
      calls += 1;
      return calls === 1
        ? { done: false, failure: new Error('429'), costsNoAttempt: true }
        : { done: true, value: calls };
    });
    expect(value).toBe(2);
    expect(waits).toEqual([]);
  });

  it('an abort stops it before the next try', async () => {
    const controller = new AbortController();
    let calls = 0;
    const pending = retrying(
      { attempts: 5, backoff, sleep: recordingSleep().sleep, signal: controller.signal },
      async (): Promise<Attempted<never>> => {
        calls += 1;
        controller.abort();
        return { done: false, failure: new Error('429'), costsNoAttempt: true };
      },
    );
    await expect(pending).rejects.toThrow('429');
    expect(calls).toBe(1);
  });
});

describe("retrying with onAbort: 'aborted'", () => {
  const backoff = { baseMs: 100, maxMs: 1000 };

  it('an abort during a wait throws AbortedError, carrying the reason, not the last failure', async () => {
    const controller = new AbortController();
    const { tried, attempt } = attemptsUntil(99);
    const pending = retrying(
      {
        attempts: 5,
        backoff: { baseMs: 600_000, maxMs: 600_000, jitter: 'none' },
        sleep: realSleep,
        signal: controller.signal,
        onAbort: 'aborted',
        onRetry: () => queueMicrotask(() => controller.abort(new Error('ctrl-c'))),
      },
      attempt,
    );
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortedError);
    expect((err as AbortedError).cause).toEqual(new Error('ctrl-c'));
    expect(tried).toEqual([1]);
  });

  it('an abort before a wait throws AbortedError without sleeping; the last attempt still throws its failure', async () => {
    const controller = new AbortController();
    const { sleep, waits } = recordingSleep();
    const failing = async (): Promise<Attempted<string>> => {
      controller.abort();
      return { done: false, failure: new Error('fail') };
    };
    await expect(
      retrying(
        { attempts: 5, backoff, sleep, signal: controller.signal, onAbort: 'aborted' },
        failing,
      ),
    ).rejects.toBeInstanceOf(AbortedError);
    // No attempt left: what failed is the answer, abort or not.
    await expect(
      retrying(
        { attempts: 1, backoff, sleep, signal: controller.signal, onAbort: 'aborted' },
        failing,
      ),
    ).rejects.toThrow('fail');
    expect(waits).toEqual([]);
  });
});

describe('realSleep', () => {
  it('rejects with AbortedError, carrying the reason, when its signal fires', async () => {
    const controller = new AbortController();
    const pending = realSleep(600_000, controller.signal);
    controller.abort(new Error('stop'));
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortedError);
    expect((err as AbortedError).cause).toEqual(new Error('stop'));
  });
});
