/**
 * Fidelity (issue 10): live records shaped like the hosted service's published examples, holding
 * the service's documented defaults wherever the manifest leaves a field unset, plan empty
 * against manifests that state the same configuration; and moving one default by hand (a TLS
 * downgrade, IdP-initiated login turned off) is drift.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpsEdgeSchema, tlsEdgeSchema } from '../../../src/api/schemas.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { buildFrom } from '../manifest/helpers.js';

const dir = path.join(import.meta.dirname, '..', '..', 'fixtures', 'hosted');
const read = (name: string): unknown => JSON.parse(readFileSync(path.join(dir, name), 'utf8'));

const MANIFESTS = `kind: HTTPSEdge
name: storefront
description: Public storefront
metadata: { team: web }
hostports: [shop.example.com:443]
tls_termination: {}
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: bkdtg_2dfkOcR0xKk4SuCVmBmnc0fwKQS }
    circuit_breaker: { tripped_duration: 10, rolling_window: 30, num_buckets: 10, volume_threshold: 20, error_threshold_percentage: 0.5 }
    compression: {}
    request_headers: { add: { X-Frontend: shop } }
    response_headers: { remove: [Server] }
  - match_type: path_prefix
    match: /admin
    backend: { backend_id: bkdhr_2dfkOcR0xKk4SuCVmBmnc0fwKQT }
    saml:
      idp_metadata: '<EntityDescriptor entityID="https://idp.example.com"></EntityDescriptor>'
      authorized_groups: [admins]
    user_agent_filter: { deny: ["(?i)badbot"] }
---
kind: TLSEdge
name: orders-db
hostports: [203.0.113.10:5432]
backend: { backend_id: bkdtg_2dfkOg1LYWmTnbx4cNuMD3gbnB7 }
tls_termination: {}
`;

function live(
  edit: (https: Record<string, unknown>, tls: Record<string, unknown>) => void = () => {},
) {
  const https = read('https-edge.json') as Record<string, unknown>;
  const tls = read('tls-edge.json') as Record<string, unknown>;
  edit(https, tls);
  return {
    httpsEdges: [httpsEdgeSchema.parse(https)],
    tlsEdges: [tlsEdgeSchema.parse(tls)],
    botUsers: [],
  };
}

function desired() {
  const result = buildFrom({ 'edges.yaml': MANIFESTS });
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.set;
}

const pending = (plan: ReturnType<typeof buildPlan>) =>
  plan.changes
    .filter((c) => c.action !== 'noop')
    .map((c) => `${c.action} ${c.address}: ${c.reason}`);

describe('records shaped like the hosted service publishes them', () => {
  it('plan nothing when the manifest states the same configuration', () => {
    expect(pending(buildPlan(desired(), live()))).toEqual([]);
  });

  it('a TLS downgrade made by hand is one update', () => {
    const plan = buildPlan(
      desired(),
      live((_h, tls) => {
        (tls.tls_termination as Record<string, unknown>).min_version = '1.0';
      }),
    );
    expect(pending(plan)).toEqual(['update tls_edge.orders-db: set tls_termination']);
    const change = plan.changes.find((c) => c.address === 'tls_edge.orders-db');
    expect(change?.fields).toEqual([
      { path: 'tls_termination.min_version', before: '1.0', after: '1.2', sensitive: false },
    ]);
  });

  it('IdP-initiated login turned off by hand is drift on its route', () => {
    const plan = buildPlan(
      desired(),
      live((https) => {
        const routes = https.routes as Record<string, Record<string, unknown>>[];
        (routes[1]?.saml as Record<string, unknown>).allow_idp_initiated = false;
      }),
    );
    expect(pending(plan)).toEqual(['update https_edge.storefront.route["/admin"]: set saml']);
  });
});
