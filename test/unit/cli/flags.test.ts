import { describe, expect, it } from 'vitest';
import type { CliContext } from '../../../src/cli/context.js';
import {
  clientBudget,
  durationFlag,
  manifestDirArg,
  parseCommandArgs,
  rateLimitFlag,
  wholeNumber,
} from '../../../src/cli/flags.js';
import { ConfigError, UsageError } from '../../../src/errors.js';

const OPTIONS = {
  'max-deletes': { type: 'string' },
  concurrency: { type: 'string' },
  help: { type: 'boolean' },
} as const;

function usageError(f: () => unknown): UsageError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error('expected a UsageError');
}

describe('parseCommandArgs', () => {
  it('says in one line what was wrong, with the closest flag, then points to --help', () => {
    const usage = 'usage: edgesync plan [DIR] [options]\n\n  --max-deletes N ...\n';
    const err = usageError(() => parseCommandArgs(['--max-delete', '3'], OPTIONS, usage));
    expect(err.message).toBe(
      "Unknown option '--max-delete'; did you mean --max-deletes?\n" +
        'Run "edgesync plan --help" for its options.',
    );
  });

  it('adds no suggestion when nothing is close', () => {
    const err = usageError(() => parseCommandArgs(['--frobnicate'], OPTIONS, 'USAGE'));
    expect(err.message).not.toContain('did you mean');
  });

  it('refuses positionals where a command takes none', () => {
    usageError(() => parseCommandArgs(['x'], OPTIONS, 'USAGE', { positionals: false }));
    expect(parseCommandArgs(['x'], OPTIONS, 'USAGE').positionals).toEqual(['x']);
  });
});

describe('shared flag parsers', () => {
  it.each([
    ['3', 3],
    [undefined, 4],
  ])('wholeNumber %s', (text, want) => {
    expect(wholeNumber('concurrency', text, 4, 1)).toBe(want);
  });

  it.each(['0', '-1', '1.5', 'x', '', '1e3', '99999999999999999999'])(
    'wholeNumber refuses %j',
    (text) => {
      expect(usageError(() => wholeNumber('concurrency', text, 4, 1)).message).toContain(
        '--concurrency must be a whole number >= 1',
      );
    },
  );

  it('durations: units required, a minimum enforced', () => {
    expect(durationFlag('interval', '1m30s', 5, 1)).toBe(90_000);
    expect(durationFlag('interval', undefined, 5, 1)).toBe(5);
    expect(usageError(() => durationFlag('interval', '0', 5, 1)).message).toBe(
      '--interval must be greater than 0',
    );
    expect(usageError(() => durationFlag('grace', '10', 5)).message).toContain('missing unit');
  });

  it('rate limits', () => {
    expect(rateLimitFlag('120/60s')).toEqual({ limit: 120, windowMs: 60_000 });
    expect(rateLimitFlag(undefined)).toBeUndefined();
    expect(usageError(() => rateLimitFlag('fast')).message).toContain('120/60s');
  });

  it('the manifest directory: the argument, else EDGESYNC_DIR, else the working directory', () => {
    const ctx = (env: Record<string, string>) => ({ env }) as unknown as CliContext;
    expect(manifestDirArg(ctx({ EDGESYNC_DIR: 'e' }), 'd')).toBe('d');
    expect(manifestDirArg(ctx({ EDGESYNC_DIR: 'e' }), undefined)).toBe('e');
    expect(manifestDirArg(ctx({ EDGESYNC_DIR: '' }), undefined)).toBe('.');
  });
});

describe('the client budget', () => {
  it("is the hosted service's 120 per rolling 60 s by default, none against the embedded server", () => {
    expect(clientBudget(undefined, {}, false)).toEqual({ limit: 120, windowMs: 60_000 });
    expect(clientBudget(undefined, {}, true)).toBeUndefined();
  });

  it('the flag wins over EDGESYNC_RATE_LIMIT; none turns it off', () => {
    expect(
      clientBudget({ limit: 5, windowMs: 1000 }, { EDGESYNC_RATE_LIMIT: '10/1s' }, false),
    ).toEqual({
      limit: 5,
      windowMs: 1000,
    });
    expect(clientBudget(undefined, { EDGESYNC_RATE_LIMIT: '10/1s' }, false)).toEqual({
      limit: 10,
      windowMs: 1000,
    });
    expect(clientBudget('none', {}, false)).toBeUndefined();
    expect(clientBudget(undefined, { EDGESYNC_RATE_LIMIT: 'none' }, false)).toBeUndefined();
    expect(clientBudget(undefined, { EDGESYNC_RATE_LIMIT: '40/6s' }, true)).toEqual({
      limit: 40,
      windowMs: 6000,
    });
    expect(rateLimitFlag('none')).toBe('none');
    expect(() => clientBudget(undefined, { EDGESYNC_RATE_LIMIT: 'fast' }, false)).toThrow(
      ConfigError,
    );
  });
});
