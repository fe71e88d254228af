/**
 * The daemon gathers the secret values of a cycle from the last cycle's (`stableValues`): only
 * the objects that are not the same as last time are read again. After any sequence of sets and
 * snapshots (objects kept, replaced, added, removed, values shared between objects), the values
 * equal those gathered afresh (`secretValues`), and are the same array while they do not change.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LiveSnapshot } from '../../../src/api/index.js';
import { stableValues } from '../../../src/engine/report.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { secretValues } from '../../../src/manifest/secrets.js';

const SECRETS = ['alpha-secret', 'beta-secret', 'gamma-secret', 'delta-secret'];

type Lists = { tls: (number | null)[]; https: (number | null)[]; live: (number | null)[] };

/** An object per slot: a new one for a number (its secret by that number), the last one for null. */
const slots = (n: number) => fc.array(fc.option(fc.nat(SECRETS.length - 1)), { maxLength: n });

function tls(secret: number) {
  return { kind: 'TLSEdge', name: 't', description: SECRETS[secret], sensitive: [['description']] };
}
function https(secret: number) {
  return {
    kind: 'HTTPSEdge',
    name: 'h',
    sensitive: [],
    routes: [{ match: '/', description: SECRETS[secret], sensitive: [['description']] }],
  };
}
function liveHttps(secret: number) {
  return { id: 'e', routes: [{ id: 'r', webhook_verification: { secret: SECRETS[secret] } }] };
}

/** The next list: each slot the object before it (null) or a new one. */
function next<T>(
  before: readonly T[],
  slots: readonly (number | null)[],
  make: (s: number) => T,
): T[] {
  return slots.map((s, i) =>
    s === null && before[i] !== undefined ? (before[i] as T) : make(s ?? 0),
  );
}

describe('the secret values from the last cycle', () => {
  it('equal those gathered afresh, and stay the same array while they do not change', () => {
    const step = fc.record({ tls: slots(4), https: slots(3), live: slots(3) });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps: Lists[]) => {
        let set: DesiredSet = { tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [] };
        let live = {
          tlsEdges: [],
          httpsEdges: [],
          botUsers: [],
          cloudEndpoints: [],
          calls: {},
        } as unknown as LiveSnapshot;
        let values: readonly string[] = [];
        for (const s of steps) {
          set = {
            ...set,
            tlsEdges: next(set.tlsEdges, s.tls, tls as never),
            httpsEdges: next(set.httpsEdges, s.https, https as never),
          };
          live = { ...live, httpsEdges: next(live.httpsEdges, s.live, liveHttps as never) };
          const before = values;
          values = stableValues(set, live, values);
          const fresh = secretValues(set, live);
          expect([...values].sort()).toEqual([...fresh].sort());
          if ([...before].sort().join() === [...fresh].sort().join()) expect(values).toBe(before);
        }
      }),
      { numRuns: 500 },
    );
  });
});
