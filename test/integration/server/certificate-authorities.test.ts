/**
 * Certificate authorities and service users on the local server over real HTTP
 * (account-resources.md sections 4 and 5): the PEM rules and their codes, the fields read from
 * the certificate, updates of description and metadata only, lists and filters, accounts; and
 * service users as the bot users' records under their successor name.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, type RunningServer } from '../../../src/server/index.js';
import { CA_PEM, LEAF_PEM, PUBLIC_KEY_PEM } from '../../helpers/ca-pems.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let other: Call;

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

const createCa = (ca_pem: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/certificate_authorities', { ca_pem, ...extra });

describe('certificate authorities', () => {
  it('answers the fields of the certificate, and the PEM with a trailing newline', async () => {
    const created = await createCa(CA_PEM.trimEnd(), { description: 'corp' });
    expect(created.status).toBe(201);
    const cert = new X509Certificate(CA_PEM);
    const at = (text: string) => `${new Date(text).toISOString().slice(0, 19)}Z`;
    expect(created.json).toEqual({
      id: expect.stringMatching(/^ca_[0-9A-Za-z]{27}$/),
      uri: `${server.url}/certificate_authorities/${created.json.id}`,
      created_at: expect.any(String),
      description: 'corp',
      ca_pem: CA_PEM,
      subject_common_name: 'Corp Root CA',
      not_before: at(cert.validFrom),
      not_after: at(cert.validTo),
      key_usages: ['digital_signature', 'cert_sign', 'crl_sign'],
      extended_key_usages: ['server_auth', 'client_auth'],
    });
    expect(created.json.ca_pem.endsWith('\n')).toBe(true);
    const got = await call('GET', `/certificate_authorities/${created.json.id}`);
    expect(got.json).toEqual(created.json);
  });

  it.each([
    ['no PEM at all', 'not a certificate', 'ERR_SVC_1919'],
    [
      'a bad header',
      CA_PEM.replace('-----BEGIN CERTIFICATE-----', '----BEGIN CERT-----'),
      'ERR_SVC_1910',
    ],
    ['an END without BEGIN', CA_PEM.replace('-----BEGIN CERTIFICATE-----\n', ''), 'ERR_SVC_1910'],
    ['a BEGIN without END', CA_PEM.replace('-----END CERTIFICATE-----', ''), 'ERR_SVC_1910'],
    ['another type', PUBLIC_KEY_PEM, 'ERR_SVC_1911'],
    ['two blocks', `${CA_PEM}${LEAF_PEM}`, 'ERR_SVC_1912'],
    [
      'a block that is no certificate',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      'ERR_SVC_1920',
    ],
    ['a certificate that is no CA', LEAF_PEM, 'ERR_SVC_1913'],
  ])('%s is refused (%s)', async (_what, pem, code) => {
    const r = await createCa(pem);
    expect([r.status, r.json.error_code], r.text).toEqual([400, code]);
  });

  it('PATCH changes description and metadata only; no field is a 400', async () => {
    const ca = (await createCa(CA_PEM)).json;
    const path = `/certificate_authorities/${ca.id}`;
    const patched = await call('PATCH', path, { metadata: '{"owner":"sec"}' });
    expect([patched.status, patched.json.metadata]).toEqual([200, '{"owner":"sec"}']);
    expect((await call('PATCH', path, { ca_pem: CA_PEM })).json.error_code).toBe('ERR_SVC_214');
    expect((await call('PATCH', path, {})).status).toBe(400);
    expect((await call('PATCH', path, { description: 'x'.repeat(256) })).status).toBe(400);
  });

  it('400 for a malformed ID, 404 for an unknown or another account one; delete', async () => {
    const ca = (await createCa(CA_PEM)).json;
    expect((await call('GET', '/certificate_authorities/ca_x')).status).toBe(400);
    expect((await call('GET', `/certificate_authorities/ca_${'0'.repeat(27)}`)).status).toBe(404);
    expect((await other('GET', `/certificate_authorities/${ca.id}`)).status).toBe(404);
    expect((await call('DELETE', `/certificate_authorities/${ca.id}`)).status).toBe(204);
    expect((await call('GET', `/certificate_authorities/${ca.id}`)).status).toBe(404);
  });

  it('lists newest first, pages, and filters over the filterable fields only', async () => {
    const key = generateApiKey();
    const own = await startTestServer({ apiKeys: [key] });
    try {
      const as = clientFor(own, key);
      const ids: string[] = [];
      for (const d of ['a', 'b', 'c']) {
        ids.push(
          (await as('POST', '/certificate_authorities', { ca_pem: CA_PEM, description: d })).json
            .id,
        );
      }
      const page = await as('GET', '/certificate_authorities?limit=2');
      expect(page.json.certificate_authorities.map((c: { id: string }) => c.id)).toEqual([
        ids[2],
        ids[1],
      ]);
      expect(page.json.next_page_uri).toContain(`before_id=${ids[1]}`);
      const q = (f: string) => `/certificate_authorities?filter=${encodeURIComponent(f)}`;
      const hit = await as(
        'GET',
        q('obj.description == "b" && obj.subject_common_name == "Corp Root CA"'),
      );
      expect(hit.json.certificate_authorities.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
      const refused = await as('GET', q('obj.ca_pem != ""'));
      expect([refused.status, refused.json.error_code]).toEqual([400, 'invalid_cel_expression']);
    } finally {
      await own.close();
    }
  });
});

describe('service users', () => {
  it('are the bot users records under their successor name', async () => {
    const created = await call('POST', '/service_users', { name: 'ci' });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(created.json).toEqual({
      id: expect.stringMatching(/^bot_[0-9A-Za-z]{27}$/),
      uri: `${server.url}/service_users/${id}`,
      name: 'ci',
      active: true,
      created_at: expect.any(String),
    });
    const asBot = await call('GET', `/bot_users/${id}`);
    expect(asBot.json).toMatchObject({ id, name: 'ci', uri: `${server.url}/bot_users/${id}` });
    const list = await call('GET', '/service_users?limit=1');
    expect(Object.keys(list.json)).toEqual(['service_users', 'uri', 'next_page_uri']);
    expect(list.json.service_users[0].id).toBe(id);
    const patched = await call('PATCH', `/service_users/${id}`, { active: false });
    expect(patched.json.active).toBe(false);
    expect((await call('PATCH', `/service_users/${id}`, {})).status).toBe(400);
    expect((await call('GET', '/service_users/bot_1')).status).toBe(400);
    expect((await call('GET', `/service_users/bot_${'0'.repeat(27)}`)).status).toBe(404);
    expect((await other('GET', `/service_users/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/service_users/${id}`)).status).toBe(204);
    expect((await call('GET', `/bot_users/${id}`)).status).toBe(404);
  });
});
