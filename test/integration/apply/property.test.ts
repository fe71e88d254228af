/**
 * The convergence invariant, property-based (fast-check) against the local server over HTTP:
 * from a random starting account (edges, cloud endpoints and service users edgesync owns, the
 * last written as ServiceUser or BotUser, certificate authorities, vaults and secrets with an
 * endpoint reading them, made by applying a random manifest set, plus foreign edges and endpoints
 * made by hand and an agent endpoint), applying a random manifest set converges in ONE apply
 * (secrets whose values change between the two sets included), the following plan is empty,
 * and every foreign edge and endpoint is byte-for-byte unchanged. Endpoints draw their public
 * hosts from the edges' hosts, so an endpoint often claims a host and port that an edge of the
 * starting set holds (the edge must release it first), and a URL often passes from one endpoint
 * to another of a different name (the old one must go first).
 */
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  ApiClient,
  CloudEndpoint,
  HttpsEdge,
  LiveSnapshot,
  TlsEdge,
} from '../../../src/api/index.js';
import { residualOf } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata, storedMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
import { accountSet } from '../../helpers/arbitraries/account.js';
import {
  type CloudEndpointCase,
  cloudEndpoint,
  cloudEndpointSet,
  envOf,
  manifestDoc,
} from '../../helpers/arbitraries/cloud-endpoint.js';
import { NAMED_IP_POLICIES } from '../../helpers/live-ip-policies.js';
import { startTestServer } from '../../helpers/server.js';
import {
  apiClient,
  apiEnv,
  duplicates,
  runCli,
  snapshotOf,
  tempDir,
  writeManifests,
} from './helpers.js';

const HOSTS = Array.from({ length: 8 }, (_, i) => `h${i}.example.com:443`);
const FOREIGN_HOSTS = Array.from({ length: 4 }, (_, i) => `f${i}.example.com:443`);
const MATCHES = ['/', '/api', '/login', '/static'];
/**
 * Two of the edges' hosts without their port (endpoints on them claim `h<i>.example.com:443`)
 * and three names: small pools, so URLs often pass between endpoints and from edges.
 */
const ENDPOINT_HOSTS = HOSTS.slice(0, 2).map(withoutPort);
const ENDPOINT_NAMES = ['web', 'api', 'shop'];
const AGENT_URL = 'https://agent.example.com';
const OURS_WEB = storedMetadata({}, { owner: 'default', name: 'web', protect: false });

const auth = fc.constantFrom(
  {},
  { oauth: { provider: { google: { email_domains: ['example.com'] } } } },
  {
    oauth: {
      provider: {
        github: { client_id: 'gh', client_secret: 'gh-secret', organizations: ['acme'] },
      },
      options_passthrough: true,
    },
  },
  { oidc: { issuer: 'https://id.example.com', client_id: 'c', client_secret: 'oidc-secret' } },
  { saml: { idp_metadata: '<EntityDescriptor/>', force_authn: true } },
);

/** At most one route of an edge may carry an auth module: later ones lose theirs. */
function oneAuthRoute(routes: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  let seen = false;
  return routes.map((r) => {
    const has = ['oauth', 'oidc', 'saml'].some((m) => m in r);
    if (!has) return r;
    if (!seen) {
      seen = true;
      return r;
    }
    const { oauth: _o, oidc: _i, saml: _s, ...rest } = r;
    return rest;
  });
}

const route = fc
  .record({
    match_type: fc.constantFrom('exact_path', 'path_prefix'),
    description: fc.option(fc.constantFrom('a route', 'another'), { nil: undefined }),
    backend: fc.option(fc.constantFrom('bkdhr_one', 'bkdtg_two'), { nil: undefined }),
    compression: fc.option(fc.boolean(), { nil: undefined }),
    headers: fc.option(fc.constantFrom({ 'X-Team': 'web' }, { 'X-A': '1', 'X-B': '2' }), {
      nil: undefined,
    }),
    breaker: fc.option(fc.integer({ min: 1, max: 128 }), { nil: undefined }),
    auth,
  })
  .map((r) => {
    const out: Record<string, unknown> = { match_type: r.match_type };
    if (r.description !== undefined) out.description = r.description;
    if (r.backend !== undefined) out.backend = { backend_id: r.backend };
    if (r.compression !== undefined) out.compression = { enabled: r.compression };
    if (r.headers !== undefined) out.request_headers = { add: r.headers, remove: ['X-Debug'] };
    if (r.breaker !== undefined)
      out.circuit_breaker = {
        tripped_duration: 10,
        rolling_window: 10,
        volume_threshold: 20,
        num_buckets: r.breaker,
      };
    return { ...out, ...r.auth };
  });

