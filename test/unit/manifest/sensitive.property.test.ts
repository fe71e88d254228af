/**
 * `sensitiveValues` goes straight down each sensitive path instead of walking every resource;
 * the walk (every string at or below a node whose path is sensitive) is the reference. Paths are
 * segments: a key holding `.`, `[` or quotes is one key, `"0"` is no index.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparePaths, type FieldPath, uniquePaths } from '../../../src/manifest/paths.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { MIN_MASKED_LENGTH, sensitiveValues } from '../../../src/manifest/secrets.js';

const segment = fc.oneof(
  fc.constantFrom(
    'oauth',
    'provider',
    'google',
    'client_secret',
    'add',
    'X-Key',
    'a b',
    'q"u\\o',
    '0',
    'é',
    '',
    'x.y',
    'a[0]',
  ),
  fc.nat({ max: 3 }),
);

function reference(
  resource: Record<string, unknown>,
  sensitive: readonly FieldPath[],
): Set<string> {
  const wanted = new Set(sensitive.map((p) => JSON.stringify(p)));
  const out = new Set<string>();
  const walk = (value: unknown, path: FieldPath, inside: boolean): void => {
    const here = inside || (path.length > 0 && wanted.has(JSON.stringify(path)));
    if (typeof value === 'string') {
      if (here && value.length >= MIN_MASKED_LENGTH) out.add(value);
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, [...path, i], here);
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        if (path.length === 0 && ['source', 'sensitive', 'routes'].includes(k)) continue;
        walk(v, [...path, k], here);
      }
    }
  };
  walk(resource, [], false);
  return out;
}

const leaf = fc.constantFrom('s3cret-1', 'abc', 'secret-two', 'x');
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('tree'), { maxLength: 3 }),
    fc.dictionary(
      fc.constantFrom(
        'oauth',
        'provider',
        'google',
        'client_secret',
        'add',
        'X-Key',
        'a b',
        '0',
        'x.y',
        'x',
      ),
      tie('tree'),
      { maxKeys: 3 },
    ),
  ),
}));

describe('sensitive values', () => {
  it('are ordered and made unique segment by segment (comparePaths, uniquePaths)', () => {
    const path = fc.array(segment, { maxLength: 4 });
    fc.assert(
      fc.property(fc.array(path, { maxLength: 6 }), (paths) => {
        const unique = uniquePaths(paths);
        const distinct = new Set(paths.map((p) => JSON.stringify(p)));
        expect(unique.map((p) => JSON.stringify(p)).sort()).toEqual([...distinct].sort());
        for (let i = 1; i < unique.length; i++) {
          expect(comparePaths(unique[i - 1] as FieldPath, unique[i] as FieldPath)).toBeLessThan(0);
        }
        for (const p of paths) expect(comparePaths(p, [...p])).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('are the strings at or below every sensitive path, as a walk finds them', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('oauth', 'routes', 'source', 'add', 'name', '0'), tree, {
          maxKeys: 4,
        }),
        fc.array(fc.array(segment, { minLength: 1, maxLength: 4 }), { maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 4 }),
        (resource, randomPaths, picks) => {
          // Paths that exist, some with a list index written as a key or a "0" key as an index.
          const existing = pathsOf(resource);
          const picked = picks.flatMap(([n, swap]) => {
            const path = existing[n % Math.max(1, existing.length)];
            if (path === undefined) return [];
            return [
              swap
                ? path.map((s) => (typeof s === 'number' ? String(s) : s === '0' ? 0 : s))
                : path,
            ];
          });
          const sensitive = [...randomPaths, ...picked];
          const set = {
            tlsEdges: [{ ...resource, sensitive }],
            httpsEdges: [],
            botUsers: [],
            cloudEndpoints: [],
          } as unknown as DesiredSet;
          expect(new Set(sensitiveValues(set))).toStrictEqual(reference(resource, sensitive));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

function pathsOf(value: unknown, path: FieldPath = []): FieldPath[] {
  const out: FieldPath[] = path.length > 0 ? [path] : [];
  if (Array.isArray(value))
    for (const [i, v] of value.entries()) out.push(...pathsOf(v, [...path, i]));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...path, k]));
  return out;
}
