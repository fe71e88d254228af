import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { strayErrors } from '../../helpers/import-graph.js';

const SRC = join(import.meta.dirname, '../../../src');

describe('one error hierarchy', () => {
  it('raises no built-in error outside src/errors.ts, but for the private signals listed here', () => {
    const found = strayErrors(SRC)
      .map((e) => `${e.file}: ${e.what}`)
      .sort();
    expect(found).toEqual(
      [
        // The hierarchy's root.
        'errors.ts: class EdgesyncError extends Error',
      ].sort(),
    );
  });
});