/**
 * A manifest set: HTTPS edges a..e, TLS edges t1..t3, bot users; hostports unique in the set.
 * `protect` only where asked: a protected edge whose manifest goes away keeps its hostports on
 * purpose, so a starting set with protected edges could not always converge to any target.
 */
const manifestSet = (
  allowProtect: boolean,
  endpoints: fc.Arbitrary<CloudEndpointCase[]> = endpointsAt,
) =>
  fc
    .record({
      https: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 4 }),
      tls: fc.uniqueArray(fc.constantFrom('t1', 't2', 't3'), { maxLength: 2 }),
      hostOwner: fc.array(fc.nat(12), { minLength: HOSTS.length, maxLength: HOSTS.length }),
      routes: fc.array(
        fc
          .uniqueArray(fc.constantFrom(...MATCHES), { maxLength: 3 })
          .chain((ms) => fc.tuple(...ms.map((m) => route.map((r) => ({ ...r, match: m }))))),
        { minLength: 5, maxLength: 5 },
      ),
      edgeExtras: fc.array(
        fc.record({
          description: fc.option(fc.constantFrom('one', 'two'), { nil: undefined }),
          labels: fc.option(fc.constantFrom({ team: 'web' }, { team: 'ops', tier: '1' }), {
            nil: undefined,
          }),
          minVersion: fc.option(fc.constantFrom('1.2', '1.3'), { nil: undefined }),
          mtls: fc.boolean(),
          protect: fc.boolean(),
        }),
        { minLength: 8, maxLength: 8 },
      ),
      tlsModules: fc.array(
        fc.record({
          backend: fc.boolean(),
          upstream: fc.boolean(),
          policy: fc.option(fc.constantFrom('p1', 'p2'), { nil: undefined }),
        }),
        { minLength: 3, maxLength: 3 },
      ),
      endpoints,
      account: accountSet(),
      bots: fc.uniqueArray(
        fc.record({
          name: fc.constantFrom('ci', 'deploy', 'ops'),
          active: fc.boolean(),
          absent: fc.boolean(),
          // The kind's current name or its former one: the same records either way.
          kind: fc.constantFrom('ServiceUser', 'BotUser'),
        }),
        { maxLength: 3, selector: (b) => b.name },
      ),
    })
    .map((s) => {
      const docs: Record<string, unknown>[] = [];
      const edgeNames = [...s.https, ...s.tls];
      // An edge and an endpoint of one set never hold the same host and port (validate refuses
      // it): the endpoint wins it.
      const claimed = new Set(s.endpoints.map(claimOf));
      const hostsOf = (i: number) =>
        HOSTS.filter((h, at) => s.hostOwner[at] === i && !claimed.has(h));
      s.https.forEach((name, i) => {
        const x = s.edgeExtras[i];
        const doc: Record<string, unknown> = {
          kind: 'HTTPSEdge',
          name,
          hostports: hostsOf(i),
          routes: oneAuthRoute(s.routes[i] ?? []),
        };
        if (x?.description !== undefined) doc.description = x.description;
        if (x?.labels !== undefined) doc.metadata = x.labels;
        if (x?.minVersion !== undefined) doc.tls_termination = { min_version: x.minVersion };
        if (x?.mtls) doc.mutual_tls = { certificate_authority_ids: ['ca_one'] };
        if (allowProtect && x?.protect) doc.protect = true;
        docs.push(doc);
      });
      s.tls.forEach((name, j) => {
        const m = s.tlsModules[j];
        const doc: Record<string, unknown> = {
          kind: 'TLSEdge',
          name,
          hostports: hostsOf(s.https.length + j),
        };
        if (m?.backend) doc.backend = { backend_id: 'bkdtg_tls' };
        if (m?.upstream) doc.tls_termination = { terminate_at: 'upstream' };
        if (m?.policy !== undefined) doc.traffic_policy = { value: m.policy };
        docs.push(doc);
      });
      for (const b of s.bots) {
        docs.push({
          kind: b.kind,
          name: b.name,
          active: b.active,
          ...(b.absent ? { ensure: 'absent' } : {}),
        });
      }
      docs.push(...s.endpoints.map(manifestDoc), ...s.account.docs);
      const edgeHosts = HOSTS.filter(
        (h, at) => (s.hostOwner[at] ?? HOSTS.length) < edgeNames.length && !claimed.has(h),
      );
      const env = { ...envOf(s.endpoints), ...s.account.env };
      return { docs, edgeNames, edgeHosts, endpoints: s.endpoints, env };
    });

const endpointsAt = cloudEndpointSet({
  maxLength: 3,
  hosts: ENDPOINT_HOSTS,
  names: ENDPOINT_NAMES,
});
/**
 * A starting set and a target set. The target is drawn on its own, or takes the start's
 * endpoints under other names (each URL passes to another endpoint), or puts one or two https
 * or tls endpoints on the hosts the start's edges hold (each edge must release its host first).
 */
