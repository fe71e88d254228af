/**
 * The convergence invariant, property-based (fast-check) against the local server over HTTP:
 * from a random starting account (edges edgesync owns, made by applying a random manifest set,
 * plus foreign edges made by hand), applying a random manifest set converges in ONE apply, the
 * following plan is empty, and every foreign edge is byte-for-byte unchanged.
 */
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiClient, HttpsEdge, TlsEdge } from '../../../src/api/index.js';
import { residualOf } from '../../../src/apply/cycle.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
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
const manifestSet = (allowProtect: boolean) =>
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
      bots: fc.uniqueArray(
        fc.record({
          name: fc.constantFrom('ci', 'deploy', 'ops'),
          active: fc.boolean(),
          absent: fc.boolean(),
        }),
        { maxLength: 3, selector: (b) => b.name },
      ),
    })
    .map((s) => {
      const docs: Record<string, unknown>[] = [];
      const edgeNames = [...s.https, ...s.tls];
      const hostsOf = (i: number) => HOSTS.filter((_, h) => s.hostOwner[h] === i);
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
          kind: 'BotUser',
          name: b.name,
          active: b.active,
          ...(b.absent ? { ensure: 'absent' } : {}),
        });
      }
      return { docs, edgeNames };
    });

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

function foreignOnly(edges: readonly (TlsEdge | HttpsEdge)[]): string {
  const foreign = edges.filter((e) => parseStoredMetadata(e.metadata)?.owner !== 'default');
  return JSON.stringify([...foreign].sort((a, b) => (a.id < b.id ? -1 : 1)));
}

describe('convergence property', () => {
  it('random manifests over random accounts converge in one apply', async () => {
    const tmp = await tempDir();
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          manifestSet(false),
          manifestSet(true),
          foreignEdges,
          async (start, target, foreign) => {
            run += 1;
            const server = await startTestServer();
            const client = apiClient(server.url, server.apiKey);
            const env = apiEnv(server.url, server.apiKey);
            const flags = ['--yes', '--allow-empty', '--max-deletes', '100'];
            try {
              await makeForeign(client, foreign);
              const dir = path.join(tmp.dir, `run${run}`);
              await writeManifests(dir, start.docs);
              const seeded = await runCli(['apply', dir, ...flags], { env });
              expect(seeded.stderr).toContain('converged');

              const before = await snapshotOf(server.url, server.apiKey);
              await writeManifests(dir, target.docs);
              const applied = await runCli(['apply', dir, ...flags], { env });
              expect(applied.stderr).toContain('converged');
              expect(applied.code).toBe(0);

              const after = await snapshotOf(server.url, server.apiKey);
              const loaded = await loadManifests(dir, { env: {} });
              if (!loaded.ok) throw new Error('generated manifests are invalid');
              const next = buildPlan(loaded.set, after, { allowEmpty: true, maxDeletes: 100 });
              const residual = residualOf(next, after);
              expect(residual.changes).toEqual([]);
              expect(residual.blocked).toEqual([]);
              expect(foreignOnly([...after.tlsEdges, ...after.httpsEdges])).toBe(
                foreignOnly([...before.tlsEdges, ...before.httpsEdges]),
              );
              expect(duplicates(after)).toEqual([]);
            } finally {
              await client.close();
              await server.close();
            }
          },
        ),
        { numRuns: 25 },
      );
    } finally {
      await tmp.cleanup();
    }
  }, 120_000);
});
