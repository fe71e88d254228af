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
import { writerStamps } from '../../../src/plan/index.js';
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
    digestFor: (writer: string | undefined) => writeOnlyDigest(KEY, { value }, writer),
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

const US = 'bot_edgesync';
const SOMEONE = 'usr_dashboard';

/**
 * A live secret whose metadata keeps the digest of `digestOf` written as `recorded` (undefined:
 * no writer kept), last written by `lastBy` (undefined: the service says nobody).
 */
function liveSecret(
  digestOf: string,
  recorded: string | undefined = US,
  lastBy: string | undefined = recorded,
  name = 'github_hook',
): LiveRecord {
  return {
    id: `secret_${name}`,
    name,
    description: '',
    vault: { id: 'vault_1', uri: '' },
    vault_name: 'webhooks',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...(lastBy === undefined ? {} : { last_updated_by: { id: lastBy, uri: '' } }),
    metadata: storedMetadata(
      {
        'edgesync/digest': writeOnlyDigest(KEY, { value: digestOf }, recorded),
        ...(recorded === undefined ? {} : { 'edgesync/by': recorded }),
      },
      { owner: 'default', name, protect: false },
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
    expect(JSON.stringify(ops[0]?.body)).toContain(
      writeOnlyDigest(KEY, { value: 'whsec-new' }, US),
    );
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
    const { digestFor: _, ...bare } = secret();
    const plan = buildPlan(desired({ vault: [vault()], secret: [bare as Declared] }), live([]));
    expect(acting(plan)).toEqual([]);
    expect(plan.blocked[0]?.reason).toContain('no secret digest key');
  });
});

describe('a value written outside Git', () => {
  const OLD = 'bot_before_rotation';
  /** What the digest is computed over, as it serialises it: never in an output. */
  const inputs = (value: string) => [
    JSON.stringify([['value', value]]),
    JSON.stringify({ values: [['value', value]], writer: US }),
  ];
  const other = (fields: Record<string, unknown> = {}) => {
    const parsed = SecretSchema.parse({
      kind: 'Secret',
      name: 'other_hook',
      vault: 'webhooks',
      value: 'whsec-other',
      ...fields,
    });
    return {
      ...parsed,
      source: SOURCE,
      sensitive: [['value']],
      digestFor: (writer: string | undefined) =>
        writeOnlyDigest(KEY, { value: 'whsec-other' }, writer),
    } as unknown as Declared;
  };
  const metadataOf = (body: unknown) =>
    JSON.parse((body as { metadata: string }).metadata) as Record<string, string>;

  it.each([
    ['its last writer is the one kept beside the digest', US, US, []],
    ['the service names no writer (digests alone decide)', US, undefined, []],
    ['its last writer is another actor', US, SOMEONE, ['update secret.github_hook']],
    ['no writer is kept beside its digest', undefined, SOMEONE, ['update secret.github_hook']],
    [
      'someone put their own name beside our digest',
      SOMEONE,
      SOMEONE,
      ['update secret.github_hook'],
    ],
  ] as const)('%s', (_, recorded, lastBy, expected) => {
    const forged = recorded === SOMEONE;
    const record = liveSecret(VALUE, forged ? US : recorded, lastBy);
    if (forged) {
      // The digest made for our writer, the writer key changed to theirs.
      const meta = JSON.parse(record.metadata as string) as Record<string, string>;
      (record as unknown as { metadata: string }).metadata = JSON.stringify({
        ...meta,
        'edgesync/by': SOMEONE,
      });
    }
    const plan = buildPlan(desired({ vault: [vault()], secret: [secret()] }), live([record]));
    expect(acting(plan)).toEqual(expected);
  });

  it('is drift: one PATCH of the value, shown without value, digest input or key', () => {
    const plan = buildPlan(
      desired({ vault: [vault()], secret: [secret(), other()] }),
      live([liveSecret(VALUE, US, SOMEONE), liveSecret('whsec-other', US, US, 'other_hook')]),
    );
    const change = plan.changes.find((c) => c.address === 'secret.github_hook');
    expect(change?.action).toBe('update');
    expect(change?.reason).toBe(`changed outside Git: last written by ${SOMEONE}, not ${US}`);
    expect(change?.operations).toHaveLength(1);
    const op = change?.operations[0];
    expect(op?.method).toBe('PATCH');
    // The metadata already records Git's value written as this actor: the value alone.
    expect(Object.keys(op?.body as object)).toEqual(['value']);
    const text = shown(plan);
    expect(text).toContain('changed outside Git');
    for (const hidden of [VALUE, KEY, ...inputs(VALUE)]) expect(text).not.toContain(hidden);
  });

  it('a new secret records the actor the account shows; with none shown, none', () => {
    const known = buildPlan(
      desired({ vault: [vault()], secret: [secret(), other()] }),
      live([liveSecret(VALUE)]),
    );
    const create = known.changes.find((c) => c.address === 'secret.other_hook')?.operations[0];
    expect(metadataOf(create?.body)).toMatchObject({
      'edgesync/by': US,
      'edgesync/digest': writeOnlyDigest(KEY, { value: 'whsec-other' }, US),
    });
    const fresh = buildPlan(desired({ vault: [vault()], secret: [secret()] }), live([]));
    const first = fresh.changes.find((c) => c.address === 'secret.github_hook')?.operations[0];
    expect(metadataOf(first?.body)).not.toHaveProperty('edgesync/by');
    expect(metadataOf(first?.body)['edgesync/digest']).toBe(writeOnlyDigest(KEY, { value: VALUE }));
  });

  it('a credential now acting as another actor rewrites nothing it did not touch; a label change records the new actor without the value', () => {
    const untouched = buildPlan(
      desired({ vault: [vault()], secret: [secret(), other()] }),
      live([liveSecret(VALUE, OLD), { ...liveSecret('whsec-other', US, US, 'other_hook') }]),
    );
    expect(acting(untouched)).toEqual([]);
    const relabelled = buildPlan(
      desired({
        vault: [vault()],
        secret: [secret(VALUE, { metadata: { team: 'web' } }), other()],
      }),
      live([
        liveSecret(VALUE, OLD),
        { ...liveSecret('whsec-other', US, US, 'other_hook'), updated_at: '2026-02-01T00:00:00Z' },
      ]),
    );
    expect(acting(relabelled)).toEqual(['update secret.github_hook']);
    const op = relabelled.changes.find((c) => c.address === 'secret.github_hook')?.operations[0];
    expect(Object.keys(op?.body as object)).toEqual(['metadata']);
    expect(metadataOf(op?.body)).toMatchObject({
      team: 'web',
      'edgesync/by': US,
      'edgesync/digest': writeOnlyDigest(KEY, { value: VALUE }, US),
    });
  });

  it('the executor stamps a resource for the writer its answer names', () => {
    const stamp = writerStamps(desired({ vault: [vault()], secret: [secret()] }), 'default');
    expect(stamp('vault.webhooks', US)).toBeUndefined();
    expect(JSON.parse(stamp('secret.github_hook', US) as string)).toEqual({
      'edgesync/by': US,
      'edgesync/digest': writeOnlyDigest(KEY, { value: VALUE }, US),
      'edgesync/name': 'github_hook',
      'edgesync/owner': 'default',
    });
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
