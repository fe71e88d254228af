/**
 * The planner's per-object views (a desired edge per manifest, a live edge per record, the
 * canonical hostports per list) are kept between plans, so a daemon's plan after one file changed
 * builds views for what changed only; a view never outlives what it was made from.
 */
import { describe, expect, it } from 'vitest';
import { canonicalHostports } from '../../../src/plan/normalize.js';
import { classifyLive, desiredEdges } from '../../../src/plan/ownership.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { desiredSet, httpsManifest, liveTls, tlsManifest } from './builders.js';

describe('views kept between plans', () => {
  it('gives each unchanged manifest the same desired edge, and a new manifest a new one', () => {
    const a = tlsManifest({ name: 'a', hostports: ['a.example.com:443'] });
    const b = httpsManifest({ name: 'b', hostports: ['b.example.com:443'] });
    const first = desiredEdges(desiredSet({ tls: [a], https: [b] }));
    const a2 = tlsManifest({ name: 'a', hostports: ['a.example.com:443'] });
    const second = desiredEdges(desiredSet({ tls: [a2], https: [b] }));
    expect(second[1]).toBe(first[1]);
    expect(second[0]).not.toBe(first[0]);
    expect(second.map((d) => d.address)).toEqual(['tls_edge.a', 'https_edge.b']);
  });

  it('gives each unchanged record the same live edge, for the same owner only', () => {
    const rec = liveTls({ id: 'tls_1', name: 'a', owner: 'team-a' });
    const [mine] = classifyLive({ tlsEdges: [rec], httpsEdges: [] }, 'team-a');
    const [again] = classifyLive({ tlsEdges: [rec], httpsEdges: [] }, 'team-a');
    const [other] = classifyLive({ tlsEdges: [rec], httpsEdges: [] }, 'team-b');
    expect(again).toBe(mine);
    expect(mine?.owned).toBe(true);
    expect(other?.owned).toBe(false);
  });

  it('keeps a canonical hostport list as itself and a mixed-case one as its canonical copy', () => {
    const canonical = ['a.example.com:443', 'b.example.com:443'];
    expect(canonicalHostports(canonical)).toBe(canonical);
    const mixed = ['B.example.com:443', 'a.example.com:443', 'b.example.com:443'];
    const once = canonicalHostports(mixed);
    expect(once).toEqual(['a.example.com:443', 'b.example.com:443']);
    expect(canonicalHostports(mixed)).toBe(once);
  });

  it('plans the same with kept views as with fresh copies of every object', () => {
    const set = desiredSet({
      tls: [tlsManifest({ name: 'a', hostports: ['A.example.com:443'] })],
      https: [httpsManifest({ name: 'b', hostports: ['a.example.com:443', 'b.example.com:443'] })],
    });
    const live = {
      tlsEdges: [liveTls({ id: 'tls_1', name: 'a', hostports: ['a.example.com:443'] })],
      httpsEdges: [],
      botUsers: [],
    };
    const warm = buildPlan(set, live);
    const again = buildPlan(set, live);
    const cold = buildPlan(structuredClone(set), structuredClone(live));
    expect(again).toEqual(warm);
    expect(cold).toEqual(warm);
  });
});
