/**
 * The error line `main` prints for a failed command is masked with the secret values the
 * command learnt (`CliContext.mask`), before control characters are escaped.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { createValueMask } from '../../../src/manifest/secrets.js';
import { Capture } from '../../helpers/capture.js';

describe('the error line of a failed command', () => {
  it('never shows a known secret value', async () => {
    const secret = 'Known-Secret-Value-5b1e';
    const mask = createValueMask();
    mask.set([secret]);
    const stderr = new Capture();
    const code = await main({
      argv: ['plan', '--output', `${secret}\u0007`],
      stdout: new Capture(),
      stderr,
      env: {},
      cwd: process.cwd(),
      signal: new AbortController().signal,
      mask,
    });
    expect(code).toBe(64);
    expect(stderr.text).toContain('--output must be one of');
    expect(stderr.text).toContain('(sensitive)\\x07');
    expect(stderr.text).not.toContain(secret.slice(0, 10));
  });
});
