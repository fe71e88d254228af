/**
 * `edgesync run` as a child process never writes the API key or a manifest secret to its output:
 * everything it prints on stdout and stderr, at the most verbose log level, through creates,
 * updates of the secrets themselves, a manifest error on a field read from a file, and API
 * failures with a wrong key, is captured and searched.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server.js';
import {
  assertBuilt,
  type DaemonChild,
  killChildren,
  startDaemon,
  tempDir,
  waitFor,
  waitForCycle,
  writeYaml,
} from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let edges: string;
let secretDir: string;

const ENV_SECRET = 'Env-Secret-oauth-7f3a9c1e55b2';
const FILE_SECRET = 'File-Secret-whsec-0d4e8b21c6aa';
const FILE_SECRET_2 = 'File-Secret-rotated-93be17d04f';
const OUTSIDE_SECRET = 'Outside-Secret-oidc-5c28e1f0b7';
const BAD_FIELD_SECRET = 'Field-Secret-not-a-provider-61d';

beforeAll(() => assertBuilt());

beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir();
  edges = path.join(tmp.dir, 'edges');
  secretDir = path.join(tmp.dir, 'mounted');
  await mkdir(path.join(edges, 'secrets'), { recursive: true });
  await mkdir(secretDir, { recursive: true });
  await writeFile(path.join(edges, 'secrets', 'stripe'), `${FILE_SECRET}\n`);
  await writeFile(path.join(secretDir, 'oidc'), OUTSIDE_SECRET);
});

afterEach(async () => {
  await killChildren();
  await server.close();
  await tmp.cleanup();
});

function shop(webhookProvider: unknown = 'stripe') {
  return {
    kind: 'HTTPSEdge',
    name: 'shop',
    hostports: ['shop.example.com:443'],
    routes: [
      {
        match_type: 'path_prefix',
        match: '/account',
        backend: { backend_id: 'bkdhr_shop' },
        oauth: {
          provider: {
            google: {
              client_id: 'id.apps.example',
              client_secret: { env: 'GOOGLE_CLIENT_SECRET' },
              email_domains: ['example.com'],
            },
          },
        },
      },
      {
        match_type: 'exact_path',
        match: '/hooks/stripe',
        backend: { backend_id: 'bkdhr_hooks' },
        webhook_verification: { provider: webhookProvider, secret: { file: 'secrets/stripe' } },
      },
    ],
  };
}

/** One route per edge may carry an auth module: the staff area has an edge of its own. */
function staff() {
  return {
    kind: 'HTTPSEdge',
    name: 'staff',
    hostports: ['staff.example.com:443'],
    routes: [
      {
        match_type: 'path_prefix',
        match: '/staff',
        backend: { backend_id: 'bkdhr_staff' },
        oidc: {
          issuer: 'https://login.example.com',
          client_id: 'staff',
          client_secret: { file: path.join(secretDir, 'oidc') },
        },
      },
    ],
  };
}

const secrets = [ENV_SECRET, FILE_SECRET, FILE_SECRET_2, OUTSIDE_SECRET, BAD_FIELD_SECRET];

function assertNoLeak(daemon: DaemonChild, apiKey: string): void {
  // Case-insensitive: some fields are lower-cased before a message could quote them.
  const all = (daemon.stdout() + daemon.stderr()).toLowerCase();
  for (const s of [...secrets, apiKey]) {
    expect(all.includes(s.toLowerCase()), `output contains ${s.slice(0, 8)}...`).toBe(false);
  }
}

describe('edgesync run (child process) keeps keys and secrets out of its output', () => {
  it('through creates, secret rotation, a manifest error and API failures', async () => {
    await writeYaml(path.join(edges, 'shop.yaml'), [shop(), staff()]);
    const args = [
      edges,
      '--interval',
      '1h',
      '--debounce',
      '50ms',
      '--log-level',
      'trace',
      '--secret-dir',
      secretDir,
    ];
    const env = {
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
      GOOGLE_CLIENT_SECRET: ENV_SECRET,
    };
    const daemon = await startDaemon({ args, cwd: tmp.dir, env });
    await waitForCycle(daemon, 0, (s) => s.last_reconcile?.result === 'changed');

    // Rotating a file secret: an update whose plan has the secret before and after.
    let t = Date.now();
    await writeFile(path.join(edges, 'secrets', 'stripe'), FILE_SECRET_2);
    // Secret files are not manifests: a webhook (git-sync's, here by hand) asks for the cycle.
    await fetch(`${daemon.base}/-/reconcile`, { method: 'POST' });
    let s = await waitForCycle(daemon, t, (x) => x.last_reconcile?.result === 'changed');
    expect(s.last_reconcile?.summary.update).toBe(1);

    // A value read from a file lands in a field that rejects it: the error must not quote it.
    t = Date.now();
    await writeFile(path.join(edges, 'secrets', 'provider'), BAD_FIELD_SECRET);
    await writeYaml(path.join(edges, 'shop.yaml'), [shop({ file: 'secrets/provider' }), staff()]);
    s = await waitForCycle(daemon, t, (x) => x.last_reconcile?.result === 'invalid');
    expect(Object.keys(s.diagnostics_by_file)).toEqual(['shop.yaml']);
    expect(s.diagnostics_by_file['shop.yaml']?.[0]?.message).toBe(
      'unknown webhook provider "(sensitive)"',
    );

    // The output is not silent: it holds the cycles, at trace level.
    await waitFor('the invalid cycle logged', () =>
      daemon.stdout().includes('"msg":"reconcile invalid"'),
    );
    expect(daemon.logLines().filter((l) => l.msg === 'operation').length).toBeGreaterThan(3);
    assertNoLeak(daemon, server.apiKey);
    await killChildren();

    // A wrong key: 401s all the way, logged and reported without the key.
    const wrongKey = 'esk_WrongKeyWrongKeyWrongKey12345';
    const rejected = await startDaemon({
      args,
      cwd: tmp.dir,
      env: { ...env, EDGESYNC_API_KEY: wrongKey },
    });
    await writeYaml(path.join(edges, 'shop.yaml'), [shop(), staff()]);
    s = await waitForCycle(rejected, 0, (x) => x.last_reconcile?.result === 'error');
    expect(s.last_error?.message).toMatch(/401|unauthori[sz]ed|authentication/i);
    await waitFor('the error cycle logged', () =>
      rejected.stdout().includes('"msg":"reconcile error"'),
    );
    assertNoLeak(rejected, wrongKey);
    expect(rejected.stdout() + rejected.stderr()).not.toContain(server.apiKey);
  });
});
