/**
 * A set the file cache patched after a few files changed says where its lists differ from the
 * last set's (`replacedAt`, src/in-place.ts): the planner's patch and the report compare only
 * those places. Whatever it vouches for must hold: the lists as long, and every other place the
 * same object. After any sequence of edits, renames, additions and removals of files (fast-check,
 * fixed seed), and it vouches for an edit that keeps the names (the daemon's usual edit).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replacedAt } from '../../../src/in-place.js';
import { buildDesiredSet, FileCache } from '../../../src/manifest/build.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { memoryReader } from './helpers.js';

const encoder = new TextEncoder();
const FILES = Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, '0')}.yaml`);
const NAMES = Array.from({ length: 16 }, (_, i) => `e${i}`);

const tls = (name: string, description: number) =>
  `kind: TLSEdge\nname: ${name}\ndescription: d${description}\nhostports: [${name}.example.com:443]\n`;
const bot = (name: string) => `kind: BotUser\nname: bot-${name}\n`;

/** A file: one or two edges (a bot user now and then), or gone. */
const text = fc.option(
  fc
    .tuple(
      fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 2 }),
      fc.nat(3),
      fc.boolean(),
    )
    .map(([names, d, withBot]) =>
      [...names.map((n) => tls(n, d)), ...(withBot ? [bot(names[0] as string)] : [])].join('---\n'),
    ),
  { nil: undefined, freq: 8 },
);

function build(files: ReadonlyMap<string, string>, cache: FileCache) {
  return buildDesiredSet(
    [...files].map(([file, t]) => ({ file, bytes: encoder.encode(t) })),
    { reader: memoryReader({ env: {} }), cache },
  );
}

function lists(set: DesiredSet): readonly (readonly unknown[])[] {
  return [set.tlsEdges, set.httpsEdges, set.botUsers, set.cloudEndpoints];
}

describe('a set patched in place', () => {
  it('says truly where its lists differ from the last set', () => {
    let vouched = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...FILES), text), { minLength: 1, maxLength: 10 }),
        fc.nat(3),
        (edits, d) => {
          // Every file holds an edge of its own name first: most sets are valid.
          const files = new Map(FILES.map((f, i) => [f, tls(`own${i}`, d)]));
          const cache = new FileCache();
          let last = build(files, cache);
          for (const [file, t] of edits) {
            if (t === undefined) files.delete(file);
            else files.set(file, t);
            const now = build(files, cache);
            if (last.ok && now.ok) {
              const before = lists(last.set);
              lists(now.set).forEach((list, k) => {
                const was = before[k] as readonly unknown[];
                const at = replacedAt(was, list);
                if (at === undefined) return;
                if (was !== list) vouched += 1;
                expect(list.length).toBe(was.length);
                const places = new Set(at);
                list.forEach((item, i) => {
                  if (!places.has(i)) expect(item).toBe(was[i]);
                });
              });
            }
            if (now.ok) last = now;
          }
        },
      ),
      { seed: 20261129, numRuns: 200 },
    );
    expect(vouched).toBeGreaterThan(50);
  });

  it('vouches for a saved file whose edges keep their names: only their places', () => {
    const files = new Map(FILES.map((f, i) => [f, tls(`own${i}`, 0)]));
    const cache = new FileCache();
    const first = build(files, cache);
    files.set('f03.yaml', tls('own3', 1));
    const second = build(files, cache);
    if (!first.ok || !second.ok) throw new Error('invalid');
    const at = second.set.tlsEdges.findIndex((e) => e.name === 'own3');
    expect(replacedAt(first.set.tlsEdges, second.set.tlsEdges)).toEqual([at]);
    expect(replacedAt(first.set.botUsers, second.set.botUsers)).toEqual([]);
    // A rename moves the others: not vouched for, the reader compares every place.
    files.set('f03.yaml', tls('zzz', 1));
    const third = build(files, cache);
    if (!third.ok) throw new Error('invalid');
    expect(replacedAt(second.set.tlsEdges, third.set.tlsEdges)).toBeUndefined();
  });
});
