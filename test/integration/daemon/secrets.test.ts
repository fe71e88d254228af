/**
 * The daemon with a vault and a secret (in-process `edgesync run` against the local server over
 * HTTP): the secret converges, and its value, the digest key and what the digest is computed
 * over appear nowhere: not in the logs, `/status`, the per-resource status or `/events`. A value
 * changed outside Git (by another actor: a service user's key) is drift: reported while the
 * daemon is suspended (it observes), written again once it enforces.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/index.js';
import { main } from '../../../src/cli/main.js';
import type { RunningServer } from '../../../src/server/index.js';
import { Capture } from '../../helpers/capture.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import { makeTempDir, removeDir, waitFor } from './helpers.js';

const VALUE = 'whsec-daemon-value-5d2f';
const KEY = 'daemon-digest-key-9b1e77c4a0';

const MANIFESTS = `kind: Vault
name: webhooks
---
kind: Secret
name: github_hook
vault: webhooks
value: { env: GITHUB_WEBHOOK_SECRET }
`;

let api: RunningServer & { apiKey: string };
let tmp: string;
let dir: string;
beforeEach(async () => {
  api = await startTestServer();
  tmp = await makeTempDir('daemon-secrets');
  dir = path.join(tmp, 'manifests');
  await mkdir(dir);
});
afterEach(async () => {
  await stopDaemons();
  await api.close();
  await removeDir(tmp);
});

it('converges a secret with neither its value nor the digest key in any output', async () => {
  await writeFile(path.join(dir, 'account.yaml'), MANIFESTS);
  const d = await startDaemon({
    args: [dir, '--interval', '1h', '--debounce', '20ms', '--log-level', 'debug'],
    cwd: tmp,
    env: {
      EDGESYNC_API_URL: api.url,
      EDGESYNC_API_KEY: api.apiKey,
      EDGESYNC_OWNER: 'default',
      GITHUB_WEBHOOK_SECRET: VALUE,
      EDGESYNC_SECRET_DIGEST_KEY: KEY,
    },
  });
  const s = await waitFor('a cycle', async () => {
    const status = await d.status();
    return status.last_reconcile === null ? undefined : status;
  });
  // The vault's POST, then the secret's, and the PATCH recording the actor its answer named.
  expect(s.last_reconcile).toMatchObject({ writes: 3, summary: { create: 2 } });
  const resources = await d.resources();
  expect(resources.map((r) => r.address).sort()).toEqual(['secret.github_hook', 'vault.webhooks']);
  const events = await (await fetch(`${d.base}/events`)).text();
  const outputs = [JSON.stringify(s), JSON.stringify(resources), events, d.stdout(), d.stderr()];
  for (const out of outputs) {
    expect(out).not.toContain(VALUE);
    expect(out).not.toContain(KEY);
    // The digest's input: the value, as the digest serialises it (alone, and with its writer).
    expect(out).not.toContain(JSON.stringify([['value', VALUE]]));
    expect(out).not.toContain(JSON.stringify({ values: [['value', VALUE]] }).slice(0, -1));
  }
});

it('plan reads the key from --secret-digest-key-file, and without a key refuses at the value', async () => {
  await writeFile(path.join(dir, 'account.yaml'), MANIFESTS);
  await writeFile(path.join(tmp, 'digest.key'), `${KEY}\n`);
  const plan = async (extra: string[]) => {
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await main({
      argv: ['plan', dir, '--output', 'json', ...extra],
      stdout,
      stderr,
      env: {
        EDGESYNC_API_URL: api.url,
        EDGESYNC_API_KEY: api.apiKey,
        EDGESYNC_RATE_LIMIT: 'none',
        GITHUB_WEBHOOK_SECRET: VALUE,
      },
      cwd: tmp,
      signal: new AbortController().signal,
    });
    return { code, out: stdout.text, err: stderr.text };
  };
  const withKey = await plan(['--secret-digest-key-file', 'digest.key']);
  expect(withKey.code).toBe(0);
  expect(withKey.out).toContain('secret.github_hook');
  const without = await plan([]);
  expect(without.code).toBe(1);
  expect(without.err).toContain('account.yaml:7:');
  expect(without.err).toContain('EDGESYNC_SECRET_DIGEST_KEY');
  for (const out of [withKey.out, withKey.err, without.out, without.err]) {
    expect(out).not.toContain(VALUE);
    expect(out).not.toContain(KEY);
  }
});

it('reports a value changed outside Git while suspended, and writes it again in enforce mode', async () => {
  await writeFile(path.join(dir, 'account.yaml'), MANIFESTS);
  const owner = createApiClient({ baseUrl: api.url, apiKey: api.apiKey });
  const bot = await owner.createServiceUser({ name: 'dashboard-user' });
  const other = createApiClient({
    baseUrl: api.url,
    apiKey: api.serviceUserKey(api.apiKey, bot.id),
  });
  try {
    const d = await startDaemon({
      args: [dir, '--interval', '1h', '--debounce', '20ms'],
      cwd: tmp,
      env: {
        EDGESYNC_API_URL: api.url,
        EDGESYNC_API_KEY: api.apiKey,
        EDGESYNC_OWNER: 'default',
        GITHUB_WEBHOOK_SECRET: VALUE,
        EDGESYNC_SECRET_DIGEST_KEY: KEY,
      },
    });
    const first = await waitFor(
      'a cycle',
      async () => (await d.status()).last_reconcile ?? undefined,
    );
    expect(first.result).toBe('changed');
    const secret = async () => (await owner.listSecrets()).items[0];
    const ours = (await secret())?.last_updated_by?.id;
    expect(ours).toMatch(/^usr_/);

    await other.updateVaultSecret((await secret())?.id as string, {
      value: 'typed-in-the-dashboard',
    });
    expect((await secret())?.last_updated_by?.id).toBe(bot.id);

    /** Asks for a cycle and waits for its report. */
    const nextCycle = (after: string) =>
      waitFor('the next cycle', async () => {
        const last = (await d.status()).last_reconcile;
        return last !== null && last.at !== after ? last : undefined;
      });
    const cycle = async (after: string) => {
      expect((await fetch(`${d.base}/-/reconcile`, { method: 'POST' })).status).toBe(202);
      return nextCycle(after);
    };
    expect((await fetch(`${d.base}/-/suspend`, { method: 'POST' })).status).toBe(200);
    const observed = await cycle(first.at);
    expect(observed).toMatchObject({ result: 'drift', writes: 0, out_of_sync: 1 });
    expect((await secret())?.last_updated_by?.id).toBe(bot.id);
    const drifted = (await d.resources()).find((r) => r.address === 'secret.github_hook');
    expect(JSON.stringify(drifted)).toContain('changed outside Git');

    // Resuming asks for a cycle itself; asking for another here could make it the one seen.
    expect((await fetch(`${d.base}/-/resume`, { method: 'POST' })).status).toBe(200);
    const enforced = await nextCycle(observed.at);
    // One PATCH of the value: the metadata already records it as written by this actor.
    expect(enforced).toMatchObject({ result: 'changed', writes: 1 });
    expect((await secret())?.last_updated_by?.id).toBe(ours);
    const outputs = [JSON.stringify(await d.resources()), d.stdout(), d.stderr()];
    for (const out of outputs) {
      expect(out).not.toContain(VALUE);
      expect(out).not.toContain('typed-in-the-dashboard');
      expect(out).not.toContain(KEY);
    }
  } finally {
    await owner.close();
    await other.close();
  }
});
