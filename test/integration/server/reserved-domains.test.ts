/**
 * Reserved domains on the local server over real HTTP (account-resources.md section 1): the
 * read shape of custom domains, subdomains of the service's own domains and wildcards, every
 * host-name rule and its code, ownership across accounts, the plan's knobs, updates, the
 * certificate's readiness driven by the `dns` knob, deletes, lists and filters, persistence,
 * and the rules between domains and cloud endpoints (319, 318, 446, the endpoint's `domain`).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, type JournalIo, type RunningServer } from '../../../src/server/index.js';
import { nodeJournalIo } from '../../../src/server/journal.js';
import { CA_PEM } from '../../helpers/ca-pems.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

const POLICY =
  'on_http_request:\n  - actions:\n      - type: forward-internal\n        config: {url: "https://web.internal"}\n';
const TCP_POLICY = JSON.stringify({
  on_tcp_connect: [
    { actions: [{ type: 'forward-internal', config: { url: 'tls://app.internal:443' } }] },
  ],
});

let server: RunningServer & { apiKey: string };
let call: Call;
let other: Call;
let counter = 0;
/** A fresh custom name per test, so tests share one server without colliding. */
const fresh = (parent = 'example.com') => `d${++counter}.${parent}`;

beforeAll(async () => {
  const key = generateApiKey();
  const otherKey = generateApiKey();
  server = await startTestServer({ apiKeys: [key, otherKey] });
  call = clientFor(server, key);
  other = clientFor(server, otherKey);
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.knobs.requireReservedDomains = undefined;
  server.knobs.dns = undefined;
  server.knobs.domainPlan = undefined;
});

const reserve = (domain: string, extra: Record<string, unknown> = {}, as: Call = call) =>
  as('POST', '/reserved_domains', { domain, ...extra });

