/**
 * Vaults and secrets in the planner, from plain objects: the secret's write-only value compared
 * through its keyed digest (no write when unchanged, one PATCH when changed), the value masked
 * in every rendering of the plan, the order against the vault and the endpoint reading it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Declared, LiveRecord } from '../../../src/kinds/index.js';
import { policySecretReferences } from '../../../src/kinds/own-planners.js';
import { SecretSchema } from '../../../src/kinds/secret.js';
import { VaultSchema } from '../../../src/kinds/vault.js';
import { digestKeyFrom, writeOnlyDigest } from '../../../src/manifest/digest.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { maskPlan } from '../../../src/plan/mask.js';
import type { Plan } from '../../../src/plan/model.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderJson } from '../../../src/plan/render/json.js';
import { renderMarkdown } from '../../../src/plan/render/markdown.js';
import { renderText } from '../../../src/plan/render/text.js';

const KEY = 'unit-test-digest-key-42';
const VALUE = 'whsec-unit-value';
const SOURCE = { file: 'account.yaml', line: 1, column: 1 };

function vault(fields: Record<string, unknown> = {}): Declared {
  const parsed = VaultSchema.parse({ kind: 'Vault', name: 'webhooks', ...fields });
  return { ...parsed, source: SOURCE, sensitive: [] } as unknown as Declared;
}

function secret(value = VALUE, fields: Record<string, unknown> = {}): Declared {
  const parsed = SecretSchema.parse({
    kind: 'Secret',
    name: 'github_hook',
    vault: 'webhooks',
    value,
    ...fields,
  });
  return {
    ...parsed,
    source: SOURCE,
    sensitive: [['value']],
    digest: writeOnlyDigest(KEY, { value }),
  } as unknown as Declared;
}

const desired = (resources: Record<string, Declared[]>) => ({
  tlsEdges: [],
  httpsEdges: [],
  botUsers: [],
  cloudEndpoints: [],
  resources,
});

const LIVE_VAULT: LiveRecord = {
  id: 'vault_1',
  name: 'webhooks',
  description: '',
  metadata: storedMetadata({}, { owner: 'default', name: 'webhooks', protect: false }),
};

function liveSecret(digestOf: string): LiveRecord {
  return {
    id: 'secret_1',
    name: 'github_hook',
    description: '',
    vault: { id: 'vault_1', uri: '' },
    vault_name: 'webhooks',
    updated_at: '2026-01-01T00:00:00.000Z',
    metadata: storedMetadata(
      { 'edgesync/digest': writeOnlyDigest(KEY, { value: digestOf }) },
      { owner: 'default', name: 'github_hook', protect: false },
    ),
  };
}

const live = (secrets: LiveRecord[]) => ({
  tlsEdges: [],
  httpsEdges: [],
  botUsers: [],
  resources: { vault: [LIVE_VAULT], secret: secrets },
});

const acting = (plan: Plan) =>
  plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.address}`);

/** Every way the plan is shown: text, JSON, Markdown. */
function shown(plan: Plan): string {
  const masked = maskPlan(plan, []);
  return [renderJson(masked), renderText(masked), renderMarkdown(masked)].join('\n');
}

describe('the keyed digest', () => {
  it('is keyed: another key, another digest; never the bare hash, never the value', () => {
    const d = writeOnlyDigest(KEY, { value: VALUE });
    expect(d).toBe(writeOnlyDigest(KEY, { value: VALUE }));
    expect(d).not.toBe(writeOnlyDigest(`${KEY}x`, { value: VALUE }));
    expect(d).not.toContain(createHash('sha256').update(VALUE).digest('base64url'));
    expect(d).not.toContain(VALUE);
    expect(d).not.toContain(KEY);
  });

  it('the key comes from the variable, else the file; a short one is refused', () => {
    const read = (file: string) => (file === '/k' ? `  ${KEY}\n` : '');
    expect(digestKeyFrom({ EDGESYNC_SECRET_DIGEST_KEY: KEY }, read)).toEqual({ key: KEY });
    expect(digestKeyFrom({ EDGESYNC_SECRET_DIGEST_KEY_FILE: '/k' }, read)).toEqual({ key: KEY });
    expect(digestKeyFrom({}, read)).toBeUndefined();
    expect(digestKeyFrom({ EDGESYNC_SECRET_DIGEST_KEY: 'short' }, read)).toEqual({
      problem: expect.stringContaining('shorter than 16'),
    });
    const missing = digestKeyFrom({ EDGESYNC_SECRET_DIGEST_KEY_FILE: '/none' }, () => {
      throw Object.assign(new Error('no'), { code: 'ENOENT' });
    });
    expect(missing).toEqual({ problem: expect.stringContaining('ENOENT') });
  });
});

