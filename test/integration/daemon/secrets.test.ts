/**
 * The daemon with a vault and a secret (in-process `edgesync run` against the local server over
 * HTTP): the secret converges, and its value, the digest key and what the digest is computed
 * over appear nowhere: not in the logs, `/status`, the per-resource status or `/events`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
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
  // The vault's POST, then the secret's.
  expect(s.last_reconcile).toMatchObject({ writes: 2, summary: { create: 2 } });
  const resources = await d.resources();
  expect(resources.map((r) => r.address).sort()).toEqual(['secret.github_hook', 'vault.webhooks']);
  const events = await (await fetch(`${d.base}/events`)).text();
  const outputs = [JSON.stringify(s), JSON.stringify(resources), events, d.stdout(), d.stderr()];
  for (const out of outputs) {
    expect(out).not.toContain(VALUE);
    expect(out).not.toContain(KEY);
    // The digest's input: the value, as the digest serialises it.
    expect(out).not.toContain(JSON.stringify([['value', VALUE]]));
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
