import { describe, expect, it } from 'vitest';
import {
  type AttemptFailure,
  classifyFailure,
  mayHaveBeenPerformed,
  requestNotSent,
} from '../../../src/api/retry.js';

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
