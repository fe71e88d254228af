import { describe, expect, it } from 'vitest';
import type { CloudEndpoint, HttpsEdge, TlsEdge } from '../../../src/api/index.js';
import { parseReleaseTarget, planRelease } from '../../../src/apply/release.js';

const tls = (id: string, metadata: string | null) => ({ id, metadata }) as unknown as TlsEdge;
const https = (id: string, metadata: string) => ({ id, metadata }) as unknown as HttpsEdge;
const meta = (o: Record<string, string>) => JSON.stringify(o);

describe('release targets', () => {
  it.each([
    ['TLSEdge/api', { kind: 'tls_edge', name: 'api' }],
    ['httpsedge/web', { kind: 'https_edge', name: 'web' }],
    ['https_edge/web.v2', { kind: 'https_edge', name: 'web.v2' }],
    ['CloudEndpoint/site', { kind: 'cloud_endpoint', name: 'site' }],
  ])('%s parses', (text, expected) => {
    expect(parseReleaseTarget(text)).toEqual(expected);
  });

  it.each([
    ['api', 'is not KIND/NAME'],
    ['TLSEdge/', 'is not KIND/NAME'],
    ['/api', 'is not KIND/NAME'],
    // The kinds owned by their mark are listed (every registered one: ./generic-consumers).
    ['Edge/api', 'unknown kind "Edge" (one of '],
    ['Edge/api', 'TLSEdge, HTTPSEdge, CloudEndpoint'],
    ['BotUser/ci', 'bot users carry no metadata'],
  ])('%s is refused', (text, message) => {
    expect(parseReleaseTarget(text)).toContain(message);
  });
});

describe('planRelease', () => {
  const live = {
    tlsEdges: [
      tls('edgtls_1', meta({ 'edgesync/name': 'api', 'edgesync/owner': 'default', team: 'a' })),
      // A duplicate left by a crash: released too.
      tls('edgtls_2', meta({ 'edgesync/name': 'api', 'edgesync/owner': 'default' })),
      tls('edgtls_3', meta({ 'edgesync/name': 'theirs', 'edgesync/owner': 'team-b' })),
      tls('edgtls_4', null),
    ],
    httpsEdges: [
      https(
        'edghts_1',
        meta({
          'edgesync/name': 'web',
          'edgesync/owner': 'default',
          'edgesync/protect': 'true',
          z: '1',
          a: '2',
        }),
      ),
      https('edghts_2', 'not json'),
    ],
  };

  it('keeps the labels, key-sorted, and drops every edgesync/ key', () => {
    const plan = planRelease(
      [
        { kind: 'tls_edge', name: 'api' },
        { kind: 'https_edge', name: 'web' },
        { kind: 'https_edge', name: 'web' },
      ],
      live,
      'default',
    );
    expect(plan.problems).toEqual([]);
    expect(plan.releases).toEqual([
      { address: 'tls_edge.api', kind: 'tls_edge', id: 'edgtls_1', metadata: '{"team":"a"}' },
      { address: 'tls_edge.api', kind: 'tls_edge', id: 'edgtls_2', metadata: '' },
      {
        address: 'https_edge.web',
        kind: 'https_edge',
        id: 'edghts_1',
        metadata: '{"a":"2","z":"1"}',
      },
    ]);
  });

  it('a name this owner does not manage is a problem, saying who does', () => {
    const plan = planRelease(
      [
        { kind: 'tls_edge', name: 'theirs' },
        { kind: 'tls_edge', name: 'nobody' },
        { kind: 'https_edge', name: 'api' },
      ],
      live,
      'default',
    );
    expect(plan.releases).toEqual([]);
    expect(plan.problems).toEqual([
      'tls_edge.theirs: managed by owner "team-b", not "default" (pass --owner)',
      'tls_edge.nobody: no edge of this kind and name is managed by owner "default"',
      'https_edge.api: no edge of this kind and name is managed by owner "default"',
    ]);
  });
});

describe('planRelease of cloud endpoints', () => {
  const ep = (id: string, type: string, metadata: string) =>
    ({ id, type, metadata, url: 'https://x', created_at: '' }) as unknown as CloudEndpoint;
  const owned = meta({ 'edgesync/name': 'site', 'edgesync/owner': 'default', team: 'a' });
  const live = {
    tlsEdges: [],
    httpsEdges: [],
    cloudEndpoints: [ep('ep_agent', 'agent', owned), ep('ep_1', 'cloud', owned)],
  };

  it('releases the cloud endpoint, never the agent one', () => {
    expect(planRelease([{ kind: 'cloud_endpoint', name: 'site' }], live, 'default')).toEqual({
      releases: [
        {
          address: 'cloud_endpoint.site',
          kind: 'cloud_endpoint',
          id: 'ep_1',
          metadata: meta({ team: 'a' }),
        },
      ],
      problems: [],
    });
  });

  it('names an endpoint no one manages as a problem', () => {
    const plan = planRelease([{ kind: 'cloud_endpoint', name: 'other' }], live, 'default');
    expect(plan.problems).toEqual([
      'cloud_endpoint.other: no endpoint of this kind and name is managed by owner "default"',
    ]);
  });
});
