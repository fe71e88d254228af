/**
 * A secret's value written outside Git, against the local server over HTTP through the real
 * loader, planner and executor. edgesync runs as a service user (its own API key); the
 * "dashboard" is the account owner's key, another actor. The value never comes back, so what
 * shows the change is the secret's `last_updated_by` against the actor edgesync recorded beside
 * its keyed digest: the plan reports it, the apply writes the value again in one PATCH, and the
 * next plan is empty. What edgesync knows of its own actor lives on the service (the secrets'
 * metadata): a fresh process (a restart) knows it from its first plan.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ApiClient, createApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { main } from '../../../src/cli/main.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { maskPlan, writerStamps } from '../../../src/plan/index.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderText } from '../../../src/plan/render/text.js';
import type { RunningServer } from '../../../src/server/index.js';
import { Capture } from '../../helpers/capture.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { tempDir } from '../apply/helpers.js';

const KEY = 'drift-test-digest-key-4f1c9a';
const VALUE = 'whsec-git-value-7c21';
const DASHBOARD_VALUE = 'whsec-typed-in-dashboard-9e';

const VAULT = { kind: 'Vault', name: 'webhooks' };
const secretDoc = (name: string) => ({
  kind: 'Secret',
  name,
  vault: 'webhooks',
  value: { env: 'HOOK_SECRET' },
});

let server: RunningServer & { apiKey: string };
let dashboard: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;
const clients: ApiClient[] = [];

beforeEach(async () => {
  server = await startTestServer();
  dashboard = client(server.apiKey, []);
  tmp = await tempDir('edgesync-secret-drift-');
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server.close();
  await tmp.cleanup();
});

/** A client with `key`, recording each write it sends (`METHOD route status`) in `calls`. */
function client(key: string, calls: string[]): ApiClient {
  const c = createApiClient({
    baseUrl: server.url,
    apiKey: key,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    onResponse: (r) => {
      if (r.method !== 'GET') calls.push(`${r.method} ${r.route} ${r.status}`);
    },
  });
  clients.push(c);
  return c;
}

/** A key of a new service user of the account: the actor edgesync runs as. */
async function serviceUserKey(name: string): Promise<{ key: string; id: string }> {
  const user = await dashboard.createServiceUser({ name });
  return { key: server.serviceUserKey(server.apiKey, user.id), id: user.id };
}

async function write(docs: readonly object[]): Promise<string> {
  const dir = path.join(tmp.dir, 'manifests');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'account.yaml'), docs.map((d) => stringify(d)).join('---\n'));
  return dir;
}

/**
 * A controller process: its own client with `key`, nothing kept between its runs but what the
 * account holds. `run` plans the directory and (unless `planOnly`) applies it as the engine
 * does: plan, execute (stamping writers), observe, plan again.
 */
function controller(key: string) {
  const calls: string[] = [];
  const api = client(key, calls);
  const run = async (dir: string, options: { planOnly?: boolean; value?: string } = {}) => {
    const env = { HOOK_SECRET: options.value ?? VALUE, EDGESYNC_SECRET_DIGEST_KEY: KEY };
    const loaded = await loadManifests(dir, { env });
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    const desired = loaded.set;
    const live = await observe(api);
    const plan = buildPlan(desired, live);
    calls.length = 0;
    if (options.planOnly === true) return { plan, next: plan, converged: false };
    const outcome = await applyAndVerify(plan, {
      client: api,
      live,
      stamp: writerStamps(desired, plan.owner),
      replan: async () => {
        const again = await observe(api);
        return { live: again, plan: buildPlan(desired, again) };
      },
    });
    const next = buildPlan(desired, await observe(api));
    return { plan, next, converged: outcome.converged, writes: outcome.result.writes };
  };
  return { calls, api, run };
}

const acting = (plan: { changes: readonly { action: string; address: string }[] }) =>
  plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.address}`);

/** The live secret named `name`, as the dashboard lists it. */
async function liveSecret(name: string) {
  const all = await dashboard.listSecrets();
  const found = all.items.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no secret ${name}`);
  return found;
}

