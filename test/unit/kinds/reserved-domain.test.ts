/**
 * The reserved domain's definition: which reserved names serve an endpoint's host (held to the
 * local server's own statement of the rule, the oracle the controller is tested against), which
 * endpoints need one, readiness from a live record, and what the plan makes of them: an
 * endpoint created after its domain, held back while its domain is not ready (unless told not
 * to wait), a domain deleted after its endpoint, a removed domain kept and said to be.
 */
import { describe, expect, it } from 'vitest';
import { CLOUD_ENDPOINT, domainReferences } from '../../../src/kinds/own-planners.js';
import {
  coveringDomains,
  domainReadiness,
  RESERVED_DOMAIN,
  ReservedDomainSchema,
} from '../../../src/kinds/reserved-domain.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { domainFor } from '../../../src/server/domain-names.js';
import { desiredSet, endpointManifest } from '../plan/builders.js';

const SOURCE = { file: 'd.yaml', line: 1, column: 1 };

describe('which reserved names serve a host', () => {
  it.each([
    ['app.example.com', ['app.example.com', '*.example.com', '*.com']],
    ['a.b.example.com', ['a.b.example.com', '*.b.example.com', '*.example.com', '*.com']],
    ['*.example.com', ['*.example.com']],
  ])('%s: %j', (host, names) => {
    expect(coveringDomains(host)).toEqual(names);
  });

  // One rule, two statements: the controller's candidates, first reserved one wins, agree with
  // the server's choice on every pair of hosts and reserved sets here.
  const RESERVED = [
    [],
    ['app.example.com'],
    ['*.example.com'],
    ['*.example.com', 'app.example.com'],
    ['*.b.example.com', '*.example.com'],
    ['*.example.org'],
  ];
  const HOSTS = [
    'app.example.com',
    'x.b.example.com',
    '*.example.com',
    'example.com',
    'a.example.org',
  ];
  it.each(RESERVED.flatMap((set) => HOSTS.map((host) => [host, set] as const)))(
    '%s on %j: as the server chooses',
    (host, set) => {
      const mine = coveringDomains(host).find((n) => set.includes(n));
      expect(mine).toBe(
        domainFor(
          host,
          set.map((domain) => ({ domain })),
        )?.domain,
      );
    },
  );
});

describe('which endpoints need a reserved domain', () => {
  it.each([
    ['https://app.example.com', undefined, ['app.example.com']],
    ['http://app.example.com', undefined, ['app.example.com']],
    ['tls://app.example.com:443', undefined, ['app.example.com']],
    ['tcp://1.tcp.example.com:12345', undefined, []],
    ['https://api.internal', undefined, []],
    ['http://svc.ns', ['kubernetes'], []],
    ['not a url', undefined, []],
  ])('%s %j', (url, bindings, hosts) => {
    const refs = domainReferences({ url, ...(bindings === undefined ? {} : { bindings }) });
    expect(refs.map((r) => r.name)).toEqual(hosts);
    for (const r of refs) {
      expect(r).toMatchObject({ kind: 'reserved_domain', path: ['url'], orderOnly: true });
    }
  });

  it('the endpoint kind refers to reserved domains (deleted after the endpoints on them)', () => {
    expect(CLOUD_ENDPOINT.refersTo).toContain('reserved_domain');
  });
});

describe('readiness of a reservation', () => {
  const base = {
    id: 'rd_1',
    domain: 'app.example.com',
    cname_target: 'x.cname-target.svc.dev',
    acme_challenge_cname_target: null,
    certificate: null,
    certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' },
    certificate_management_status: null,
  };
  it('a subdomain of the service own domains is ready (no CNAME target)', () => {
    expect(domainReadiness({ ...base, domain: 'a.svc.app', cname_target: null }).state).toBe(
      'ready',
    );
  });
  it('an issued certificate is ready', () => {
    expect(domainReadiness({ ...base, certificate: { id: 'cert_1' } }).state).toBe('ready');
  });
  it('a custom domain without its certificate waits for its CNAME', () => {
    expect(domainReadiness(base)).toEqual({
      state: 'pending',
      message:
        'needs DNS: app.example.com CNAME x.cname-target.svc.dev; then certificate provisioning',
      records: [{ name: 'app.example.com', type: 'CNAME', target: 'x.cname-target.svc.dev' }],
    });
  });
  it('a wildcard also waits for its ACME challenge record', () => {
    const r = domainReadiness({
      ...base,
      domain: '*.example.com',
      acme_challenge_cname_target: 'y.acme.cname-target.svc.dev',
    });
    expect(r.records).toEqual([
      { name: '*.example.com', type: 'CNAME', target: 'x.cname-target.svc.dev' },
      { name: '_acme-challenge.example.com', type: 'CNAME', target: 'y.acme.cname-target.svc.dev' },
    ]);
  });
  it("a DNS error is an error with the service's message", () => {
    const r = domainReadiness({
      ...base,
      certificate_management_status: {
        provisioning_job: { error_code: 'DNS_ERROR', msg: 'CNAME points elsewhere' },
      },
    });
    expect(r.state).toBe('error');
    expect(r.message).toContain('CNAME points elsewhere');
  });
});

