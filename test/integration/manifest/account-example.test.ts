/**
 * config-examples/account/: a realistic account (reserved domains, an IP policy with its rules,
 * a vault secret that `verify-webhook` reads, a certificate authority for mutual TLS, and the
 * cloud endpoints naming them) validates and converges in one apply against the local server,
 * the next plan empty, the CA created before the endpoint that names it.
 *
 * The kinds are registered one by one: a file declaring a kind this build does not register, or
 * whose policy names one (`{ ref: office }` in `restrict-ips` before IPPolicy is), is set aside
 * by `--exclude` and listed; the rest must be whole. Once every kind is registered nothing is
 * set aside and the whole directory is held to it.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KINDS, kindOfManifest } from '../../../src/kinds/index.js';
import { policyReferences } from '../../../src/kinds/own-planners.js';
import { formatDiagnostic } from '../../../src/manifest/diagnostics.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { startTestServer } from '../../helpers/server.js';
import { acting, applyDir, recordingClient } from '../kinds/helpers.js';

const dir = path.resolve(import.meta.dirname, '../../../config-examples/account');
const env = {
  GITHUB_WEBHOOK_SECRET: 'example-github-webhook-secret',
  EDGESYNC_SECRET_DIGEST_KEY: 'example-digest-key-of-this-test',
};

/** The files that need a kind this build does not register (declared, or named in a policy). */
async function waitingForKinds(): Promise<string[]> {
  const registered = new Set(KINDS.map((k) => k.kind));
  const out: string[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    const docs = parseAllDocuments(await readFile(path.join(dir, file), 'utf8'));
    const waits = (Array.isArray(docs) ? docs : [docs]).some((doc) => {
      const value = doc.toJS() as { kind?: string; traffic_policy?: unknown } | null;
      if (kindOfManifest(String(value?.kind)) === undefined) return true;
      return policyReferences(value?.traffic_policy).some((r) => !registered.has(r.kind));
    });
    if (waits) out.push(file);
  }
  return out;
}

describe('config-examples/account', () => {
  let exclude: string[];
  beforeAll(async () => {
    exclude = await waitingForKinds();
  });

  it('declares every kind of the account, and validates (with its secret in the environment)', async () => {
    const all = (await readdir(dir)).filter((f) => f.endsWith('.yaml'));
    const kinds = new Set<string>();
    for (const file of all) {
      for (const doc of parseAllDocuments(await readFile(path.join(dir, file), 'utf8')) as {
        toJS(): { kind: string };
      }[])
        kinds.add(doc.toJS().kind);
    }
    expect([...kinds].sort()).toEqual([
      'CertificateAuthority',
      'CloudEndpoint',
      'IPPolicy',
      'ReservedDomain',
      'Secret',
      'Vault',
    ]);
    // What this build can read is whole: the certificate authority and the endpoints on it.
    expect(exclude).not.toContain('corp-ca.yaml');
    expect(exclude).not.toContain('partners.yaml');
    const result = await loadManifests(dir, { env, exclude });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([]);
  });

  describe('against the local server', () => {
    let server: Awaited<ReturnType<typeof startTestServer>>;
    beforeAll(async () => {
      server = await startTestServer();
    });
    afterAll(async () => {
      await server.close();
    });

    it('converges in one apply, what others refer to first, and the next plan is empty', async () => {
      const { client, calls } = recordingClient(server.url, server.apiKey);
      try {
        const first = await applyDir(client, dir, { env, exclude });
        expect(first.outcome.converged).toBe(true);
        expect(acting(first.next)).toEqual([]);
        // Creates only, and the PATCH recording the actor the first secret's answer named.
        expect(calls.filter((c) => !/^POST .* 201$/.test(c))).toEqual([
          'PATCH /vault_secrets/{id} 200',
        ]);
        const ca = calls.indexOf('POST /certificate_authorities 201');
        expect(ca).toBeGreaterThanOrEqual(0);
        expect(calls.lastIndexOf('POST /endpoints 201')).toBeGreaterThan(ca);
        const partners = first.after.cloudEndpoints.find(
          (e) => e.url === 'https://partners.example.com',
        );
        const caId = first.after.resources?.certificate_authority?.[0]?.id as string;
        expect(partners?.traffic_policy).toContain(caId);
      } finally {
        await client.close();
      }
    });
  });
});
