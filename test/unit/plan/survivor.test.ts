/** One survivor among look-alikes: the planner's duplicate survivor and the recovery's pick agree. */
import { describe, expect, it } from 'vitest';
import { findCreated } from '../../../src/apply/find-created.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { survivor, survivorFirst } from '../../../src/plan/survivor.js';
import { desiredSet, liveTls, tlsManifest } from './builders.js';

describe('survivorFirst', () => {
  it.each([
    [
      'earlier instant wins over a smaller ID',
      { created_at: '2024-01-02T00:00:00Z', id: 'a' },
      { created_at: '2024-01-01T00:00:00Z', id: 'z' },
      'z',
    ],
    [
      'offsets are compared as instants',
      { created_at: '2024-01-01T01:00:00+02:00', id: 'b' },
      { created_at: '2024-01-01T00:00:00Z', id: 'a' },
      'b',
    ],
    [
      'fractions are compared as instants',
      { created_at: '2024-01-01T00:00:00.5Z', id: 'a' },
      { created_at: '2024-01-01T00:00:00.25Z', id: 'b' },
      'b',
    ],
    [
      'the same instant: the smaller ID, whatever its format',
      { created_at: '2024-01-01T00:00:00Z', id: 'edgtls_9' },
      { created_at: '2024-01-01T00:00:00.000Z', id: 'edgtls_10' },
      'edgtls_10',
    ],
    [
      'an unparseable time sorts last',
      { created_at: 'yesterday', id: 'a' },
      { created_at: '2030-01-01T00:00:00Z', id: 'b' },
      'b',
    ],
  ])('%s', (_n, x, y, want) => {
    expect(survivor([x, y])?.id).toBe(want);
    expect(survivor([y, x])?.id).toBe(want);
    expect([x, y].sort(survivorFirst)[0]?.id).toBe(want);
  });

  it('the recovery of an unknown-outcome create picks the survivor the planner keeps', async () => {
    // Two duplicates of one edge: the one with the larger ID is older.
    const metadata = storedMetadata({}, { owner: 'default', name: 'db', protect: false });
    const younger = liveTls({ id: 'edgtls_1', created_at: '2024-05-02T00:00:00Z', metadata });
    const older = liveTls({ id: 'edgtls_2', created_at: '2024-05-01T00:00:00Z', metadata });
    const plan = buildPlan(desiredSet({ tls: [tlsManifest({ name: 'db' })] }), {
      tlsEdges: [younger, older],
      httpsEdges: [],
      botUsers: [],
    });
    const kept = plan.changes.find((c) => c.address === 'tls_edge.db')?.id;
    const client = {
      listTlsEdges: async () => ({ items: [younger, older], calls: 1 }),
      listHttpsEdges: async () => ({ items: [], calls: 1 }),
      listBotUsers: async () => ({ items: [], calls: 1 }),
      getHttpsEdge: async () => {
        throw new Error('unused');
      },
    };
    const found = await findCreated(
      client as never,
      { kind: 'edges', edge_kind: 'tls' },
      {
        metadata,
      },
    );
    expect(kept).toBe('edgtls_2');
    expect(found).toBe(kept);
  });
});
