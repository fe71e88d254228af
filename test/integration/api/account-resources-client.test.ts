/**
 * The client's methods for the account resources (reserved domains, certificate authorities,
 * service users) against the real local server over HTTP: each round trip, read shapes
 * validated at the client edge, paginated lists, and refusals surfaced as ApiErrors.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import { ApiError } from '../../../src/errors.js';
import { generateApiKey } from '../../../src/server/index.js';
import { CA_PEM } from '../../helpers/ca-pems.js';
import { startTestServer } from '../../helpers/server.js';

type TestServer = Awaited<ReturnType<typeof startTestServer>>;

let server: TestServer;
const clients: ApiClient[] = [];

beforeAll(async () => {
  server = await startTestServer({ apiKeys: Array.from({ length: 4 }, () => generateApiKey()) });
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  server.knobs.dns = undefined;
  for (const c of clients.splice(0)) await c.close();
});

let nextKey = 0;
function connect(): ApiClient {
  const apiKey = server.apiKeys[nextKey++];
  if (apiKey === undefined) throw new Error('out of API keys');
  const client = createApiClient({ baseUrl: server.url, apiKey, retry: false });
  clients.push(client);
  return client;
}

describe('reserved domains', () => {
  it('create, get, update, readiness, certificate deletes, list over pages, delete', async () => {
    const client = connect();
    const d = await client.createReservedDomain({ domain: 'app.example.com', description: 'app' });
    expect(d).toMatchObject({ domain: 'app.example.com', description: 'app', certificate: null });
    expect(d.cname_target).toMatch(/cname-target/);
    expect(d.certificate_management_status?.provisioning_job?.error_code).toBeNull();
    server.knobs.dns = { cnamesCreated: ['app.example.com'] };
    const ready = await client.getReservedDomain(d.id);
    expect(ready.certificate?.id).toMatch(/^cert_/);
    const updated = await client.updateReservedDomain(d.id, { metadata: '{"a":1}' });
    expect(updated.metadata).toBe('{"a":1}');
    // The policy first: while it holds, a deleted certificate is issued again.
    await client.deleteReservedDomainCertificateManagementPolicy(d.id);
    await client.deleteReservedDomainCertificate(d.id);
    const bare = await client.getReservedDomain(d.id);
    expect([bare.certificate, bare.certificate_management_policy]).toEqual([null, null]);
    for (let i = 0; i < 4; i++) await client.createReservedDomain({ domain: `n${i}.example.com` });
    const listed = await client.listReservedDomains({ pageSize: 2 });
    expect([listed.items.length, listed.calls]).toEqual([5, 3]);
    expect(listed.items.at(-1)?.id).toBe(d.id);
    await client.deleteReservedDomain(d.id);
    const refused = await client
      .createReservedDomain({ domain: 'bad_name.example.com' })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).errorCode).toBe('ERR_SVC_438');
  });

  it('an endpoint on a reserved domain carries its Ref', async () => {
    const client = connect();
    const d = await client.createReservedDomain({ domain: 'web.example.net' });
    const ep = await client.createEndpoint({
      url: 'https://web.example.net',
      traffic_policy: '{"on_http_request":[{"actions":[{"type":"deny"}]}]}',
    });
    expect(ep.domain?.id).toBe(d.id);
  });
});

describe('certificate authorities and service users', () => {
  it('round trips', async () => {
    const client = connect();
    const ca = await client.createCertificateAuthority({ ca_pem: CA_PEM, description: 'corp' });
    expect(ca.subject_common_name).toBe('Corp Root CA');
    expect((await client.getCertificateAuthority(ca.id)).ca_pem).toBe(CA_PEM);
    expect((await client.updateCertificateAuthority(ca.id, { description: 'x' })).description).toBe(
      'x',
    );
    expect((await client.listCertificateAuthorities()).items.map((c) => c.id)).toEqual([ca.id]);
    await client.deleteCertificateAuthority(ca.id);

    const user = await client.createServiceUser({ name: 'ci' });
    expect(user.id).toMatch(/^bot_/);
    expect((await client.updateServiceUser(user.id, { active: false })).active).toBe(false);
    expect((await client.getServiceUser(user.id)).name).toBe('ci');
    expect((await client.listServiceUsers()).items.map((u) => u.id)).toEqual([user.id]);
    expect((await client.listBotUsers()).items.map((u) => u.id)).toEqual([user.id]);
    await client.deleteServiceUser(user.id);
    expect((await client.listServiceUsers()).items).toEqual([]);
  });
});
