/**
 * Property tests for the account resources' writes (reserved domains, certificate
 * authorities, service users): random JSON, random text, and valid bodies with one value
 * replaced never get a 5xx or an answer without the API's error body; random filters never do
 * either.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { CA_PEM } from '../../helpers/ca-pems.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let targets: Array<{ method: string; path: string; valid: Record<string, unknown> }>;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  const domain = (await call('POST', '/reserved_domains', { domain: 'fuzz.example.com' })).json.id;
  const ca = (await call('POST', '/certificate_authorities', { ca_pem: CA_PEM })).json.id;
  const user = (await call('POST', '/service_users', { name: 'u' })).json.id;
  targets = [
    {
      method: 'POST',
      path: '/reserved_domains',
      valid: {
        domain: '*.fuzzed.example.org',
        description: 'd',
        certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'rsa' },
        resolves_to: [{ value: 'eu' }],
      },
    },
    {
      method: 'PATCH',
      path: `/reserved_domains/${domain}`,
      valid: { metadata: 'm', certificate_id: `cert_${'A'.repeat(27)}`, region: 'global' },
    },
    { method: 'POST', path: '/certificate_authorities', valid: { ca_pem: CA_PEM, metadata: 'm' } },
    { method: 'PATCH', path: `/certificate_authorities/${ca}`, valid: { description: 'x' } },
    { method: 'POST', path: '/service_users', valid: { name: 'x', active: false } },
    { method: 'PATCH', path: `/service_users/${user}`, valid: { active: true } },
  ];
});
afterAll(async () => {
  await server.close();
});

async function expectWellFormed(method: string, path: string, raw?: string): Promise<void> {
  const r = await call(method, path, undefined, raw === undefined ? {} : { raw });
  expect(
    r.status,
    `${method} ${path} ${raw?.slice(0, 200)} -> ${r.text.slice(0, 300)}`,
  ).toBeLessThan(500);
  if (r.status >= 400) {
    expect(r.json).toMatchObject({ status_code: r.status, msg: expect.any(String) });
    expect(r.json.error_code).toMatch(/^(ERR_SVC_\d+|invalid_cel_expression)$/);
  }
}

const target = () =>
  fc.integer({ min: 0, max: 5 }).map((i) => targets[i] as (typeof targets)[number]);

it('random JSON values and text never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(
      target(),
      fc.oneof(
        fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'),
        fc.string({ unit: 'binary', maxLength: 120 }),
      ),
      async (t, raw) => expectWellFormed(t.method, t.path, raw),
    ),
    { numRuns: 150 },
  );
});

it('valid bodies with one field replaced never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(target(), fc.nat(), fc.jsonValue({ maxDepth: 2 }), async (t, i, value) => {
      const keys = Object.keys(t.valid);
      const key = keys[i % keys.length] as string;
      await expectWellFormed(t.method, t.path, JSON.stringify({ ...t.valid, [key]: value }));
    }),
    { numRuns: 150 },
  );
});

it('random filters never produce a 5xx', async () => {
  const field = fc.constantFrom('domain', 'certificate.id', 'region', 'ca_pem', 'nope', 'id');
  const filter = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc
      .tuple(field, fc.string({ maxLength: 10 }))
      .map(([f, v]) => `obj.${f} == ${JSON.stringify(v)}`),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('/reserved_domains', '/certificate_authorities'),
      filter,
      async (path, f) => expectWellFormed('GET', `${path}?filter=${encodeURIComponent(f)}`),
    ),
    { numRuns: 150 },
  );
});
