/**
 * Plan fingerprints hash a canonical form: the same data with its keys in another order (as
 * another parser, schema version or API build might give them) has the same fingerprint, and
 * any change of a value changes it.
 */
import { describe, expect, it } from 'vitest';
import {
  fingerprintHmacKey,
  fingerprintLive,
  fingerprintManifests,
} from '../../../src/engine/fingerprint.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildFrom } from '../manifest/helpers.js';
import {
  desiredSet,
  endpointManifest,
  httpsManifest,
  liveEndpoint,
  liveHttps,
  liveState,
  liveTls,
  routeManifest,
  tlsManifest,
} from '../plan/builders.js';

const key = fingerprintHmacKey('esk_fingerprintTEST0123456789abcdef');

/** What an earlier version (sensitive paths kept as text) gave for the set below. */
const PINNED = 'hmac-sha256:2249e06058004263eac2f68173f43afea3ceb551f3a6476083e7fbb95fd8f25b';

/** A deep copy with every object's keys in reverse order. */
function reversed<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reversed) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversed(v)]),
  ) as T;
}

const desired: DesiredSet = desiredSet({
  tls: [
    tlsManifest({
      name: 'tcp',
      hostports: ['tcp.example.com:443'],
      metadata: { team: 'platform', tier: '1' },
      backend: { backend_id: 'bkdtg_1' },
      tls_termination: { terminate_at: 'edge', min_version: '1.3' },
    }),
  ],
  https: [
    httpsManifest({
      name: 'web',
      routes: [
        routeManifest({
          match: '/',
          backend: { backend_id: 'bkdhr_1' },
          circuit_breaker: {
            tripped_duration: 10,
            rolling_window: 10,
            num_buckets: 10,
            volume_threshold: 20,
          },
        }),
      ],
    }),
  ],
});

const live = liveState({
  tls: [liveTls({ id: 'tlse_1', name: 'tcp', hostports: ['tcp.example.com:443'] })],
  https: [liveHttps({ id: 'edghts_1', name: 'web', routes: [{ id: 'edghtsrt_1', match: '/' }] })],
});

describe('plan fingerprints', () => {
  it('of the manifests do not depend on key order', () => {
    const again = reversed(desired);
    expect(JSON.stringify(again)).not.toBe(JSON.stringify(desired));
    expect(fingerprintManifests(key, 'default', again)).toBe(
      fingerprintManifests(key, 'default', desired),
    );
  });

  it('of the live state do not depend on key order', () => {
    const again = reversed(live);
    expect(JSON.stringify(again)).not.toBe(JSON.stringify(live));
    expect(fingerprintLive(key, again)).toBe(fingerprintLive(key, live));
  });

  it('change with any value, the owner and the key', () => {
    const base = fingerprintManifests(key, 'default', desired);
    const edited = structuredClone(desired);
    (edited.tlsEdges[0] as { description: string }).description = 'changed';
    expect(fingerprintManifests(key, 'default', edited)).not.toBe(base);
    expect(fingerprintManifests(key, 'other', desired)).not.toBe(base);
    expect(fingerprintManifests(fingerprintHmacKey('esk_another'), 'default', desired)).not.toBe(
      base,
    );
  });

  it('cover cloud endpoints, live and desired', () => {
    const ep = liveEndpoint({ id: 'ep_1', url: 'https://a.example.com', name: 'a' });
    const withEp = { ...live, cloudEndpoints: [ep] };
    const changed = { ...live, cloudEndpoints: [{ ...ep, traffic_policy: '{}' }] };
    expect(fingerprintLive(key, withEp)).not.toBe(fingerprintLive(key, live));
    expect(fingerprintLive(key, changed)).not.toBe(fingerprintLive(key, withEp));
    const a = {
      ...desired,
      cloudEndpoints: [endpointManifest({ name: 'a', url: 'https://a.example.com' })],
    };
    const b = {
      ...desired,
      cloudEndpoints: [endpointManifest({ name: 'a', url: 'https://b.example.com' })],
    };
    expect(fingerprintManifests(key, 'default', a)).not.toBe(
      fingerprintManifests(key, 'default', b),
    );
  });

  it('of the manifests hash sensitive paths in their written form, as earlier versions did', () => {
    // Paths are segments in memory; the digest is the one a plan saved before that change
    // carries for the same manifests and key, so such a plan is not taken for stale.
    const built = buildFrom(
      {
        'a.yaml': [
          'kind: HTTPSEdge',
          'name: shop',
          'description: { env: DESC }',
          'metadata: { "team.name": { env: TEAM } }',
          'routes:',
          '  - match: /',
          '    match_type: path_prefix',
          '    request_headers: { add: { "X.Api.Key": { env: K1 }, X-Key: { env: K2 } } }',
          '',
        ].join('\n'),
      },
      { env: { DESC: 'desc-1', TEAM: 'team-1', K1: 'key-1', K2: 'key-2' } },
    );
    if (!built.ok) throw new Error('invalid manifests');
    expect(fingerprintManifests(key, 'default', built.set)).toBe(PINNED);
  });
});
