/**
 * `validate` accepts nothing the server refuses, for reserved domains and the endpoints on them,
 * with the service's rule on (`requireReservedDomains`): random sets of `ReservedDomain`
 * documents (some names the service refuses, some duplicates, wildcards) and cloud endpoints
 * (hosts covered exactly, by a wildcard, or not at all; internal ones that need none). Whenever
 * `validate` succeeds, a cold apply gets no 4xx, counted at the server, creates every domain
 * before the endpoints on it, and the next plan is empty. A directory declaring domains is held
 * to them (see docs/reference/manifests.md#reserved-domains), so each set declares at least one.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, tempDir, writeManifests } from './helpers.js';

const DOMAINS = [
  'app.example.com',
  '*.example.com',
  'shop.example.org',
  'x.svc.app',
  '*.w.example.net',
  // Refused by the service: a private TLD, "--" outside punycode, a wildcard inside a name
  // (the last three).
  'app.local',
  'ab--c.example.com',
  'a.*.example.com',
];
/** A host a reserved name serves (itself, or one below a wildcard). */
const servedBy = (domain: string) => (domain.startsWith('*.') ? `h${domain.slice(1)}` : domain);
const OTHER_HOSTS = ['nowhere.example.io', 'api.internal', 'b.example.com'];

interface Case {
  readonly domains: string[];
  readonly endpoints: { readonly host: string; readonly scheme: string }[];
}

const valid = DOMAINS.slice(0, 5);
const domainName = fc.oneof(
  { arbitrary: fc.constantFrom(...valid), weight: 12 },
  { arbitrary: fc.constantFrom(...DOMAINS.slice(5)), weight: 1 },
);
const set: fc.Arbitrary<Case> = fc
  .uniqueArray(domainName, { minLength: 1, maxLength: 3 })
  .chain((domains) =>
    fc.record({
      domains: fc.constant(domains),
      endpoints: fc.uniqueArray(
        fc.record({
          host: fc.oneof(
            { arbitrary: fc.constantFrom(...domains.map(servedBy)), weight: 8 },
            { arbitrary: fc.constantFrom(...OTHER_HOSTS), weight: 2 },
          ),
          scheme: fc.constantFrom('https', 'tls'),
        }),
        { maxLength: 3, selector: (e) => `${e.scheme}://${e.host}` },
      ),
    }),
  );

function documents(s: Case) {
  return [
    ...s.domains.map((domain, i) => ({ kind: 'ReservedDomain', name: `d${i}`, domain })),
    ...s.endpoints.map((e, i) => ({
      kind: 'CloudEndpoint',
      name: `e${i}`,
      url: e.scheme === 'tls' ? `tls://${e.host}:443` : `https://${e.host}`,
      traffic_policy:
        e.scheme === 'tls'
          ? { on_tcp_connect: [{ actions: [{ type: 'deny' }] }] }
          : { on_http_request: [{ actions: [{ type: 'deny' }] }] },
    })),
  ];
}

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('edgesync-domains-prop-'));
});
afterAll(async () => {
  await cleanup();
});

describe('reserved domains: validate => no 4xx', () => {
  it('validate succeeds => a cold apply gets no 4xx, the domains first, and converges', async () => {
    let applied = 0;
    await fc.assert(
      fc.asyncProperty(set, async (s) => {
        await writeManifests(dir, documents(s));
        const server = await startTestServer({ requireReservedDomains: true });
        try {
          const env = apiEnv(server.url, server.apiKey);
          const validated = await runCli(['validate', dir], { env });
          if (validated.code !== 0) return;
          applied += 1;
          const apply = await runCli(['apply', dir, '--yes', '--allow-empty'], { env });
          const refused = Object.entries(server.statuses).filter(([st]) => st.startsWith('4'));
          expect(refused, apply.stderr).toEqual([]);
          expect(apply.code, apply.stderr).toBe(0);
          const again = await runCli(['plan', dir, '--detailed-exitcode', '--allow-empty'], {
            env,
          });
          expect(again.code, again.stdout).toBe(0);
        } finally {
          await server.close();
        }
      }),
      { seed: 3601, numRuns: 40 },
    );
    // The property is not vacuous: some sets were valid and applied.
    expect(applied).toBeGreaterThan(5);
  }, 240_000);
});