describe('a secret value changed outside Git', () => {
  it('is reported by plan, written again by apply in one PATCH, and the next plan is empty', async () => {
    const edgesync = await serviceUserKey('edgesync');
    const c = controller(edgesync.key);
    const dir = await write([VAULT, secretDoc('github_hook')]);
    const first = await c.run(dir);
    expect(first.converged).toBe(true);
    // The first write on the account learns the actor from its answer and records it.
    expect(c.calls).toEqual([
      'POST /vaults 201',
      'POST /vault_secrets 201',
      'PATCH /vault_secrets/{id} 200',
    ]);
    expect((await liveSecret('github_hook')).last_updated_by?.id).toBe(edgesync.id);
    expect(acting(first.next)).toEqual([]);

    // Unchanged in Git, untouched live: no write.
    const quiet = await c.run(dir);
    expect(acting(quiet.plan)).toEqual([]);
    expect(c.calls).toEqual([]);

    // Someone types another value in the dashboard (the account owner: another actor).
    const before = await liveSecret('github_hook');
    await dashboard.updateVaultSecret(before.id, { value: DASHBOARD_VALUE });
    const moved = await liveSecret('github_hook');
    expect(moved.last_updated_by?.id).not.toBe(edgesync.id);

    const seen = await c.run(dir, { planOnly: true });
    expect(acting(seen.plan)).toEqual(['update secret.github_hook']);
    const change = seen.plan.changes.find((x) => x.address === 'secret.github_hook');
    expect(change?.reason).toBe(
      `changed outside Git: last written by ${moved.last_updated_by?.id}, not ${edgesync.id}`,
    );
    const text = renderText(maskPlan(seen.plan, []), { color: false });
    expect(text).toContain('changed outside Git');
    for (const hidden of [VALUE, DASHBOARD_VALUE, KEY]) {
      expect(text).not.toContain(hidden);
      expect(JSON.stringify(maskPlan(seen.plan, []))).not.toContain(hidden);
    }

    const fixed = await c.run(dir);
    expect(c.calls).toEqual(['PATCH /vault_secrets/{id} 200']);
    expect(fixed.converged).toBe(true);
    expect(acting(fixed.next)).toEqual([]);
    expect((await liveSecret('github_hook')).last_updated_by?.id).toBe(edgesync.id);
  });

  it('a restarted controller knows its actor from the account: no drift, and a new secret is one call', async () => {
    const edgesync = await serviceUserKey('edgesync');
    await controller(edgesync.key).run(await write([VAULT, secretDoc('github_hook')]));

    // A new process, the same credential: nothing of the first one's memory.
    const restarted = controller(edgesync.key);
    const dir = await write([VAULT, secretDoc('github_hook'), secretDoc('stripe_hook')]);
    const out = await restarted.run(dir);
    expect(acting(out.plan)).toEqual(['create secret.stripe_hook']);
    expect(restarted.calls).toEqual(['POST /vault_secrets 201']);
    expect(out.converged).toBe(true);
    expect((await liveSecret('stripe_hook')).last_updated_by?.id).toBe(edgesync.id);
  });

  it('the first write on an account costs two calls, the secrets after it one each', async () => {
    const edgesync = await serviceUserKey('edgesync');
    const c = controller(edgesync.key);
    const names = ['a_hook', 'b_hook', 'c_hook', 'd_hook', 'e_hook'];
    const out = await c.run(await write([VAULT, ...names.map(secretDoc)]));
    expect(out.converged).toBe(true);
    const secretCalls = c.calls.filter((x) => x.includes('/vault_secrets'));
    expect(secretCalls.filter((x) => x.startsWith('POST'))).toHaveLength(names.length);
    expect(secretCalls.filter((x) => x.startsWith('PATCH'))).toEqual([
      'PATCH /vault_secrets/{id} 200',
    ]);
    expect(out.writes).toBe(1 + names.length + 1);
    for (const name of names) {
      expect((await liveSecret(name)).last_updated_by?.id).toBe(edgesync.id);
    }
  });

  it('another key of the same actor changes nothing; a credential of a new actor rewrites nothing untouched and records itself on its next write', async () => {
    const edgesync = await serviceUserKey('edgesync');
    const dir = await write([VAULT, secretDoc('github_hook'), secretDoc('stripe_hook')]);
    await controller(edgesync.key).run(dir);

    // A rotated key of the same service user.
    const rotated = controller(server.serviceUserKey(server.apiKey, edgesync.id));
    const same = await rotated.run(dir);
    expect(acting(same.plan)).toEqual([]);
    expect(rotated.calls).toEqual([]);

    // The controller moved to another service user: untouched secrets stay as they are.
    const next = await serviceUserKey('edgesync-2');
    const moved = controller(next.key);
    const untouched = await moved.run(dir);
    expect(acting(untouched.plan)).toEqual([]);
    expect(moved.calls).toEqual([]);

    // Its first write records the new actor (its answer names it): one more call, once.
    const changed = await moved.run(dir, { value: 'whsec-rotated-value-31' });
    expect(acting(changed.plan)).toEqual([
      'update secret.github_hook',
      'update secret.stripe_hook',
    ]);
    expect(changed.converged).toBe(true);
    expect(moved.calls.filter((x) => x.startsWith('PATCH'))).toHaveLength(3);
    for (const name of ['github_hook', 'stripe_hook']) {
      expect((await liveSecret(name)).last_updated_by?.id).toBe(next.id);
    }
    expect(acting(changed.next)).toEqual([]);
  });

  it('through the CLI: plan exits 2 naming the drift, apply writes once, plan exits 0', async () => {
    const edgesync = await serviceUserKey('edgesync');
    const dir = await write([VAULT, secretDoc('github_hook')]);
    const cli = async (argv: string[]) => {
      const stdout = new Capture();
      const stderr = new Capture();
      const code = await main({
        argv,
        stdout,
        stderr,
        env: {
          EDGESYNC_API_URL: server.url,
          EDGESYNC_API_KEY: edgesync.key,
          EDGESYNC_OWNER: 'default',
          EDGESYNC_RATE_LIMIT: 'none',
          HOOK_SECRET: VALUE,
          EDGESYNC_SECRET_DIGEST_KEY: KEY,
        },
        cwd: tmp.dir,
        signal: new AbortController().signal,
      });
      const out = stdout.text + stderr.text;
      for (const hidden of [VALUE, DASHBOARD_VALUE, KEY]) expect(out).not.toContain(hidden);
      return { code, out };
    };
    expect((await cli(['apply', dir, '--yes'])).code).toBe(0);
    const { id } = await liveSecret('github_hook');
    await dashboard.updateVaultSecret(id, { value: DASHBOARD_VALUE });

    const drift = await cli(['plan', dir, '--detailed-exitcode']);
    expect(drift.code, drift.out).toBe(2);
    expect(drift.out).toContain('changed outside Git');
    const json = await cli(['plan', dir, '--output', 'json']);
    expect(json.out).toContain('changed outside Git');

    const before = writesAt(server);
    const applied = await cli(['apply', dir, '--yes']);
    expect(applied.code, applied.out).toBe(0);
    expect(writesAt(server) - before).toBe(1);
    expect((await cli(['plan', dir, '--detailed-exitcode'])).code).toBe(0);
  });
});
