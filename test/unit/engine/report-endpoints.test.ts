/**
 * What a daemon cycle reports about cloud endpoints: managed counts (the metrics' gauge), the
 * per-resource entries of /status and events, and the secret values that mask them (a live
 * policy's secret included).
 */
import { describe, expect, it } from 'vitest';
import { NO_CALLS } from '../../../src/api/index.js';
import { MANAGED_KINDS } from '../../../src/engine/contract.js';
import { managedCounts, resourcesOf, stableValues } from '../../../src/engine/report.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { desiredSet, endpointManifest, liveEndpoint } from '../plan/builders.js';

describe('cycle report: cloud endpoints', () => {
  const live = liveEndpoint({
    id: 'ep_web',
    url: 'https://web.example.com',
    name: 'web',
    traffic_policy: JSON.stringify({
      on_http_request: [
        {
          actions: [
            { type: 'verify-webhook', config: { provider: 'github', secret: 'hook-secret-9' } },
            { type: 'deny' },
          ],
        },
      ],
    }),
  });
  const desired = desiredSet({
    endpoints: [
      endpointManifest({ name: 'web', url: 'https://web.example.com' }),
      endpointManifest({ name: 'new', url: 'https://new.example.com' }),
      endpointManifest({ name: 'paused', url: 'https://paused.example.com', suspend: true }),
    ],
  });
  const plan = buildPlan(desired, {
    tlsEdges: [],
    httpsEdges: [],
    botUsers: [],
    cloudEndpoints: [live],
  });

  it('counts managed endpoints and reports each one by address and kind', () => {
    // Every registered kind is counted; only the endpoints are managed here.
    expect(managedCounts(plan)).toEqual({
      ...Object.fromEntries(MANAGED_KINDS.map((k) => [k, 0])),
      cloud_endpoint: 2,
    });
    const values = stableValues(
      desired,
      { tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [live], calls: NO_CALLS },
      [],
    );
    expect(values).toContain('hook-secret-9');
    const resources = resourcesOf(plan, values);
    expect(resources.changes.map((c) => `${c.kind} ${c.address} ${c.action}`)).toEqual([
      'cloud_endpoint cloud_endpoint.new create',
      'cloud_endpoint cloud_endpoint.web update',
    ]);
    expect(resources.blocked).toEqual([
      expect.objectContaining({ address: 'cloud_endpoint.paused', kind: 'suspended' }),
    ]);
    expect(JSON.stringify(resources)).not.toContain('hook-secret-9');
  });
});
