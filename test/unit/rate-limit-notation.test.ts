import { describe, expect, it } from 'vitest';
import { HOSTED_RATE_LIMIT } from '../../src/hosted/rate-limit.js';
import { parseRateLimit } from '../../src/rate-limit-notation.js';
import { parseRateLimit as serverParse } from '../../src/server/knobs.js';

describe('parseRateLimit (the N/Ws notation of the client and the server)', () => {
  it.each([
    // The common cases are in test/unit/server/knobs.test.ts (the server re-exports it).
    [' 10/2.5s ', { limit: 10, windowMs: 2_500 }],
    ['-1/1s', undefined],
    ['10/1h', undefined],
    ['99999999999999999999/1s', undefined],
  ])('%j -> %j', (text, expected) => {
    expect(parseRateLimit(text)).toEqual(expected);
  });

  it("states the hosted service's budget in its own notation", () => {
    expect(parseRateLimit('120/60s')).toEqual(HOSTED_RATE_LIMIT);
  });

  it('is the one parser: the server re-exports it for its --rate-limit knob', () => {
    expect(serverParse).toBe(parseRateLimit);
  });
});
