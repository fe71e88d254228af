/**
 * The live lists' index by ID (src/apply/live-index.ts): a record looked up by ID is the one a
 * walk finds, and records read back and put in their places give the list a walk gives, with
 * the index handed on to it still true.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordById, replaced } from '../../../src/apply/live-index.js';
import { replacedAt } from '../../../src/in-place.js';

interface Rec {
  readonly id: string;
  readonly v: number;
}

/** What a walk gives: each record with a read ID replaced (or dropped: gone), new ones last. */
function walked(before: readonly Rec[], fresh: ReadonlyMap<string, Rec | undefined>): Rec[] {
  const out: Rec[] = [];
  const seen = new Set<string>();
  for (const item of before) {
    if (!fresh.has(item.id)) out.push(item);
    else {
      seen.add(item.id);
      const now = fresh.get(item.id);
      if (now !== undefined) out.push(now);
    }
  }
  for (const [id, item] of fresh) if (!seen.has(id) && item !== undefined) out.push(item);
  return out;
}

const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const list = fc.array(fc.record({ id, v: fc.nat(9) }), { maxLength: 8 });
const reads = fc.array(fc.tuple(id, fc.option(fc.nat(9), { nil: undefined })), { maxLength: 3 });

describe('the live lists by ID', () => {
  it('finds the record a walk finds, and replaces in place as a walk does', () => {
    fc.assert(
      fc.property(list, fc.array(reads, { maxLength: 4 }), (start, rounds) => {
        let current: readonly Rec[] = start;
        for (const r of rounds) {
          const fresh = new Map<string, Rec | undefined>(
            r.map(([k, v]) => [k, v === undefined ? undefined : { id: k, v }]),
          );
          const inPlace = replaced(current, fresh);
          const expected = walked(current, fresh);
          if (inPlace !== undefined) {
            expect(inPlace).toEqual(expected);
            // It says where it differs from the list it was made from: nowhere else.
            const at = new Set(replacedAt(current, inPlace));
            inPlace.forEach((r, i) => {
              if (!at.has(i)) expect(r).toBe(current[i]);
            });
          }
          current = inPlace ?? expected;
          for (const k of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
            expect(recordById(current, k)).toBe(current.findLast((e) => e.id === k));
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('replaces in place when every record read is there', () => {
    const before = [
      { id: 'a', v: 1 },
      { id: 'b', v: 2 },
    ];
    const after = replaced(before, new Map([['b', { id: 'b', v: 3 }]]));
    expect(after).toEqual([
      { id: 'a', v: 1 },
      { id: 'b', v: 3 },
    ]);
    expect(after?.[0]).toBe(before[0]);
    // Gone, or new: walked by the caller.
    expect(replaced(before, new Map([['b', undefined]]))).toBeUndefined();
    expect(replaced(before, new Map([['c', { id: 'c', v: 1 }]]))).toBeUndefined();
  });
});
