import { describe, expect, it } from 'vitest';
import type { CliContext } from '../../../src/cli/context.js';
import { excludeGlobs } from '../../../src/cli/flags.js';

function ctx(env: Record<string, string> = {}): CliContext {
  return {
    argv: [],
    stdout: process.stdout,
    stderr: process.stderr,
    env,
    cwd: '/work/repo',
    signal: new AbortController().signal,
  };
}

describe('--exclude', () => {
  it('adds $EDGESYNC_EXCLUDE (comma-separated) to the flags', () => {
    expect(excludeGlobs(ctx({ EDGESYNC_EXCLUDE: 'ci/**, **/*.ci.yaml,' }), ['k8s/**'])).toEqual([
      'k8s/**',
      'ci/**',
      '**/*.ci.yaml',
    ]);
    expect(excludeGlobs(ctx(), undefined)).toEqual([]);
  });

  it.each([
    ['/etc/**', 'relative to the manifest directory'],
    ['../x', 'relative to the manifest directory'],
    ['', '--exclude needs a glob'],
  ])('refuses %j', (glob, message) => {
    expect(() => excludeGlobs(ctx(), [glob])).toThrow(message);
  });
});
