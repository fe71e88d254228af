/**
 * A file's documents go through the shape phase one at a time: each one's own rules run, and it
 * keeps only its positions, before `yaml` composes the next. So a file's syntax trees are never
 * all alive at once (they die young instead of filling the old generation, which set the peak
 * RSS of a 10,000-edge plan), and nothing is parsed twice.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { Composer } from 'yaml';
import { processFile } from '../../../src/manifest/shape.js';
import { eachYamlDocument, parseYaml } from '../../../src/manifest/yaml.js';
import { memoryReader } from './helpers.js';

const DOCS = 12;
const text = Array.from(
  { length: DOCS },
  (_, i) => `kind: TLSEdge\nname: e-${i}\nhostports: [e-${i}.example.com:443]\n`,
).join('---\n');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('one document at a time', () => {
  it("runs a document's own rules before the documents after it are composed", () => {
    const composed = vi.spyOn(Composer.prototype, 'next');
    const seenAt: number[] = [];
    const { result, own } = processFile('a.yaml', text, memoryReader(), {
      maxAliasCount: 100,
      ownRules: () => {
        seenAt.push(composed.mock.calls.length);
        return [];
      },
    });
    expect(own).toEqual([]);
    expect(result.shaped.map((d) => d.value.name)).toEqual(
      Array.from({ length: DOCS }, (_, i) => `e-${i}`),
    );
    expect(seenAt).toHaveLength(DOCS);
    // The composer had taken two tokens (this document and the start of the next) when the
    // first document's rules ran, and one more before each next one (the last is handed out at
    // the end): a parse of the whole file first would show the total every time.
    const total = composed.mock.calls.length;
    expect(total).toBe(DOCS);
    expect(seenAt).toEqual([...Array.from({ length: DOCS - 1 }, (_, i) => i + 2), total]);
  });

  it('keeps positions only: a kept document locates its name, and nothing else, without its tree', () => {
    const { result } = processFile('a.yaml', text, memoryReader(), {
      maxAliasCount: 100,
      ownRules: () => [],
    });
    const third = result.shaped[2];
    expect(third?.doc.locate(['name'])).toEqual({ line: 10, column: 7 });
    expect(third?.doc.value).toBeUndefined();
    // A path it did not keep falls back to the document's start.
    expect(third?.doc.locate(['backend'])).toEqual(third?.doc.start);
  });

  it('hands out the same documents and problems as reading them all at once', () => {
    const mixed = `${text}---\nkind: [unclosed\n---\nkind: TLSEdge\nname: last\n`;
    const streamed: unknown[] = [];
    const problems = eachYamlDocument(mixed, { maxAliasCount: 100 }, (d) => {
      streamed.push({ index: d.index, value: d.value, start: d.start });
    });
    const all = parseYaml(mixed, { maxAliasCount: 100 });
    expect(streamed).toEqual(
      all.documents.map((d) => ({ index: d.index, value: d.value, start: d.start })),
    );
    expect(problems).toEqual(all.problems);
    expect(problems).toHaveLength(1);
    expect(streamed).toHaveLength(DOCS + 1);
  });
});