describe('vaults and secrets in the plan', () => {
  it('creates the vault, then the secret in it (its ID filled from the POST), value masked', () => {
    const plan = buildPlan(desired({ vault: [vault()], secret: [secret()] }), {
      tlsEdges: [],
      httpsEdges: [],
      botUsers: [],
    });
    expect(acting(plan)).toEqual(['create secret.github_hook', 'create vault.webhooks']);
    const op = plan.changes.find((c) => c.kind === 'secret')?.operations[0];
    expect(op?.body).toMatchObject({ vault_id: '{created:vault.webhooks}', value: VALUE });
    expect(op?.after).toEqual(['vault.webhooks']);
    expect(op?.fills).toEqual([['vault_id']]);
    expect(shown(plan)).not.toContain(VALUE);
  });

  it('an unchanged value (same digest) costs no write', () => {
    const plan = buildPlan(
      desired({ vault: [vault()], secret: [secret()] }),
      live([liveSecret(VALUE)]),
    );
    expect(acting(plan)).toEqual([]);
  });

  it('a changed value is one PATCH of the value and the new digest, masked', () => {
    const plan = buildPlan(
      desired({ vault: [vault()], secret: [secret('whsec-new')] }),
      live([liveSecret(VALUE)]),
    );
    expect(acting(plan)).toEqual(['update secret.github_hook']);
    const ops = plan.changes.flatMap((c) => c.operations);
    expect(ops).toHaveLength(1);
    expect(ops[0]?.method).toBe('PATCH');
    expect(Object.keys(ops[0]?.body as object).sort()).toEqual(['metadata', 'value']);
    expect(JSON.stringify(ops[0]?.body)).toContain(writeOnlyDigest(KEY, { value: 'whsec-new' }));
    expect(shown(plan)).not.toContain('whsec-new');
    expect(shown(plan)).not.toContain(KEY);
  });

  it('a new vault replaces the secret (a secret cannot move in place)', () => {
    const plan = buildPlan(
      desired({
        vault: [vault(), vault({ name: 'other' })],
        secret: [secret(VALUE, { vault: 'other' })],
      }),
      live([liveSecret(VALUE)]),
    );
    expect(acting(plan)).toEqual(['replace secret.github_hook', 'create vault.other']);
  });

  it('a secret whose vault is neither declared nor live is blocked', () => {
    const plan = buildPlan(desired({ secret: [secret(VALUE, { vault: 'nowhere' })] }), {
      tlsEdges: [],
      httpsEdges: [],
      botUsers: [],
    });
    expect(plan.blocked.map((b) => b.reason)).toEqual([
      'refers to vault.nowhere, which is neither declared nor live',
    ]);
  });

  it('a secret without a digest (no key) is never written', () => {
    const { digest: _, ...bare } = secret() as Declared & { digest?: string };
    const plan = buildPlan(desired({ vault: [vault()], secret: [bare as Declared] }), live([]));
    expect(acting(plan)).toEqual([]);
    expect(plan.blocked[0]?.reason).toContain('no secret digest key');
  });
});

describe('secrets.get in a policy', () => {
  it('names the vault and the secret at the string holding it', () => {
    const refs = policySecretReferences({
      on_http_request: [
        {
          actions: [
            {
              type: 'verify-webhook',
              config: { secret: '${secrets.get(\'webhooks\', "github_hook")}' },
            },
          ],
        },
      ],
    });
    const at = ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'secret'];
    expect(refs).toEqual([
      {
        kind: 'vault',
        name: 'webhooks',
        path: at,
        liveSatisfies: true,
        orderOnly: true,
        onlyWhereUsed: true,
      },
      {
        kind: 'secret',
        name: 'github_hook',
        path: at,
        liveSatisfies: true,
        orderOnly: true,
        onlyWhereUsed: true,
        within: { kind: 'vault', name: 'webhooks' },
      },
    ]);
  });
});
