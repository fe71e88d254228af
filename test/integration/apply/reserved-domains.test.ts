/**
 * Reserved domains through the CLI against the local server over HTTP, with the service's rule
 * on (`requireReservedDomains`: a public endpoint's host must be reserved, 319 otherwise; a
 * domain in use cannot be deleted, 446): so every successful apply below also proves its order.
 * A domain and an endpoint on it converge in one apply; removing the endpoint keeps the domain;
 * removing the domain's manifest keeps it too (said in the plan); only `ensure: absent` deletes
 * it, after the endpoint. An endpoint on a domain that is not ready waits (the plan names the
 * DNS record) until the DNS is there, or `--no-wait-for-domains`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

let server: RunningServer & { apiKey: string };
let dir: string;
let cleanup: () => Promise<void>;
let env: Record<string, string>;

beforeEach(async () => {
  server = await startTestServer({ requireReservedDomains: true });
  ({ dir, cleanup } = await tempDir('edgesync-domains-'));
  env = apiEnv(server.url, server.apiKey);
});
afterEach(async () => {
  await server.close();
  await cleanup();
});

const DOMAIN = { kind: 'ReservedDomain', name: 'app', domain: 'app.example.com' };
const POLICY = { on_http_request: [{ actions: [{ type: 'deny' }] }] };
const ENDPOINT = {
  kind: 'CloudEndpoint',
  name: 'app',
  url: 'https://app.example.com',
  traffic_policy: POLICY,
};

interface PlanJson {
  changes: {
    address: string;
    action: string;
    operations: { method: string; after?: string[] }[];
  }[];
  blocked: { address: string; kind: string; reason: string; waiting_for?: unknown[] }[];
  warnings: string[];
  readiness?: { address: string; state: string; message: string; records?: { name: string }[] }[];
}

async function planJson(...flags: string[]): Promise<PlanJson> {
  const run = await runCli(['plan', dir, '--output', 'json', ...flags], { env });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as PlanJson;
}

const pending = (plan: PlanJson) => plan.changes.filter((c) => c.action !== 'noop');

async function live() {
  const s = await snapshotOf(server.url, server.apiKey);
  return {
    domains: (s.resources?.reserved_domain ?? []).map((d) => String(d.domain)),
    endpoints: s.cloudEndpoints.map((e) => e.url),
  };
}

describe('reserved domains over HTTP (the service requires them)', () => {
  it('a domain and an endpoint on it converge in one apply, the domain first; removing the endpoint keeps the domain', async () => {
    await writeManifests(dir, [DOMAIN, ENDPOINT]);
    const plan = await planJson();
    const endpoint = plan.changes.find((c) => c.address === 'cloud_endpoint.app');
    // The endpoint's create waits for the domain's (the server would answer 319 otherwise).
    expect(endpoint?.operations[0]?.after).toEqual(['reserved_domain.app']);

    const first = await runCli(['apply', dir, '--yes'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(await live()).toEqual({
      domains: ['app.example.com'],
      endpoints: ['https://app.example.com'],
    });
    const again = await planJson();
    expect(pending(again)).toEqual([]);
    expect(again.blocked).toEqual([]);
    // The custom domain's certificate waits for its CNAME: said, with the record to create.
    expect(again.readiness).toEqual([
      expect.objectContaining({
        address: 'reserved_domain.app',
        state: 'pending',
        records: [expect.objectContaining({ name: 'app.example.com', type: 'CNAME' })],
      }),
    ]);
    const text = await runCli(['plan', dir], { env });
    expect(text.stdout).toContain('Not ready');
    expect(text.stdout).toMatch(/needs DNS record app\.example\.com CNAME \S+/);

    // The endpoint's manifest removed: it is deleted, the domain stays (a directory of domains
    // only is an empty set of edges and endpoints to the deletion guard).
    await writeManifests(dir, [DOMAIN]);
    const removed = await runCli(['apply', dir, '--yes', '--allow-empty'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(await live()).toEqual({ domains: ['app.example.com'], endpoints: [] });
  });

  it('a removed ReservedDomain manifest deletes nothing and the plan says the domain is kept; ensure: absent deletes it after its endpoint', async () => {
    await writeManifests(dir, [DOMAIN, ENDPOINT]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);

    // Both manifests gone: the endpoint is deleted, the domain is never pruned.
    await writeManifests(dir, []);
    const gone = await runCli(['plan', dir, '--allow-empty', '--output', 'json'], { env });
    const plan = JSON.parse(gone.stdout) as PlanJson;
    expect(pending(plan).map((c) => `${c.action} ${c.address}`)).toEqual([
      'delete cloud_endpoint.app',
    ]);
    expect(plan.warnings).toContainEqual(
      expect.stringMatching(
        /^reserved_domain\.app \(app\.example\.com, rd_\w+\) is kept: .*ensure: absent/,
      ),
    );

    // ensure: absent, with the endpoint still live: the endpoint goes first (446 otherwise).
    await writeManifests(dir, [{ ...DOMAIN, ensure: 'absent' }]);
    const absent = await planJson('--allow-empty');
    const domain = absent.changes.find((c) => c.address === 'reserved_domain.app');
    expect(domain?.action).toBe('delete');
    expect(domain?.operations[0]?.after).toEqual(['cloud_endpoint.app']);
    const applied = await runCli(['apply', dir, '--yes', '--allow-empty'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(await live()).toEqual({ domains: [], endpoints: [] });
  });

  it('an endpoint on a domain that is not ready waits, naming the DNS record, until the DNS is there', async () => {
    await writeManifests(dir, [DOMAIN]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);
    await writeManifests(dir, [DOMAIN, ENDPOINT]);

    const waiting = await planJson();
    expect(pending(waiting)).toEqual([]);
    const [blocked] = waiting.blocked;
    expect(blocked?.address).toBe('cloud_endpoint.app');
    expect(blocked?.reason).toMatch(
      /waits for reserved_domain\.app to be ready \(pending: needs DNS: app\.example\.com CNAME \S+/,
    );
    expect(blocked?.reason).toContain('--no-wait-for-domains');
    // The same, as data: what it waits for and the record to create.
    expect(blocked?.waiting_for).toEqual([
      {
        address: 'reserved_domain.app',
        state: 'pending',
        message: expect.stringContaining('needs DNS: app.example.com CNAME'),
        records: [{ name: 'app.example.com', type: 'CNAME', target: expect.any(String) }],
      },
    ]);
    // Left out alone: the rest of the plan is applied (a second domain here).
    await writeManifests(dir, [
      DOMAIN,
      ENDPOINT,
      { ...DOMAIN, name: 'api', domain: 'api.example.com' },
    ]);
    const held = await runCli(['apply', dir, '--yes'], { env });
    expect(held.stderr).toContain('waits for reserved_domain.app');
    expect((await live()).endpoints).toEqual([]);
    expect((await live()).domains.sort()).toEqual(['api.example.com', 'app.example.com']);

    // The CNAME exists now: the certificate is issued, and the endpoint is created.
    server.knobs.dns = { cnamesCreated: ['app.example.com', 'api.example.com'] };
    const ready = await planJson();
    expect(ready.readiness).toBeUndefined();
    expect(ready.blocked).toEqual([]);
    expect(pending(ready).map((c) => `${c.action} ${c.address}`)).toEqual([
      'create cloud_endpoint.app',
    ]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);
    expect((await live()).endpoints).toEqual(['https://app.example.com']);
  });

  it('--no-wait-for-domains creates the endpoint on a domain that is not ready; a DNS error is shown with the service message', async () => {
    await writeManifests(dir, [DOMAIN]);
    expect((await runCli(['apply', dir, '--yes'], { env })).code).toBe(0);
    server.knobs.dns = { dnsErrors: { 'app.example.com': 'CNAME points elsewhere' } };
    await writeManifests(dir, [DOMAIN, ENDPOINT]);
    const plan = await planJson();
    expect(plan.readiness?.[0]).toMatchObject({ state: 'error' });
    expect(plan.readiness?.[0]?.message).toContain('CNAME points elsewhere');

    const forced = await runCli(['apply', dir, '--yes', '--no-wait-for-domains'], { env });
    expect(forced.code, forced.stderr).toBe(0);
    expect((await live()).endpoints).toEqual(['https://app.example.com']);
  });

  it('a domain reserved by hand serves an endpoint as it is (never re-created); a wildcard covers its names', async () => {
    const client = (await import('./helpers.js')).apiClient(server.url, server.apiKey);
    try {
      await client.createReservedDomain({ domain: 'api.svc.app' });
      await client.createReservedDomain({ domain: '*.example.com' });
    } finally {
      await client.close();
    }
    await writeManifests(dir, [
      { ...ENDPOINT, name: 'api', url: 'https://api.svc.app' },
      { ...ENDPOINT, name: 'shop', url: 'https://shop.example.com' },
    ]);
    const validated = await runCli(['validate', dir], { env });
    expect(validated.code, validated.stderr).toBe(0);
    const plan = await planJson('--no-wait-for-domains');
    expect(pending(plan).map((c) => `${c.action} ${c.address}`)).toEqual([
      'create cloud_endpoint.api',
      'create cloud_endpoint.shop',
    ]);
    const applied = await runCli(['apply', dir, '--yes', '--no-wait-for-domains'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect((await live()).domains.sort()).toEqual(['*.example.com', 'api.svc.app']);
    expect(pending(await planJson())).toEqual([]);
  });

  it('validate: with domains declared, an endpoint host none of them covers is a located error', async () => {
    await writeManifests(dir, [
      DOMAIN,
      { ...ENDPOINT, name: 'other', url: 'https://other.example.org' },
    ]);
    const run = await runCli(['validate', dir], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /cloudendpoint-other-1\.yaml:\d+:\d+: .*url.*other\.example\.org needs a ReservedDomain for other\.example\.org or \*\.example\.org or \*\.org/,
    );
  });
});