const startAndTarget = manifestSet(
  false,
  // Mostly with endpoints, so the renamed target has URLs to pass on.
  fc.oneof(endpointsAt, { arbitrary: endpointsAt.filter((cs) => cs.length > 0), weight: 2 }),
).chain((start) => {
  const renamed = fc
    .integer({ min: 1, max: ENDPOINT_NAMES.length - 1 })
    .map((shift) => start.endpoints.map((c) => ({ ...c, name: rotated(c.name, shift) })));
  // https or tls on port 443 of a host an edge holds; one endpoint per URL.
  const onEdgeHosts = fc
    .uniqueArray(
      cloudEndpoint({
        hosts: start.edgeHosts.length === 0 ? ENDPOINT_HOSTS : start.edgeHosts.map(withoutPort),
        names: ENDPOINT_NAMES,
      }).filter((c) => c.binding === 'public' && (c.scheme === 'https' || c.scheme === 'tls')),
      { minLength: 1, maxLength: 2, selector: (c) => c.name },
    )
    .map((cases) =>
      cases.filter((c, i) => cases.findIndex((o) => o.normalisedUrl === c.normalisedUrl) === i),
    );
  return fc.tuple(
    fc.constant(start),
    fc.oneof(
      manifestSet(true),
      { arbitrary: manifestSet(true, renamed), weight: 2 },
      { arbitrary: manifestSet(true, onEdgeHosts), weight: 2 },
    ),
  );
});

function rotated(name: string, shift: number): string {
  const at = ENDPOINT_NAMES.indexOf(name);
  return ENDPOINT_NAMES[(at + shift) % ENDPOINT_NAMES.length] as string;
}