describe('the manifest', () => {
  it.each([
    ['app.example.com', true],
    ['*.example.com', true],
    ['App.example.com', false],
    ['app', false],
    ['a.*.example.com', false],
    ['-a.example.com', false],
    ['app.example', false],
    ['app.local', false],
    ['ab--c.example.com', false],
    ['xn--bcher-kva.example.com', true],
    ['app.example.c0m', false],
  ])('domain %s: %s', (domain, ok) => {
    const parsed = ReservedDomainSchema.safeParse({ kind: 'ReservedDomain', name: 'd', domain });
    expect(parsed.success).toBe(ok);
  });
});

describe('planning domains and the endpoints on them', () => {
  const DOMAIN = {
    kind: 'reserved_domain',
    name: 'app',
    domain: 'app.example.com',
    source: SOURCE,
    sensitive: [],
    metadata: {},
    ensure: 'present',
  };
  const ours = (name: string) => storedMetadata({}, { owner: 'default', name, protect: false });
  const liveDomain = (fields: Record<string, unknown> = {}) => ({
    id: 'rd_1',
    created_at: '2026-01-01T00:00:00Z',
    domain: 'app.example.com',
    metadata: ours('app'),
    cname_target: 'x.cname-target.svc.dev',
    acme_challenge_cname_target: null,
    certificate: null,
    certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' },
    certificate_management_status: null,
    ...fields,
  });
  const endpoint = endpointManifest({ name: 'app', url: 'https://app.example.com' });
  const set = (domains: Record<string, unknown>[], endpoints = [endpoint]) => ({
    ...desiredSet({ endpoints }),
    resources: { reserved_domain: domains as never },
  });
  const empty = { tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [] };

  it('creates the domain, then the endpoint on it', () => {
    const plan = buildPlan(set([DOMAIN]), { ...empty, resources: {} });
    const create = plan.changes.find((c) => c.address === 'cloud_endpoint.app');
    expect(create?.operations[0]?.after).toEqual(['reserved_domain.app']);
    expect(plan.blocked).toEqual([]);
  });

  it('holds the endpoint back while its domain is not ready, naming the record; not with waitForReady false', () => {
    const live = { ...empty, resources: { reserved_domain: [liveDomain()] } };
    const held = buildPlan(set([DOMAIN]), live);
    expect(held.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
      'noop reserved_domain.app',
    ]);
    expect(held.blocked[0]?.reason).toContain('app.example.com CNAME x.cname-target.svc.dev');
    expect(held.readiness?.map((r) => `${r.address} ${r.state}`)).toEqual([
      'reserved_domain.app pending',
    ]);
    const forced = buildPlan(set([DOMAIN]), live, { waitForReady: false });
    expect(forced.blocked).toEqual([]);
    expect(forced.changes.map((c) => `${c.action} ${c.address}`)).toContain(
      'create cloud_endpoint.app',
    );
  });

  it('a domain live but not declared serves the endpoint; no domain at all is not checked; a host no domain covers is blocked', () => {
    const ready = liveDomain({ domain: '*.example.com', metadata: undefined, cname_target: null });
    const byHand = buildPlan(set([]), { ...empty, resources: { reserved_domain: [ready] } });
    expect(byHand.blocked).toEqual([]);
    expect(byHand.changes.map((c) => c.action)).toEqual(['create']);
    expect(buildPlan(set([]), { ...empty, resources: {} }).blocked).toEqual([]);
    const other = liveDomain({ domain: 'other.example.org', metadata: undefined });
    const none = buildPlan(set([]), { ...empty, resources: { reserved_domain: [other] } });
    expect(none.blocked[0]?.reason).toMatch(/needs a reserved_domain for app\.example\.com/);
  });

  it('a removed domain manifest deletes nothing and the plan says it is kept; ensure: absent deletes it after its endpoint', () => {
    const live = { ...empty, resources: { reserved_domain: [liveDomain()] } };
    const kept = buildPlan(set([], []), live, { allowEmpty: true });
    expect(kept.changes).toEqual([]);
    expect(kept.warnings).toEqual([
      expect.stringMatching(/^reserved_domain\.app \(app\.example\.com, rd_1\) is kept/),
    ]);
    const liveEndpoint = {
      ...empty,
      cloudEndpoints: [
        {
          id: 'ep_1',
          type: 'cloud',
          url: 'https://app.example.com',
          metadata: ours('app'),
          bindings: ['public'],
          traffic_policy: '{}',
        },
      ],
      resources: live.resources,
    };
    const absent = buildPlan(set([{ ...DOMAIN, ensure: 'absent' }], []), liveEndpoint as never, {
      allowEmpty: true,
    });
    const domain = absent.changes.find((c) => c.address === 'reserved_domain.app');
    expect(domain?.operations[0]).toMatchObject({
      method: 'DELETE',
      after: ['cloud_endpoint.app'],
    });
  });

  it('is never pruned and owned by its host name', () => {
    expect(RESERVED_DOMAIN.prune).toBe(false);
    expect(RESERVED_DOMAIN.ownership.by).toBe('key');
  });
});