describe('create and read', () => {
  it('a custom domain: CNAME target, a managed certificate being provisioned', async () => {
    const name = fresh();
    const created = await reserve(name.toUpperCase(), { metadata: '{"team":"web"}' });
    expect(created.status).toBe(201);
    const d = created.json;
    expect(d.id).toMatch(/^rd_[0-9A-Za-z]{27}$/);
    expect(Object.keys(d)).toEqual([
      'id',
      'uri',
      'created_at',
      'domain',
      'region',
      'metadata',
      'cname_target',
      'acme_challenge_cname_target',
      'certificate',
      'certificate_management_policy',
      'certificate_management_status',
      'resolves_to',
    ]);
    expect(d).toMatchObject({
      uri: `${server.url}/reserved_domains/${d.id}`,
      domain: name,
      region: 'global',
      acme_challenge_cname_target: null,
      certificate: null,
      certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' },
      certificate_management_status: {
        renews_at: null,
        provisioning_job: { error_code: null, retries_at: null },
      },
      resolves_to: [{ value: 'global' }],
    });
    expect(d.cname_target).toMatch(/^[0-9a-f]{16}\.[0-9a-f]{10}\.cname-target\.svc\.dev$/);
    expect(d.certificate_management_status.provisioning_job.msg).toContain(d.cname_target);
    expect((await call('GET', `/reserved_domains/${d.id}`)).json).toEqual(d);
  });

  it('a subdomain of the service own domains: no CNAME target, no policy, ready', async () => {
    const d = (await reserve(fresh('svc.app'))).json;
    expect(d).toMatchObject({
      cname_target: null,
      acme_challenge_cname_target: null,
      certificate: null,
      certificate_management_policy: null,
      certificate_management_status: null,
    });
    const refused = await reserve(fresh('svc.dev'), {
      certificate_management_policy: { authority: 'letsencrypt' },
    });
    expect([refused.status, refused.json.error_code]).toEqual([400, 'ERR_SVC_439']);
    const patched = await call('PATCH', `/reserved_domains/${d.id}`, {
      certificate_management_policy: {},
    });
    expect(patched.json.error_code).toBe('ERR_SVC_439');
  });

  it('a wildcard custom domain also names where _acme-challenge must point', async () => {
    const d = (await reserve(`*.${fresh()}`)).json;
    expect(d.acme_challenge_cname_target).toMatch(/^[0-9a-f]{16}\.acme\.cname-target\.svc\.dev$/);
    expect(d.certificate_management_status.provisioning_job.msg).toContain('_acme-challenge.');
  });

  it('an uploaded certificate excludes a policy; rsa keys; no certificate at all', async () => {
    const uploaded = (await reserve(fresh(), { certificate_id: `cert_${'A'.repeat(27)}` })).json;
    expect(uploaded.certificate).toEqual({
      id: `cert_${'A'.repeat(27)}`,
      uri: `${server.url}/tls_certificates/cert_${'A'.repeat(27)}`,
    });
    expect(uploaded.certificate_management_policy).toBeNull();
    const both = await reserve(fresh(), {
      certificate_id: `cert_${'A'.repeat(27)}`,
      certificate_management_policy: {},
    });
    expect([both.status, both.json.error_code]).toEqual([400, 'ERR_SVC_215']);
    const rsa = await reserve(fresh(), {
      certificate_management_policy: { private_key_type: 'rsa' },
    });
    expect(rsa.json.certificate_management_policy.private_key_type).toBe('rsa');
    const none = await reserve(fresh(), { certificate_management_policy: null });
    expect(none.json.certificate_management_policy).toBeNull();
    const wrongPrefix = await reserve(fresh(), { certificate_id: 'ca_1' });
    expect(wrongPrefix.json.error_code).toBe('ERR_SVC_227');
    const badAuthority = await reserve(fresh(), {
      certificate_management_policy: { authority: 'other' },
    });
    expect(badAuthority.json.error_code).toBe('ERR_SVC_215');
  });

  it('description and metadata limits; resolves_to values', async () => {
    const long = await reserve(fresh(), { description: 'é'.repeat(128) });
    expect([long.status, long.json.error_code]).toEqual([400, 'ERR_SVC_215']);
    const meta = await reserve(fresh(), { metadata: 'x'.repeat(4097) });
    expect([meta.status, meta.json.error_code]).toEqual([400, 'ERR_SVC_215']);
    const ok = await reserve(fresh(), { description: 'd'.repeat(255), metadata: 'm'.repeat(4096) });
    expect(ok.status).toBe(201);
    const eu = await reserve(fresh(), { resolves_to: [{ value: 'eu' }] });
    expect(eu.json.resolves_to).toEqual([{ value: 'eu' }]);
    const bad = await reserve(fresh(), { resolves_to: [{ value: 'mars' }] });
    expect(bad.json.error_code).toBe('ERR_SVC_215');
  });
});

describe('host name rules', () => {
  it.each([
    [`${'a'.repeat(64)}.example.com`, 'ERR_SVC_513'],
    [`${'a.'.repeat(126)}example.com`, 'ERR_SVC_514'],
    ['app!.example.com', 'ERR_SVC_406'],
    ['app .example.com', 'ERR_SVC_406'],
    ['-app.example.com', 'ERR_SVC_407'],
    ['.app.example.com', 'ERR_SVC_407'],
    ['app.-x.example.com', 'ERR_SVC_407'],
    ['app-.example.com', 'ERR_SVC_408'],
    ['app.example.com.', 'ERR_SVC_408'],
    ['app..example.com', 'ERR_SVC_409'],
    ['ab--cd.example.com', 'ERR_SVC_410'],
    ['xn--zz.example.com', 'ERR_SVC_429'],
    ['app_1.example.com', 'ERR_SVC_438'],
    ['localhost', 'ERR_SVC_448'],
    ['com', 'ERR_SVC_448'],
    ['co.uk', 'ERR_SVC_448'],
    ['app.test', 'ERR_SVC_411'],
    ['app.internal', 'ERR_SVC_411'],
    ['app.example.c0m', 'ERR_SVC_411'],
    ['app.*.example.com', 'ERR_SVC_402'],
    ['*app.example.com', 'ERR_SVC_403'],
    ['svc.app', 'ERR_SVC_414'],
    ['*.svc.dev', 'ERR_SVC_414'],
  ])('%s is refused with %s', async (name, code) => {
    const r = await reserve(name);
    expect([r.status, r.json.error_code], r.text).toEqual([400, code]);
  });

  it.each(['xn--bcher-kva.example.com', `${'a'.repeat(63)}.example.com`, 'a1-b.co.uk'])(
    '%s is accepted',
    async (name) => {
      expect((await reserve(name)).status).toBe(201);
    },
  );

  it('a wildcard needs a plan that has them (419)', async () => {
    server.knobs.domainPlan = { wildcards: false };
    const r = await reserve(`*.${fresh()}`);
    expect([r.status, r.json.error_code]).toEqual([400, 'ERR_SVC_419']);
  });
});