function withoutPort(hostport: string): string {
  return hostport.replace(/:443$/, '');
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { https: '443', http: '80', tls: '443' };

/** The `host:port` an endpoint claims, as an edge's hostport is written. */
function claimOf(c: CloudEndpointCase): string {
  const m = /^([a-z]+):\/\/([^:]+)(?::(\d+))?$/.exec(c.normalisedUrl);
  if (m === null) throw new Error(`unexpected normalised URL ${c.normalisedUrl}`);
  return `${m[2]}:${m[3] ?? DEFAULT_PORTS[m[1] as string]}`;
}

const foreignEdges = fc.array(
  fc.record({
    tls: fc.boolean(),
    metadata: fc.constantFrom(
      undefined,
      'hand made',
      JSON.stringify({ 'edgesync/owner': 'team-b', 'edgesync/name': 'a' }),
      JSON.stringify({ team: 'x' }),
    ),
    route: fc.boolean(),
  }),
  { maxLength: FOREIGN_HOSTS.length },
);

/** Endpoints of other owners or of none, on URLs of their own. */
const foreignEndpoints = fc.array(
  fc.constantFrom(
    undefined,
    'hand made',
    JSON.stringify({ 'edgesync/owner': 'team-b', 'edgesync/name': 'web' }),
    JSON.stringify({ team: 'x' }),
  ),
  { maxLength: 2 },
);

const DENY = JSON.stringify({ on_http_request: [{ actions: [{ type: 'deny' }] }] });

async function makeForeignEndpoints(
  client: ApiClient,
  metadata: readonly (string | undefined)[],
): Promise<void> {
  for (const [i, m] of metadata.entries()) {
    await client.createEndpoint({
      url: `https://fe${i}.example.com`,
      traffic_policy: DENY,
      ...(m === undefined ? {} : { metadata: m }),
    });
  }
}

async function makeForeign(
  client: ApiClient,
  specs: readonly { tls: boolean; metadata: string | undefined; route: boolean }[],
): Promise<void> {
  for (const [i, f] of specs.entries()) {
    const hostports = [FOREIGN_HOSTS[i] as string];
    const metadata = f.metadata === undefined ? {} : { metadata: f.metadata };
    if (f.tls) {
      await client.createTlsEdge({ ...metadata, hostports, backend: { backend_id: 'bkdtg_f' } });
    } else {
      const e = await client.createHttpsEdge({ ...metadata, hostports });
      if (f.route) {
        await client.createRoute(e.id, {
          match_type: 'path_prefix',
          match: '/',
          oidc: { issuer: 'https://f.example.com', client_id: 'f', client_secret: 'f-secret' },
        });
      }
    }
  }
}

/** What the apply had to order: handovers from edges and between endpoints, replacements. */
interface Hazards {
  fromEdge: number;
  betweenEndpoints: number;
  replaced: number;
}

function countHazards(h: Hazards, live: LiveSnapshot, target: readonly CloudEndpointCase[]) {
  const held = new Set([...live.tlsEdges, ...live.httpsEdges].flatMap((e) => e.hostports));
  const ours = live.cloudEndpoints.flatMap((e) => {
    const name = parseStoredMetadata(e.metadata)?.name;
    return e.type === 'cloud' && name !== undefined ? [{ e, name }] : [];
  });
  for (const t of target) {
    if (held.has(claimOf(t))) h.fromEdge += 1;
    for (const { e, name } of ours) {
      if (name === t.name) {
        if (e.url !== t.normalisedUrl) h.replaced += 1;
        continue;
      }
      const shared = e.url === t.normalisedUrl && e.bindings?.[0] === t.binding;
      if (shared && !(e.pooling_enabled === true && t.pooling === true)) h.betweenEndpoints += 1;
    }
  }
}

function foreignOnly(records: readonly (TlsEdge | HttpsEdge | CloudEndpoint)[]): string {
  const foreign = records.filter(
    (e) =>
      ('type' in e && e.type === 'agent') || parseStoredMetadata(e.metadata)?.owner !== 'default',
  );
  return JSON.stringify([...foreign].sort((a, b) => (a.id < b.id ? -1 : 1)));
}

describe('convergence property', () => {
  it('random manifests over random accounts converge in one apply', async () => {
    const tmp = await tempDir();
    let run = 0;
    const hazards: Hazards = { fromEdge: 0, betweenEndpoints: 0, replaced: 0 };
    /** Target sets declaring each account kind, and an endpoint reading a CA or a secret. */
    const declared: Record<string, number> = {};
    try {
      await fc.assert(
        fc.asyncProperty(
          startAndTarget,
          foreignEdges,
          foreignEndpoints,
          async ([start, target], foreign, foreignCe) => {
            run += 1;
            const server = await startTestServer({
              ipPolicies: NAMED_IP_POLICIES,
              // Claims to be ours by a name the sets use: an agent endpoint is never touched.
              agentEndpoints: [{ url: AGENT_URL, metadata: OURS_WEB }],
            });
            const client = apiClient(server.url, server.apiKey);
            const api = apiEnv(server.url, server.apiKey);
            const flags = ['--yes', '--allow-empty', '--max-deletes', '100'];
            try {
              await makeForeign(client, foreign);
              await makeForeignEndpoints(client, foreignCe);
              const dir = path.join(tmp.dir, `run${run}`);
              await writeManifests(dir, start.docs);
              const seeded = await runCli(['apply', dir, ...flags], {
                env: { ...start.env, ...api },
              });
              expect(seeded.stderr).toContain('converged');

              const before = await snapshotOf(server.url, server.apiKey);
              countHazards(hazards, before, target.endpoints);
              for (const d of target.docs) {
                const text = d.name === 'hooks' ? JSON.stringify(d) : '';
                const seen = [
                  String(d.kind),
                  ...['"ref"', 'secrets.get'].filter((t) => text.includes(t)),
                ];
                for (const k of seen) declared[k] = (declared[k] ?? 0) + 1;
              }
              await writeManifests(dir, target.docs);
              const applied = await runCli(['apply', dir, ...flags], {
                env: { ...target.env, ...api },
              });
              expect(applied.stderr).toContain('converged');
              expect(applied.code, applied.stderr).toBe(0);

              const after = await snapshotOf(server.url, server.apiKey);
              const loaded = await loadManifests(dir, { env: target.env });
              if (!loaded.ok) throw new Error('generated manifests are invalid');
              const next = buildPlan(loaded.set, after, { allowEmpty: true, maxDeletes: 100 });
              const residual = residualOf(next, after);
              expect(residual.changes).toEqual([]);
              expect(residual.blocked).toEqual([]);
              const kept = (l: typeof after) => [
                ...l.tlsEdges,
                ...l.httpsEdges,
                ...l.cloudEndpoints,
              ];
              expect(foreignOnly(kept(after))).toBe(foreignOnly(kept(before)));
              expect(duplicates(after)).toEqual([]);
            } finally {
              await client.close();
              await server.close();
            }
          },
        ),
        { numRuns: 25, seed: 4242 },
      );
      // The orderings were exercised: URLs passed from edges and between endpoints, replaced.
      expect(hazards.fromEdge).toBeGreaterThan(1);
      expect(hazards.betweenEndpoints).toBeGreaterThan(1);
      expect(hazards.replaced).toBeGreaterThan(1);
      // So were the account's kinds, and endpoints reading them by reference.
      for (const kind of ['CertificateAuthority', 'Vault', 'Secret', '"ref"', 'secrets.get']) {
        expect(declared[kind] ?? 0, kind).toBeGreaterThan(2);
      }
    } finally {
      await tmp.cleanup();
    }
  }, 120_000);
});
