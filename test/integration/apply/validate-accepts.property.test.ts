/**
 * Issue 9's class closed: `validate` accepts nothing the server refuses. For random manifest sets
 * drawn from the schemas, with values on both sides of every rule of the hosted service (domain
 * ports, auth on several routes, cookie prefixes, partial circuit breakers, control characters in
 * headers, non-RE2 patterns, webhook providers, mutual TLS under upstream termination; cloud
 * endpoints from the generators, some with one fault, some on an edge's host or sharing a URL;
 * certificate authorities, vaults and secrets with an endpoint naming them, some breaking one
 * rule: a certificate that is no CA, a name the service refuses, a reference to nothing):
 * whenever `validate` succeeds, a cold apply against the local server gets no 4xx at all,
 * counted at the server, and converges.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSet } from '../../helpers/arbitraries/account.js';
import {
  type CloudEndpointCase,
  cloudEndpoint,
  envOf,
  manifestDoc,
} from '../../helpers/arbitraries/cloud-endpoint.js';
import { faultyCloudEndpoint } from '../../helpers/arbitraries/faults.js';
import { NAMED_IP_POLICIES } from '../../helpers/live-ip-policies.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, tempDir, writeManifests } from './helpers.js';

/** Mostly values the service takes, sometimes one it refuses: each set breaks few rules. */
function mix<T>(valid: readonly T[], invalid: readonly T[]): fc.Arbitrary<T> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 15 },
    { arbitrary: fc.constantFrom(...invalid), weight: 1 },
  );
}

const hostport = mix(
  [
    'a.example.com:443',
    '*.w.example.com:443',
    '10.0.0.1:5432',
    '10.0.0.3:443',
    'd.example.com:443',
  ],
  ['b.example.com:8443', '*.x.example.com:9443', '10.0.0.2:0', 'c.example.com'],
);
const cookiePrefix = mix(['app.', '', 'Edge.1'], ['bad-prefix', 'a_b']);
const headerName = mix(['X-A', 'X-Ok', 'X-B'], ['Bad Name']);
const headerValue = mix(['ok', 'v 2', 'x=1'], ['a\r\nb', 'tab\tx', 'esc\u001b[2J', 'del\u007f']);
const uaPattern = mix(
  ['bot', '(?i)crawler', '^Mozilla/5\\.0', 'x*?'],
  ['(?=x)y', '(a)\\1', 'a++', '[unclosed'],
);
const provider = mix(
  ['stripe', 'heroku', 'hostedhooks', 'sns', 'GitHub'],
  ['hosted_hooks', 'amazon_sns'],
);

const auth = fc.oneof(
  fc.constant({}),
  cookiePrefix.map((p) => ({ oauth: { provider: { google: {} }, cookie_prefix: p } })),
  cookiePrefix.map((p) => ({
    oidc: {
      issuer: 'https://id.example.com',
      client_id: 'c',
      client_secret: 's',
      cookie_prefix: p,
    },
  })),
  fc.constant({ saml: { idp_metadata: '<EntityDescriptor/>' } }),
);
const breaker = mix<Record<string, number> | undefined>(
  [undefined, { tripped_duration: 10, rolling_window: 10, num_buckets: 10, volume_threshold: 20 }],
  [
    { num_buckets: 10, error_threshold_percentage: 0.5 },
    { tripped_duration: 10, rolling_window: 0, num_buckets: 10, volume_threshold: 20 },
  ],
);

const route = fc
  .record({
    auth,
    breaker,
    headers: fc.option(fc.dictionary(headerName, headerValue, { maxKeys: 2 }), { nil: undefined }),
    ua: fc.option(fc.uniqueArray(uaPattern, { maxLength: 2 }), { nil: undefined }),
    webhook: fc.option(provider, { nil: undefined }),
  })
  .map((r) => {
    const out: Record<string, unknown> = { match_type: 'path_prefix', ...r.auth };
    if (r.breaker !== undefined) out.circuit_breaker = r.breaker;
    if (r.headers !== undefined) out.request_headers = { add: r.headers };
    if (r.ua !== undefined && r.ua.length > 0) out.user_agent_filter = { deny: r.ua };
    if (r.webhook !== undefined) {
      out.webhook_verification =
        r.webhook.toLowerCase() === 'sns'
          ? { provider: r.webhook }
          : { provider: r.webhook, secret: 'whsec' };
    }
    return out;
  });

/**
 * Endpoints on the edges' hosts too (a set where both claim one is refused: 381) and on hosts of
 * their own; two of them may share a URL (refused unless both pool). One in seven is faulty.
 */
const ENDPOINT_HOSTS = ['a.example.com', 'd.example.com', 'app.example.com', 'api.example.com'];
const endpoint: fc.Arbitrary<CloudEndpointCase> = fc.oneof(
  { arbitrary: cloudEndpoint({ hosts: ENDPOINT_HOSTS }), weight: 6 },
  { arbitrary: faultyCloudEndpoint({ hosts: ENDPOINT_HOSTS }).map((f) => f.case), weight: 1 },
);