describe('ownership and limits', () => {
  it('the same name twice in one account is 413; another account holding it or above is 414', async () => {
    const name = fresh();
    expect((await reserve(name)).status).toBe(201);
    expect((await reserve(name)).json.error_code).toBe('ERR_SVC_413');
    expect((await reserve(name, {}, other)).json.error_code).toBe('ERR_SVC_414');
    expect((await reserve(`api.${name}`, {}, other)).json.error_code).toBe('ERR_SVC_414');
    // This account may reserve names below its own.
    expect((await reserve(`api.${name}`)).status).toBe(201);
  });

  it('a wildcard overlapping another account domain is 417', async () => {
    const base = fresh();
    expect((await reserve(`app.${base}`)).status).toBe(201);
    const r = await reserve(`*.${base}`, {}, other);
    expect([r.status, r.json.error_code]).toEqual([400, 'ERR_SVC_417']);
  });

  it('the number of domains (415) and of wildcard domains (418) is limited', async () => {
    const key = generateApiKey();
    const limited = await startTestServer({ apiKeys: [key] });
    try {
      const as = clientFor(limited, key);
      limited.knobs.domainPlan = { maxDomains: 2, maxWildcardDomains: 1 };
      expect((await reserve(`*.${fresh()}`, {}, as)).status).toBe(201);
      expect((await reserve(`*.${fresh()}`, {}, as)).json.error_code).toBe('ERR_SVC_418');
      expect((await reserve(fresh(), {}, as)).status).toBe(201);
      expect((await reserve(fresh(), {}, as)).json.error_code).toBe('ERR_SVC_415');
    } finally {
      await limited.close();
    }
  });
});

describe('update and delete', () => {
  it('PATCH changes description and metadata; domain is not accepted; region cannot change', async () => {
    const d = (await reserve(fresh(), { description: 'before' })).json;
    const path = `/reserved_domains/${d.id}`;
    const patched = await call('PATCH', path, { description: 'after', region: 'global' });
    expect([patched.status, patched.json.description]).toEqual([200, 'after']);
    expect((await call('PATCH', path, { domain: fresh() })).json.error_code).toBe('ERR_SVC_214');
    const region = await call('PATCH', path, { region: 'eu' });
    expect([region.status, region.json.error_code]).toEqual([400, 'ERR_SVC_451']);
    const empty = await call('PATCH', path, {});
    expect([empty.status, empty.json.error_code]).toEqual([400, 'ERR_SVC_215']);
  });

  it('400 for a malformed ID, 404 for an unknown one or another account one', async () => {
    const d = (await reserve(fresh())).json;
    expect((await call('GET', '/reserved_domains/rd_1')).status).toBe(400);
    expect((await call('GET', '/reserved_domains/ep_1')).status).toBe(400);
    expect((await call('GET', `/reserved_domains/rd_${'0'.repeat(27)}`)).status).toBe(404);
    expect((await other('GET', `/reserved_domains/${d.id}`)).status).toBe(404);
    expect((await other('DELETE', `/reserved_domains/${d.id}`)).status).toBe(404);
  });

  it('DELETE gives the name back: anyone may reserve it then', async () => {
    const name = fresh();
    const d = (await reserve(name)).json;
    expect((await call('DELETE', `/reserved_domains/${d.id}`)).status).toBe(204);
    expect((await call('GET', `/reserved_domains/${d.id}`)).status).toBe(404);
    expect((await reserve(name, {}, other)).status).toBe(201);
  });

  it('DELETE of the certificate and of the certificate management policy', async () => {
    const d = (await reserve(fresh(), { certificate_id: `cert_${'B'.repeat(27)}` })).json;
    const path = `/reserved_domains/${d.id}`;
    expect((await call('DELETE', `${path}/certificate`)).status).toBe(204);
    expect((await call('GET', path)).json.certificate).toBeNull();
    const managed = (await reserve(fresh())).json;
    const mpath = `/reserved_domains/${managed.id}`;
    expect((await call('DELETE', `${mpath}/certificate_management_policy`)).status).toBe(204);
    const after = (await call('GET', mpath)).json;
    expect([after.certificate_management_policy, after.certificate_management_status]).toEqual([
      null,
      null,
    ]);
    // And a policy set again provisions again.
    const again = await call('PATCH', mpath, { certificate_management_policy: {} });
    expect(again.json.certificate_management_status.provisioning_job.error_code).toBeNull();
  });
});

