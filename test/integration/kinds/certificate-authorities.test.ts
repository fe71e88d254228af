/**
 * Certificate authorities against the local server over HTTP, through the real loader and
 * executor: a CA (its PEM from a file) and a cloud endpoint whose `terminate-tls` names it by
 * `{ ref: corp-ca }` converge in one apply, the CA's POST before the endpoint's and the
 * endpoint's policy carrying the CA's ID; the next plan is empty; removing both deletes the
 * endpoint before the CA. The server takes a `ca_` ID in a policy whether or not it names a CA
 * of the account (the specification asks no check there, unlike an IP policy's 2216).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ApiClient } from '../../../src/api/index.js';
import type { RunningServer } from '../../../src/server/index.js';
import { CA_PEM, OTHER_CA_PEM } from '../../helpers/ca-pems.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir } from '../apply/helpers.js';
import { acting, applyDir, recordingClient } from './helpers.js';

const CA = { kind: 'CertificateAuthority', name: 'corp-ca', ca_pem: { file: 'corp-ca.pem' } };

const mtlsEndpoint = (authorities: unknown[]) => ({
  kind: 'CloudEndpoint',
  name: 'app',
  url: 'tls://mtls.example.com:443',
  traffic_policy: {
    on_tcp_connect: [
      {
        actions: [
          {
            type: 'terminate-tls',
            config: { mutual_tls_certificate_authorities: authorities },
          },
          { type: 'forward-internal', config: { url: 'tls://app.internal:443' } },
        ],
      },
    ],
  },
});

let server: RunningServer & { apiKey: string };
let client: ApiClient;
let calls: string[];
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  server = await startTestServer();
  ({ client, calls } = recordingClient(server.url, server.apiKey));
  tmp = await tempDir('edgesync-ca-');
});
afterEach(async () => {
  await client.close();
  await server.close();
  await tmp.cleanup();
});

async function write(docs: readonly object[]): Promise<string> {
  const dir = path.join(tmp.dir, 'manifests');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'corp-ca.pem'), CA_PEM);
  await writeFile(path.join(dir, 'account.yaml'), docs.map((d) => stringify(d)).join('---\n'));
  return dir;
}

const apply = (dir: string) => applyDir(client, dir);

describe('certificate authorities over HTTP', () => {
  it('a CA and the endpoint naming it by ref converge in one apply, CA first; removal deletes the endpoint first', async () => {
    const dir = await write([CA, mtlsEndpoint([{ ref: 'corp-ca' }])]);
    const first = await apply(dir);
    expect(acting(first.plan)).toEqual([
      'create certificate_authority.corp-ca',
      'create cloud_endpoint.app',
    ]);
    expect(first.outcome.converged).toBe(true);
    expect(calls).toEqual(['POST /certificate_authorities 201', 'POST /endpoints 201']);
    const ca = first.after.resources?.certificate_authority?.[0];
    expect(ca?.id).toMatch(/^ca_/);
    const endpoint = first.after.cloudEndpoints[0];
    expect(JSON.parse(endpoint?.traffic_policy ?? '{}')).toMatchObject({
      on_tcp_connect: [
        {
          actions: [
            { type: 'terminate-tls', config: { mutual_tls_certificate_authorities: [ca?.id] } },
            {},
          ],
        },
      ],
    });
    expect(acting(first.next)).toEqual([]);

    calls.length = 0;
    const again = await apply(dir);
    expect(acting(again.plan)).toEqual([]);
    expect(calls).toEqual([]);

    // Another endpoint stays: an empty directory is refused (--allow-empty), a guard of its own.
    const other = { ...mtlsEndpoint(['ca_2other']), name: 'other', url: 'tls://o.example.com:443' };
    const removed = await apply(await write([other]));
    expect(acting(removed.plan)).toEqual([
      'delete certificate_authority.corp-ca',
      'delete cloud_endpoint.app',
      'create cloud_endpoint.other',
    ]);
    expect(calls).toEqual([
      'POST /endpoints 201',
      'DELETE /endpoints/{id} 204',
      'DELETE /certificate_authorities/{id} 204',
    ]);
    expect(removed.after.cloudEndpoints.map((e) => e.url)).toEqual(['tls://o.example.com:443']);
    expect(removed.after.resources?.certificate_authority).toEqual([]);
  });

  it('an endpoint moving to a new CA gets the new one first, and the old one goes after', async () => {
    const dir = await write([{ ...CA, name: 'old-ca' }, mtlsEndpoint([{ ref: 'old-ca' }])]);
    await apply(dir);
    calls.length = 0;
    const moved = await apply(await write([CA, mtlsEndpoint([{ ref: 'corp-ca' }])]));
    expect(moved.outcome.converged).toBe(true);
    expect(calls).toEqual([
      'POST /certificate_authorities 201',
      'PATCH /endpoints/{id} 200',
      'DELETE /certificate_authorities/{id} 204',
    ]);
    expect(acting(moved.next)).toEqual([]);
  });

  it('a new PEM replaces the CA and re-points the endpoint in the same apply', async () => {
    const dir = await write([CA, mtlsEndpoint([{ ref: 'corp-ca' }])]);
    const first = await apply(dir);
    const oldId = first.after.resources?.certificate_authority?.[0]?.id;
    await writeFile(path.join(dir, 'corp-ca.pem'), OTHER_CA_PEM);
    calls.length = 0;
    const replaced = await apply(dir);
    expect(acting(replaced.plan)).toEqual([
      'replace certificate_authority.corp-ca',
      'update cloud_endpoint.app',
    ]);
    expect(replaced.outcome.converged).toBe(true);
    expect(calls).toEqual([
      'DELETE /certificate_authorities/{id} 204',
      'POST /certificate_authorities 201',
      'PATCH /endpoints/{id} 200',
    ]);
    const newId = replaced.after.resources?.certificate_authority?.[0]?.id as string;
    expect(newId).not.toBe(oldId);
    expect(replaced.after.cloudEndpoints[0]?.traffic_policy).toContain(newId);
    expect(acting(replaced.next)).toEqual([]);
  });

  it('the server takes a ca_ ID in a policy, of a CA of the account or not', async () => {
    const ca = await client.createCertificateAuthority({ ca_pem: CA_PEM });
    for (const [i, id] of [ca.id, 'ca_2unknownunknownunknown0000'].entries()) {
      const created = await client.createEndpoint({
        url: `tls://ca${i}.example.com:443`,
        traffic_policy: JSON.stringify(mtlsEndpoint([id]).traffic_policy),
      });
      expect(created.traffic_policy).toContain(id);
    }
  });
});
