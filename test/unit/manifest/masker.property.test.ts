/**
 * `maskValues` scans instead of running one alternation of every value (issue 12: a 10,000-value
 * alternation made every log line slow). The scan must mask exactly what the alternation masks:
 * leftmost, then longest, in any case, JSON-escaped forms too. The alternation is the reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MASKED, MIN_MASKED_LENGTH, maskValues } from '../../../src/manifest/secrets.js';

function reference(text: string, values: readonly string[]): string {
  const forms = [...new Set(values.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))]
    .filter((s) => s.length >= MIN_MASKED_LENGTH)
    .sort((a, b) => b.length - a.length);
  if (forms.length === 0) return text;
  const pattern = new RegExp(
    forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'gi',
  );
  return text.replace(pattern, MASKED);
}

// A small alphabet, so values overlap, nest and repeat inside the text.
const letter = fc.constantFrom('a', 'B', 'b', 'c', '"', '\\', '\n', '-', '1');
const word = fc.array(letter, { minLength: 1, maxLength: 9 }).map((l) => l.join(''));

describe('maskValues (scan) against the alternation', () => {
  it('masks the same text for ASCII values and text', () => {
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 12 }),
        fc.array(fc.oneof(word, letter), { maxLength: 30 }),
        (values, parts) => {
          // Text built partly from the values (in other cases), so matches are common.
          const text = parts
            .map((p, i) => (i % 3 === 0 ? (values[i % values.length] ?? p).toUpperCase() : p))
            .join('');
          expect(maskValues(text, values)).toBe(reference(text, values));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('masks text beyond ASCII as the alternation does', () => {
    const values = ['secret-é1', 'Kelvin-KEY', 'straße-42', 'plain-value'];
    for (const text of [
      'a secret-É1 and PLAIN-value',
      'KELVIN-key (Kelvin sign)',
      'STRASSE-42 straße-42',
      'πλain-value plain-value',
    ]) {
      expect(maskValues(text, values)).toBe(reference(text, values));
    }
  });

  it('keeps a value shorter than the minimum, and text without values, as they are', () => {
    expect(maskValues('abc abc', ['abc'])).toBe('abc abc');
    expect(maskValues('nothing here', ['secret-value'])).toBe('nothing here');
    expect(maskValues('x secret-value y SECRET-VALUE', ['secret-value'])).toBe(
      `x ${MASKED} y ${MASKED}`,
    );
  });
});