describe('readiness (the dns knob)', () => {
  it('the certificate is issued once the CNAME record exists; a DNS error shows meanwhile', async () => {
    const name = fresh();
    const d = (await reserve(name)).json;
    const path = `/reserved_domains/${d.id}`;
    server.knobs.dns = { dnsErrors: { [name]: 'CNAME points to the wrong host' } };
    const broken = (await call('GET', path)).json.certificate_management_status;
    expect(broken.provisioning_job).toMatchObject({
      error_code: 'DNS_ERROR',
      msg: 'CNAME points to the wrong host',
    });
    expect(broken.provisioning_job.retries_at).toEqual(expect.any(String));
    server.knobs.dns = { cnamesCreated: [name] };
    const ready = (await call('GET', path)).json;
    expect(ready.certificate.id).toMatch(/^cert_[0-9A-Za-z]{27}$/);
    expect(ready.certificate_management_status).toBeNull();
    // Issued once: the same certificate on the next read.
    expect((await call('GET', path)).json.certificate.id).toBe(ready.certificate.id);
  });

  it('with every CNAME created a new domain is ready at once; lists show it', async () => {
    server.knobs.dns = { cnamesCreated: 'all' };
    const name = fresh();
    const d = (await reserve(name)).json;
    expect(d.certificate.id).toMatch(/^cert_/);
    const listed = await call(
      'GET',
      `/reserved_domains?filter=${encodeURIComponent(`obj.domain == "${name}"`)}`,
    );
    expect(listed.json.reserved_domains[0].certificate.id).toBe(d.certificate.id);
  });

  it.each([
    ['the log', undefined],
    ['a snapshot', 1],
  ])('survives a restart, read back from %s (persistence)', async (_from, compactBytes) => {
    const dir = await mkdtemp(join(tmpdir(), 'edgesync-domains-'));
    const key = generateApiKey();
    const options = {
      apiKeys: [key],
      dataDir: dir,
      ...(compactBytes === undefined ? {} : { compactBytes }),
    };
    try {
      const first = await startTestServer(options);
      const as = clientFor(first, key);
      const name = fresh();
      const d = (await reserve(name, {}, as)).json;
      first.knobs.dns = { cnamesCreated: [name] };
      const ready = (await as('GET', `/reserved_domains/${d.id}`)).json;
      const ca = (await as('POST', '/certificate_authorities', { ca_pem: CA_PEM })).json;
      const ep = (
        await as('POST', '/endpoints', { url: `https://${name}`, traffic_policy: POLICY })
      ).json;
      await first.close();
      expect((await readdir(dir)).includes('snapshot.json')).toBe(compactBytes !== undefined);
      const second = await startTestServer(options);
      const again = clientFor(second, key);
      // Another port after the restart: the URIs differ, nothing else.
      const local = (v: unknown, url: string) => JSON.parse(JSON.stringify(v).replaceAll(url, ''));
      const domainAfter = (await again('GET', `/reserved_domains/${d.id}`)).json;
      expect(local(domainAfter, second.url)).toEqual(local(ready, first.url));
      expect(domainAfter.certificate.id).toMatch(/^cert_/);
      const caAfter = (await again('GET', `/certificate_authorities/${ca.id}`)).json;
      expect(local(caAfter, second.url)).toEqual(local(ca, first.url));
      expect((await again('GET', `/endpoints/${ep.id}`)).json.domain.id).toBe(d.id);
      expect((await again('DELETE', `/reserved_domains/${d.id}`)).json.error_code).toBe(
        'ERR_SVC_446',
      );
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('on a full disk: a lost create is undone, a read that would issue the certificate waits for a disk that works', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgesync-domains-'));
    const key = generateApiKey();
    let full = false;
    const io: JournalIo = {
      write: (fh, buffer, offset, length, position) => {
        if (full) return Promise.reject(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }));
        return nodeJournalIo.write(fh, buffer, offset, length, position);
      },
      sync: (fh) => nodeJournalIo.sync(fh),
    };
    const own = await startTestServer({ apiKeys: [key], dataDir: dir, journalIo: io });
    try {
      const as = clientFor(own, key);
      const name = fresh();
      full = true;
      const lost = await reserve(name, {}, as);
      expect([lost.status, lost.json.error_code]).toEqual([503, 'ERR_SVC_503']);
      expect((await as('GET', '/reserved_domains')).json.reserved_domains).toEqual([]);
      full = false;
      const d = (await reserve(name, {}, as)).json;
      own.knobs.dns = { cnamesCreated: [name] };
      full = true;
      expect((await as('GET', `/reserved_domains/${d.id}`)).status).toBe(503);
      full = false;
      const ready = (await as('GET', `/reserved_domains/${d.id}`)).json;
      expect(ready.certificate.id).toMatch(/^cert_/);
    } finally {
      await own.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('lists', () => {
  it('newest first, paged with before_id and limit, filtered over the filterable fields', async () => {
    const key = generateApiKey();
    const own = await startTestServer({ apiKeys: [key] });
    try {
      const as = clientFor(own, key);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await reserve(`n${i}.example.org`, {}, as)).json.id);
      const first = await as('GET', '/reserved_domains?limit=2');
      expect(first.json.reserved_domains.map((d: { id: string }) => d.id)).toEqual([
        ids[4],
        ids[3],
      ]);
      expect(first.json.uri).toBe(`${own.url}/reserved_domains`);
      expect(first.json.next_page_uri).toBe(
        `${own.url}/reserved_domains?before_id=${ids[3]}&limit=2`,
      );
      const last = await as('GET', `/reserved_domains?before_id=${ids[1]}&limit=2`);
      expect(last.json.reserved_domains.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
      expect(last.json.next_page_uri).toBeNull();
      const q = (f: string) => `/reserved_domains?filter=${encodeURIComponent(f)}`;
      const hit = await as('GET', q('obj.domain == "n2.example.org" || obj.certificate.id == "x"'));
      expect(hit.json.reserved_domains.map((d: { id: string }) => d.id)).toEqual([ids[2]]);
      const other = await as('GET', q('obj.resolves_to == null'));
      expect([other.status, other.json.error_code]).toEqual([400, 'invalid_cel_expression']);
      const certificate = await as('GET', q('obj.certificate == null'));
      expect(certificate.json.error_code).toBe('invalid_cel_expression');
      const bare = await as('GET', q('size(obj) > 0'));
      expect(bare.json.error_code).toBe('invalid_cel_expression');
      const broken = await as('GET', q('obj.domain =='));
      expect(broken.json.error_code).toBe('invalid_cel_expression');
      expect((await as('GET', '/reserved_domains?before_id=ep_1')).json.error_code).toBe(
        'ERR_SVC_227',
      );
    } finally {
      await own.close();
    }
  });
});

describe('cloud endpoints and reserved domains', () => {
  const endpoint = (url: string, extra: Record<string, unknown> = {}, as: Call = call) =>
    as('POST', '/endpoints', { url, traffic_policy: POLICY, ...extra });

  it('by default an endpoint needs no domain, and carries the one it matches', async () => {
    const bare = await endpoint(`https://${fresh()}`);
    expect(bare.status).toBe(201);
    expect(bare.json.domain).toBeUndefined();
    const name = fresh();
    const d = (await reserve(name)).json;
    const on = await endpoint(`https://${name}`);
    expect(on.json.domain).toEqual({ id: d.id, uri: `${server.url}/reserved_domains/${d.id}` });
  });

  it('with requireReservedDomains, a public http/https/tls endpoint needs one (319, 318)', async () => {
    server.knobs.requireReservedDomains = true;
    const name = fresh();
    const missing = await endpoint(`https://${name}`);
    expect([missing.status, missing.json.error_code]).toEqual([400, 'ERR_SVC_319']);
    const tls = await endpoint(`tls://${name}:443`, { traffic_policy: TCP_POLICY });
    expect(tls.json.error_code).toBe('ERR_SVC_319');
    const wildcardHost = await endpoint(`https://*.${name}`);
    expect(wildcardHost.json.error_code).toBe('ERR_SVC_318');
    // Internal, kubernetes and tcp endpoints need none.
    expect((await endpoint(`https://d${++counter}.internal`)).status).toBe(201);
    const tcp = await endpoint(`tcp://${fresh()}:5432`, {
      traffic_policy: TCP_POLICY.replace('tls://app.internal:443', 'tcp://db.internal:5432'),
    });
    expect(tcp.status, tcp.text).toBe(201);
    // A wildcard domain serves every name below it; the exact name wins over it.
    const wildcard = (await reserve(`*.${name}`)).json;
    const below = await endpoint(`https://a.b.${name}`);
    expect([below.status, below.json.domain.id]).toEqual([201, wildcard.id]);
    expect((await endpoint(`https://*.${name}`)).json.domain.id).toBe(wildcard.id);
    const exact = (await reserve(`a.${name}`)).json;
    expect((await endpoint(`https://a.${name}`)).json.domain.id).toBe(exact.id);
    // Another account's domain does not count.
    const theirs = fresh();
    await reserve(theirs, {}, other);
    expect((await endpoint(`https://${theirs}`)).json.error_code).toBe('ERR_SVC_319');
    // A subdomain of the service's own domains needs its reservation too.
    const svc = fresh('svc.app');
    expect((await endpoint(`https://${svc}`)).json.error_code).toBe('ERR_SVC_319');
    await reserve(svc);
    expect((await endpoint(`https://${svc}`)).status).toBe(201);
  });

  it('an update moving an endpoint to an unreserved host is refused; to a reserved one relinks', async () => {
    server.knobs.requireReservedDomains = true;
    const [a, b] = [fresh(), fresh()];
    const da = (await reserve(a)).json;
    const ep = (await endpoint(`https://${a}`)).json;
    const moved = await call('PATCH', `/endpoints/${ep.id}`, { url: `https://${b}` });
    expect(moved.json.error_code).toBe('ERR_SVC_319');
    const db = (await reserve(b)).json;
    const relinked = await call('PATCH', `/endpoints/${ep.id}`, { url: `https://${b}` });
    expect(relinked.json.domain.id).toBe(db.id);
    // The first domain is free again.
    expect((await call('DELETE', `/reserved_domains/${da.id}`)).status).toBe(204);
  });

  it('a domain an endpoint or an edge still uses cannot be deleted (446)', async () => {
    const name = fresh();
    const d = (await reserve(name)).json;
    const ep = (await endpoint(`https://${name}`)).json;
    const refused = await call('DELETE', `/reserved_domains/${d.id}`);
    expect([refused.status, refused.json.error_code]).toEqual([400, 'ERR_SVC_446']);
    expect(refused.json.msg).toContain(ep.id);
    expect((await call('DELETE', `/endpoints/${ep.id}`)).status).toBe(204);
    const edgeName = fresh();
    const wildcard = (await reserve(`*.${edgeName}`)).json;
    const edge = await call('POST', '/edges/https', { hostports: [`www.${edgeName}:443`] });
    expect(edge.status).toBe(201);
    const byEdge = await call('DELETE', `/reserved_domains/${wildcard.id}`);
    expect([byEdge.status, byEdge.json.error_code]).toEqual([400, 'ERR_SVC_446']);
    expect((await call('DELETE', `/edges/https/${edge.json.id}`)).status).toBe(204);
    expect((await call('DELETE', `/reserved_domains/${wildcard.id}`)).status).toBe(204);
    expect((await call('DELETE', `/reserved_domains/${d.id}`)).status).toBe(204);
  });
});
