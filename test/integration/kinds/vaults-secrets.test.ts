/**
 * Vaults and secrets against the local server over HTTP, through the real loader and executor:
 * a Vault, a Secret (its value from the environment) and a cloud endpoint whose verify-webhook
 * reads it with `${secrets.get('webhooks', 'github_hook')}` converge in one apply in that order;
 * the next plan writes nothing (the value compared through its keyed digest); a new value is
 * one PATCH; removal deletes the endpoint, then the secret, then the vault.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ApiClient, createApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { importLive } from '../../../src/apply/import.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { writerStamps } from '../../../src/plan/index.js';
import { maskPlan } from '../../../src/plan/mask.js';
import { buildPlan } from '../../../src/plan/plan.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir } from '../apply/helpers.js';

const KEY = 'k3-test-digest-key-0123456789';
const VALUE = 'whsec-first-value-4711';

const VAULT = { kind: 'Vault', name: 'webhooks', description: 'webhook secrets' };
const SECRET = {
  kind: 'Secret',
  name: 'github_hook',
  vault: 'webhooks',
  value: { env: 'GITHUB_WEBHOOK_SECRET' },
};
const ENDPOINT = {
  kind: 'CloudEndpoint',
  name: 'app',
  url: 'https://app.example.com',
  traffic_policy: {
    on_http_request: [
      {
        actions: [
          {
            type: 'verify-webhook',
            config: { provider: 'github', secret: "${secrets.get('webhooks', 'github_hook')}" },
          },
          { type: 'forward-internal', config: { url: 'https://app.internal' } },
        ],
      },
    ],
  },
};

let server: RunningServer & { apiKey: string };
let client: ApiClient;
let calls: string[];
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  server = await startTestServer();
  calls = [];
  client = createApiClient({
    baseUrl: server.url,
    apiKey: server.apiKey,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    onResponse: (r) => {
      if (r.method !== 'GET') calls.push(`${r.method} ${r.route} ${r.status}`);
    },
  });
  tmp = await tempDir('edgesync-secrets-');
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
  await writeFile(path.join(dir, 'account.yaml'), docs.map((d) => stringify(d)).join('---\n'));
  return dir;
}

/** One apply of the directory, as `apply --yes` runs it: plan, execute, observe, plan again. */
async function apply(dir: string, value = VALUE, options: { allowEmpty?: boolean } = {}) {
  const env = { GITHUB_WEBHOOK_SECRET: value, EDGESYNC_SECRET_DIGEST_KEY: KEY };
  const loaded = await loadManifests(dir, { env });
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
  const desired = loaded.set;
  const live = await observe(client);
  const plan = buildPlan(desired, live, options);
  calls.length = 0;
  const outcome = await applyAndVerify(plan, {
    client,
    live,
    stamp: writerStamps(desired, plan.owner),
    replan: async () => {
      const again = await observe(client);
      return { live: again, plan: buildPlan(desired, again, options) };
    },
  });
  const after = await observe(client);
  return { plan, outcome, next: buildPlan(desired, after, options), after };
}

