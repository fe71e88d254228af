import { describe, expect, it } from 'vitest';
import {
  type AttemptFailure,
  abortableSleep,
  backoffDelay,
  classifyFailure,
  mayHaveBeenPerformed,
  parseRetryAfter,
  requestNotSent,
} from '../../../src/api/retry.js';
import { AbortedError } from '../../../src/errors.js';

describe('classifyFailure', () => {
  const status = (s: number): AttemptFailure => ({ kind: 'status', status: s });
  it.each([
    ['GET', status(429), 'retry'],
    ['POST', status(429), 'retry'],
    ['GET', status(500), 'retry'],
    ['PATCH', status(502), 'retry'],
    ['PUT', status(503), 'retry'],
    ['DELETE', status(504), 'retry'],
    ['POST', status(500), 'unknown'],
    ['POST', status(503), 'unknown'],
    ['GET', status(501), 'fail'],
    ['GET', status(400), 'fail'],
    ['DELETE', status(404), 'fail'],
    ['POST', status(409), 'fail'],
    ['GET', { kind: 'network', sent: false }, 'retry'],
    ['POST', { kind: 'network', sent: false }, 'retry'],
    ['POST', { kind: 'network', sent: true }, 'unknown'],
    ['PATCH', { kind: 'network', sent: true }, 'retry'],
    ['POST', { kind: 'timeout' }, 'unknown'],
    ['DELETE', { kind: 'timeout' }, 'retry'],
  ] as const)('%s with %o: %s', (method, failure, verdict) => {
    expect(classifyFailure(method, failure)).toBe(verdict);
  });

  it.each([
    [{ kind: 'status', status: 429 } as const, false],
    [{ kind: 'status', status: 503 } as const, true],
    [{ kind: 'network', sent: false } as const, false],
    [{ kind: 'network', sent: true } as const, true],
    [{ kind: 'timeout' } as const, true],
  ])('mayHaveBeenPerformed(%o) = %s', (failure, expected) => {
    expect(mayHaveBeenPerformed(failure)).toBe(expected);
  });
});

describe('requestNotSent', () => {
  const coded = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    [coded('ECONNREFUSED'), true],
    [coded('UND_ERR_CONNECT_TIMEOUT'), true],
    [new Error('fetch failed', { cause: coded('UND_ERR_CONNECT_TIMEOUT') }), true],
    [coded('UND_ERR_HEADERS_TIMEOUT'), false],
    [coded('UND_ERR_BODY_TIMEOUT'), false],
    [coded('ETIMEDOUT'), false],
    [coded('ENOTFOUND'), true],
    [new Error('wrapped', { cause: coded('ECONNREFUSED') }), true],
    [new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), true],
    [new AggregateError([coded('ECONNREFUSED'), coded('ECONNRESET')]), false],
    [coded('ECONNRESET'), false],
    [coded('UND_ERR_SOCKET'), false],
    [new Error('other side closed'), false],
    ['a string', false],
  ])('%o -> %s', (err, expected) => {
    expect(requestNotSent(err)).toBe(expected);
  });
});

describe('backoffDelay (full jitter)', () => {
  const opts = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1000 };
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