const manifestSet = fc
  .record({
    https: fc.array(
      fc.record({
        hostports: fc.uniqueArray(hostport, { maxLength: 2 }),
        routes: fc.array(route, { maxLength: 3 }),
      }),
      { maxLength: 2 },
    ),
    tls: fc.array(
      fc.record({
        hostports: fc.uniqueArray(hostport, { maxLength: 2 }),
        terminateAt: fc.constantFrom(undefined, 'edge', 'agent', 'upstream'),
        mtls: fc.boolean(),
      }),
      { maxLength: 2 },
    ),
    endpoints: fc.uniqueArray(endpoint, { maxLength: 2, selector: (c) => c.name }),
    account: accountSet({ faults: true, host: 'hooks.example.com' }),
  })
  .map(({ https, tls, endpoints, account }) => {
    // Hostports are unique across a set (a rule of its own, not the one under test here).
    const seen = new Set<string>();
    const unique = (list: string[]) => list.filter((h) => !seen.has(h) && seen.add(h));
    const docs = [
      ...https.map((e, i) => ({
        kind: 'HTTPSEdge',
        name: `web${i}`,
        hostports: unique(e.hostports),
        routes: e.routes.map((r, j) => ({ ...r, match: `/r${j}` })),
      })),
      ...tls.map((e, i) => ({
        kind: 'TLSEdge',
        name: `tcp${i}`,
        hostports: unique(e.hostports),
        ...(e.terminateAt === undefined
          ? {}
          : { tls_termination: { terminate_at: e.terminateAt } }),
        ...(e.mtls ? { mutual_tls: { certificate_authority_ids: ['ca_one'] } } : {}),
      })),
      ...endpoints.map(manifestDoc),
      ...account.docs,
    ];
    return { docs, env: { ...envOf(endpoints), ...account.env } };
  });

describe('validate accepts nothing the server refuses', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    tmp = await tempDir('edgesync-accepts-');
  });
  afterAll(async () => {
    await tmp.cleanup();
  });

  it('validate succeeds => a cold apply gets no 4xx and converges', async () => {
    let valid = 0;
    let invalid = 0;
    /** Valid sets declaring each account kind, or reading one by reference. */
    const declared: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(manifestSet, async ({ docs, env }) => {
        const dir = path.join(tmp.dir, 'set');
        await rm(dir, { recursive: true, force: true });
        await mkdir(dir, { recursive: true });
        await writeManifests(dir, docs);
        const validate = await runCli(['validate', dir], { env });
        if (validate.code !== 0) {
          expect(validate.code, validate.stderr).toBe(1);
          invalid += 1;
          return;
        }
        valid += 1;
        const text = JSON.stringify(docs);
        for (const k of ['CertificateAuthority', 'Secret', '"ref"', 'secrets.get']) {
          if (text.includes(k)) declared[k] = (declared[k] ?? 0) + 1;
        }
        const server = await startTestServer({ ipPolicies: NAMED_IP_POLICIES });
        try {
          const apply = await runCli(['apply', '--yes', dir], {
            env: { ...env, ...apiEnv(server.url, server.apiKey) },
          });
          const refused = Object.entries(server.statuses).filter(([s]) => s.startsWith('4'));
          expect(refused, apply.stderr).toEqual([]);
          expect(apply.code, apply.stderr).toBe(0);
          expect(apply.stderr).toContain('converged');
        } finally {
          await server.close();
        }
      }),
      { seed: 9042, numRuns: 400 },
    );
    // Both sides of the rules were exercised, the account's kinds among them.
    expect(valid).toBeGreaterThan(20);
    expect(invalid).toBeGreaterThan(20);
    for (const kind of ['CertificateAuthority', 'Secret', '"ref"', 'secrets.get']) {
      expect(declared[kind] ?? 0, kind).toBeGreaterThan(5);
    }
  }, 120_000);

  it("validate succeeds => no 4xx, for endpoints on an edge's host or sharing a URL", async () => {
    // Valid edges and endpoints only, on few hosts: the rules across documents decide.
    const sets = fc
      .record({
        edgeHosts: fc.uniqueArray(fc.constantFrom('a.example.com:443', 'b.example.com:443'), {
          maxLength: 2,
        }),
        endpoints: fc.uniqueArray(
          cloudEndpoint({ hosts: ['a.example.com', 'b.example.com'], names: ['x', 'y', 'z'] }),
          { minLength: 1, maxLength: 3, selector: (c) => c.name },
        ),
      })
      .map(({ edgeHosts, endpoints }) => ({
        docs: [
          ...(edgeHosts.length === 0
            ? []
            : [{ kind: 'TLSEdge', name: 'tcp', hostports: edgeHosts }]),
          ...endpoints.map(manifestDoc),
        ],
        env: envOf(endpoints),
      }));
    const refused = { heldByEdge: 0, sharedUrl: 0 };
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(sets, async ({ docs, env }) => {
        const dir = path.join(tmp.dir, 'claims');
        await writeManifests(dir, docs);
        const validate = await runCli(['validate', dir], { env });
        if (validate.code !== 0) {
          expect(validate.code, validate.stderr).toBe(1);
          if (/serves \(/.test(validate.stderr)) refused.heldByEdge += 1;
          if (/both must set pooling_enabled/.test(validate.stderr)) refused.sharedUrl += 1;
          return;
        }
        valid += 1;
        const server = await startTestServer({ ipPolicies: NAMED_IP_POLICIES });
        try {
          const apply = await runCli(['apply', '--yes', dir], {
            env: { ...env, ...apiEnv(server.url, server.apiKey) },
          });
          const fours = Object.entries(server.statuses).filter(([st]) => st.startsWith('4'));
          expect(fours, apply.stderr).toEqual([]);
          expect(apply.stderr).toContain('converged');
        } finally {
          await server.close();
        }
      }),
      { numRuns: 150 },
    );
    expect(valid).toBeGreaterThan(20);
    expect(refused.heldByEdge).toBeGreaterThan(1);
    expect(refused.sharedUrl).toBeGreaterThan(1);
  }, 120_000);
});