const acting = (plan: { changes: readonly { action: string; address: string }[] }) =>
  plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.address}`);

describe('vaults and secrets over HTTP', () => {
  it('converge with the endpoint reading the secret in one apply, in order; an unchanged value costs nothing, a new one one PATCH; removal deletes in reverse', async () => {
    const dir = await write([VAULT, SECRET, ENDPOINT]);
    const first = await apply(dir);
    expect(acting(first.plan)).toEqual([
      'create cloud_endpoint.app',
      'create secret.github_hook',
      'create vault.webhooks',
    ]);
    expect(first.outcome.converged).toBe(true);
    // The secret's first write learns the actor from its answer and records it beside the digest.
    expect(calls).toEqual([
      'POST /vaults 201',
      'POST /vault_secrets 201',
      'PATCH /vault_secrets/{id} 200',
      'POST /endpoints 201',
    ]);
    const secret = first.after.resources?.secret?.[0];
    expect(secret?.vault_name).toBe('webhooks');
    expect(JSON.stringify(secret)).not.toContain(VALUE);
    expect(String(secret?.metadata)).toContain('edgesync/digest');
    expect(acting(first.next)).toEqual([]);

    // The plan as shown: neither the value nor the key.
    const shown = JSON.stringify(maskPlan(first.plan, []));
    expect(shown).not.toContain(VALUE);
    expect(shown).not.toContain(KEY);

    // The same value again: no write at all.
    const again = await apply(dir);
    expect(acting(again.plan)).toEqual([]);
    expect(calls).toEqual([]);

    // A new value in the environment: one PATCH (value and the new digest).
    const changed = await apply(dir, 'whsec-second-value-815');
    expect(acting(changed.plan)).toEqual(['update secret.github_hook']);
    expect(calls).toEqual(['PATCH /vault_secrets/{id} 200']);
    const patch = changed.plan.changes.find((c) => c.action === 'update')?.operations[0]
      ?.body as Record<string, unknown>;
    expect(Object.keys(patch).sort()).toEqual(['metadata', 'value']);
    expect(JSON.stringify(maskPlan(changed.plan, []))).not.toContain('whsec-second-value-815');
    expect(acting(changed.next)).toEqual([]);

    // Removal: the endpoint and the secret pruned, the vault (never pruned) by ensure: absent.
    const removed = await apply(await write([{ ...VAULT, ensure: 'absent' }]), 'unused', {
      allowEmpty: true,
    });
    expect(acting(removed.plan)).toEqual([
      'delete cloud_endpoint.app',
      'delete secret.github_hook',
      'delete vault.webhooks',
    ]);
    expect(calls).toEqual([
      'DELETE /endpoints/{id} 204',
      'DELETE /vault_secrets/{id} 204',
      'DELETE /vaults/{id} 204',
    ]);
    expect(removed.outcome.converged).toBe(true);
  });

  it('imports the vault and the secret, its value an { env } reference to fill in; the import plans empty', async () => {
    const first = await apply(await write([VAULT, SECRET]));
    const imported = importLive(first.after, { owner: 'default', schemaUrl: 'schema.json' });
    const byKind = Object.fromEntries(imported.files.map((f) => [f.kind, f.text]));
    expect(byKind.Vault).toContain('name: webhooks');
    expect(byKind.Secret).toContain('vault: webhooks');
    expect(imported.secrets).toEqual([
      { env: expect.any(String), address: 'secret.github_hook', path: 'value' },
    ]);
    const env = imported.secrets[0]?.env as string;
    expect(byKind.Secret).toContain(`value:\n  env: ${env}`);
    expect(byKind.Secret).not.toContain('digest');
    const dir = path.join(tmp.dir, 'imported');
    await mkdir(dir, { recursive: true });
    for (const f of imported.files) await writeFile(path.join(dir, f.file), f.text);
    const loaded = await loadManifests(dir, {
      env: { [env]: VALUE, EDGESYNC_SECRET_DIGEST_KEY: KEY },
    });
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    expect(acting(buildPlan(loaded.set, await observe(client)))).toEqual([]);
  });

  it.each([
    [
      'an inline value',
      { ...SECRET, value: 'inline-secret' },
      { EDGESYNC_SECRET_DIGEST_KEY: KEY },
      'Secret value must come from { env: NAME } or { file: PATH }, never written inline',
    ],
    [
      'no digest key',
      SECRET,
      { GITHUB_WEBHOOK_SECRET: VALUE },
      "no secret digest key is given: a Secret's value is never read back and is compared through a keyed digest; set EDGESYNC_SECRET_DIGEST_KEY",
    ],
    [
      'no value',
      { kind: 'Secret', name: 'github_hook', vault: 'webhooks' },
      { EDGESYNC_SECRET_DIGEST_KEY: KEY },
      'Secret value is required (from { env: NAME } or { file: PATH }) unless ensure: absent',
    ],
    [
      'a short digest key',
      SECRET,
      { GITHUB_WEBHOOK_SECRET: VALUE, EDGESYNC_SECRET_DIGEST_KEY: 'short' },
      'the secret digest key is shorter than 16 characters',
    ],
    [
      'the digest key read by a manifest',
      { ...SECRET, value: { env: 'EDGESYNC_SECRET_DIGEST_KEY' } },
      { EDGESYNC_SECRET_DIGEST_KEY: KEY },
      'the secret digest key',
    ],
  ])("refuses %s at the secret's value, naming no secret", async (_, doc, env, message) => {
    const loaded = await loadManifests(await write([VAULT, doc]), { env });
    expect(loaded.ok).toBe(false);
    const found = loaded.diagnostics.find((d) => d.message.includes(message));
    expect(found?.path).toBe('value');
    expect(found?.file).toBe('account.yaml');
    // The value (the Vault is lines 1-3, `---` line 4; `value:` line 8, a reference's mapping
    // under it), or the document's start when absent.
    const value = (doc as { value?: unknown }).value;
    expect(found?.line).toBe(value === undefined ? 5 : typeof value === 'string' ? 8 : 9);
    const all = JSON.stringify(loaded.diagnostics);
    for (const secretText of [VALUE, KEY, 'inline-secret']) expect(all).not.toContain(secretText);
  });

  const reading = (vault: string, name: string) => ({
    ...ENDPOINT,
    traffic_policy: {
      on_http_request: [
        {
          actions: [
            {
              type: 'verify-webhook',
              config: { provider: 'github', secret: `\${secrets.get('${vault}', '${name}')}` },
            },
            { type: 'forward-internal', config: { url: 'https://app.internal' } },
          ],
        },
      ],
    },
  });

  it.each([
    [
      'a secret its declared vault does not hold',
      [VAULT, reading('webhooks', 'other')],
      'refers to Secret "other" in Vault "webhooks" (declared at account.yaml:',
    ],
    [
      'a declared secret of another vault',
      [
        VAULT,
        { ...VAULT, name: 'more' },
        { ...SECRET, vault: 'more' },
        reading('webhooks', 'github_hook'),
      ],
      'refers to Secret "github_hook" in Vault "webhooks", but the Secret "github_hook" declared at account.yaml:',
    ],
    [
      'a secret its manifest deletes',
      [VAULT, { ...SECRET, ensure: 'absent' }, reading('webhooks', 'github_hook')],
      'refers to Secret "github_hook", which its manifest deletes (ensure: absent)',
    ],
  ])('validate refuses secrets.get naming %s, at the policy string', async (_, docs, message) => {
    const loaded = await loadManifests(await write(docs), { env: {}, deferUnresolved: true });
    const found = loaded.diagnostics.find((d) => d.message.startsWith('refers to'));
    expect(found?.message).toContain(message);
    expect(found?.path).toBe('traffic_policy.on_http_request[0].actions[0].config.secret');
  });

  it('validate leaves a secret of a vault it does not declare to the plan, which leaves it alone on an account with no vault', async () => {
    const dir = await write([reading('handmade', 'token')]);
    const loaded = await loadManifests(dir, { env: {}, deferUnresolved: true });
    expect(loaded.diagnostics).toEqual([]);
    if (!loaded.ok) return;
    const plan = buildPlan(loaded.set, await observe(client));
    // Checked only where the account uses vaults at all (as a host against reserved domains).
    expect(plan.blocked).toEqual([]);
  });

  it('validate needs neither the value nor the key', async () => {
    const loaded = await loadManifests(await write([VAULT, SECRET]), {
      env: {},
      deferUnresolved: true,
    });
    expect(loaded.diagnostics).toEqual([]);
    expect(loaded.ok).toBe(true);
  });

  it('a vault left out of Git is kept (never pruned)', async () => {
    await apply(await write([VAULT]));
    const kept = await apply(await write([]));
    expect(acting(kept.plan)).toEqual([]);
    expect(kept.after.resources?.vault?.map((v) => v.name)).toEqual(['webhooks']);
  });
});
