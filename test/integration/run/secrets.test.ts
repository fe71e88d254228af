/**
 * The secret-marker test: edgesync, in-process through `main()` with every output captured,
 * against the local server, never writes
 * the API key or a secret to any output. Markers are put everywhere a secret can come from (a
 * value read from env or a file, a name read from env, a credential header written inline in
 * Git, a credential header set by hand on the live edge) and every output is captured and
 * searched: `plan` as text, JSON and Markdown, a saved plan, `validate`, `apply --output json`
 * and its people's lines, logs at the most verbose level, the daemon's `/status`, `/events` and
 * `/metrics`, notification payloads, and the error paths (API failures with a wrong key, an API
 * whose error message echoes the request body, a manifest error on a field read from a file).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor, waitForCycle } from '../../../bench/harness.js';
import { type InProcessDaemon, startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import { runCli } from '../apply/helpers.js';
import { tempDir, writeYaml } from './helpers.js';

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
/** A name read from env: Markdown escapes its underscores. */
const NAME_SECRET = 'name_secret_4e7d_marker';
/** A credential header's value written inline in the manifest (in Git). */
const INLINE_SECRET = 'Inline-Header-Secret-b81c2e9f';
/** A credential header's value set by hand on the live edge (never in Git). */
const LIVE_SECRET = 'Live-Header-Secret-6d03aa71';
/** The token in a notification receiver's path (as in an incoming-webhook URL). */
const NOTIFY_SECRET = 'Notify-Token-Secret-2a9c51e3';

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
  await stopDaemons();
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

const secrets = [
  ENV_SECRET,
  FILE_SECRET,
  FILE_SECRET_2,
  OUTSIDE_SECRET,
  BAD_FIELD_SECRET,
  NAME_SECRET,
  INLINE_SECRET,
  LIVE_SECRET,
  NOTIFY_SECRET,
];

/** Every secret, in any case and in the forms escaping would give it (Markdown, JSON). */
function expectNoSecret(what: string, text: string, apiKey: string): void {
  const all = text.toLowerCase();
  for (const s of [...secrets, apiKey]) {
    const forms = [
      s,
      s.replaceAll('_', '&#95;'),
      s.replaceAll('_', '\\_'),
      s.replaceAll('-', '\\-'),
    ];
    for (const form of forms) {
      // Case-insensitive: some fields are lower-cased before a message could quote them.
      expect(all.includes(form.toLowerCase()), `${what} contains ${form.slice(0, 8)}...`).toBe(
        false,
      );
    }
  }
}

function assertNoLeak(daemon: InProcessDaemon, apiKey: string): void {
  expectNoSecret('the daemon output', daemon.stdout() + daemon.stderr(), apiKey);
}

/** `edgesync ARGS` in-process: its exit code and everything it printed. */
function cli(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, {
    cwd: tmp.dir,
    env: { EDGESYNC_RATE_LIMIT: 'none', EDGESYNC_OWNER: 'default', ...env },
  });
}

/** The edge's route and its `request_headers` set by hand, as an operator would on the live side. */
async function setLiveHeaders(add: Record<string, string>): Promise<void> {
  const call = (method: string, p: string, body?: unknown) =>
    fetch(`${server.url}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${server.apiKey}`,
        'svc-version': '2',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const list = (await (await call('GET', '/edges/https')).json()) as {
    https_edges: { id: string; hostports: string[]; routes: { id: string; match: string }[] }[];
  };
  const edge = list.https_edges.find((e) => e.hostports.includes('shop.example.com:443'));
  const route = edge?.routes.find((r) => r.match === '/account');
  if (edge === undefined || route === undefined) throw new Error('no live shop route');
  const res = await call('PUT', `/edges/https/${edge.id}/routes/${route.id}/request_headers`, {
    add,
  });
  expect(res.status).toBe(200);
}

/** A local receiver of notifications that refuses them all: every body it was sent. */
async function startReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const receiver: HttpServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      bodies.push(body);
      // Refused: the daemon logs the refusal, naming the receiver (never its token).
      res.writeHead(400).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook/${NOTIFY_SECRET}`,
    bodies,
    close: async () => {
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    },
  };
}

/** The shop edge with a credential header written inline on its `/account` route. */
function shopWithHeader(name: unknown = 'shop') {
  const edge = shop();
  const [account, hooks] = edge.routes;
  return {
    ...edge,
    name,
    routes: [
      {
        ...account,
        request_headers: { add: { Authorization: `Bearer ${INLINE_SECRET}`, 'X-Trace': 'on' } },
      },
      hooks,
    ],
  };
}

/** The daemon's arguments in these tests: trace logging, the secret directory, and `extra`. */
function daemonArgs(...extra: string[]): string[] {
  const timing = ['--interval', '1h', '--debounce', '50ms'];
  return [edges, ...timing, '--log-level', 'trace', '--secret-dir', secretDir, ...extra];
}

/** The daemon's environment: the server, the owner and the env secret the manifests read. */
function daemonEnv(): Record<string, string> {
  return {
    EDGESYNC_API_URL: server.url,
    EDGESYNC_API_KEY: server.apiKey,
    EDGESYNC_OWNER: 'default',
    GOOGLE_CLIENT_SECRET: ENV_SECRET,
  };
}

describe('edgesync run keeps keys and secrets out of its output', () => {
  it('through creates, secret rotation, a manifest error and API failures', async () => {
    await writeYaml(path.join(edges, 'shop.yaml'), [shop(), staff()]);
    const args = daemonArgs();
    const env = daemonEnv();
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
    expect(await daemon.stop()).toBe(0);

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

  it('through the status, events, metrics and notifications, with secrets set by hand live and an API echoing bodies', async () => {
    const receiver = await startReceiver();
    try {
      await writeYaml(path.join(edges, 'shop.yaml'), [shopWithHeader(), staff()]);
      const env = daemonEnv();
      const args = daemonArgs('--notify', receiver.url);
      const daemon = await startDaemon({ args, cwd: tmp.dir, env });
      await waitForCycle(daemon, 0, (s) => s.last_reconcile?.result === 'changed');

      // A credential header set by hand on the live edge: the next cycle puts the route back.
      await setLiveHeaders({ Authorization: `Bearer ${INLINE_SECRET}`, 'X-Api-Key': LIVE_SECRET });
      let t = Date.now();
      await fetch(`${daemon.base}/-/reconcile`, { method: 'POST' });
      await waitForCycle(daemon, t, (x) => x.last_reconcile?.result === 'changed');

      // Again, and now the API refuses the write with a message that quotes the request body.
      await setLiveHeaders({ Authorization: `Bearer ${INLINE_SECRET}`, 'X-Api-Key': LIVE_SECRET });
      server.knobs.echoBody = true;
      t = Date.now();
      await fetch(`${daemon.base}/-/reconcile`, { method: 'POST' });
      const s = await waitForCycle(daemon, t, (x) => x.last_reconcile?.result === 'error');
      // The echo is shown, masked: not silent.
      expect(s.last_error?.message).toContain('refusing the request body');
      expect(s.last_error?.message).toContain('(sensitive)');
      await waitFor('the error notified', () =>
        receiver.bodies.find((b) => b.includes('refusing the request body')),
      );
      await waitFor('the error cycle logged', () =>
        daemon.stdout().includes('"msg":"reconcile error"'),
      );
      await waitFor('a refused notification logged', () =>
        daemon.stdout().includes('notification refused'),
      );

      const status = JSON.stringify(await daemon.status());
      const events = await (await fetch(`${daemon.base}/events`)).text();
      const metrics = await daemon.metrics();
      expect(events).toContain('refusing the request body');
      expectNoSecret('/status', status, server.apiKey);
      expectNoSecret('/events', events, server.apiKey);
      expectNoSecret('/metrics', metrics, server.apiKey);
      expectNoSecret('the notifications', receiver.bodies.join('\n'), server.apiKey);
      assertNoLeak(daemon, server.apiKey);
    } finally {
      server.knobs.echoBody = false;
      await receiver.close();
    }
  });
});

describe('plan, validate and apply keep secrets out of every output', () => {
  const common = () => ['--secret-dir', secretDir];
  const cliEnv = () => ({
    EDGESYNC_API_URL: server.url,
    EDGESYNC_API_KEY: server.apiKey,
    EDGESYNC_LOG_LEVEL: 'debug',
    GOOGLE_CLIENT_SECRET: ENV_SECRET,
    EDGE_NAME: NAME_SECRET,
  });
  /** Every plan output of the current state (text, JSON, Markdown, saved); the text plan. */
  async function plans(): Promise<string> {
    let text = '';
    for (const output of ['text', 'json', 'markdown']) {
      const run = await cli(['plan', edges, ...common(), '--output', output], cliEnv());
      expect(run.code, run.stderr).toBe(0);
      expectNoSecret(`plan --output ${output}`, run.stdout + run.stderr, server.apiKey);
      if (output === 'text') text = run.stdout;
    }
    const planFile = path.join(tmp.dir, 'saved-plan.json');
    const saved = await cli(['plan', edges, ...common(), '--out', planFile], cliEnv());
    expect(saved.code, saved.stderr).toBe(0);
    expectNoSecret('plan --out', (await readFile(planFile, 'utf8')) + saved.stderr, server.apiKey);
    return text;
  }
  async function apply(expected: number): Promise<{ stdout: string; stderr: string }> {
    const run = await cli(['apply', edges, ...common(), '--yes', '--output', 'json'], cliEnv());
    expect(run.code, run.stderr).toBe(expected);
    expectNoSecret('apply', run.stdout + run.stderr, server.apiKey);
    return run;
  }

  it('a name read from env, in every plan format (Markdown escapes it) and apply', async () => {
    await writeYaml(path.join(edges, 'shop.yaml'), [{ ...shop(), name: { env: 'EDGE_NAME' } }]);
    expect(await plans()).toContain('https_edge.(sensitive)');
    const applied = await apply(0);
    expect(applied.stderr).toContain('"msg":"operation"');
  });

  it('a credential header set by hand on the live edge, in every plan format', async () => {
    await writeYaml(path.join(edges, 'shop.yaml'), [shop()]);
    await apply(0);
    await setLiveHeaders({ 'X-Trace': 'on', 'X-Api-Key': LIVE_SECRET, Cookie: LIVE_SECRET });
    const text = await plans();
    expect(text).toContain('x-api-key');
    expect(text).toContain('(sensitive)');
    await apply(0);
  });

  it('an API error that echoes the request body, with a credential header written inline', async () => {
    await writeYaml(path.join(edges, 'shop.yaml'), [shop()]);
    await apply(0);
    // The header comes in Git: the route's update carries it, and the API quotes it back.
    await writeYaml(path.join(edges, 'shop.yaml'), [shopWithHeader()]);
    server.knobs.echoBody = true;
    try {
      const refused = await apply(1);
      expect(refused.stdout).toContain('refusing the request body');
      expect(refused.stdout).toContain('(sensitive)');
    } finally {
      server.knobs.echoBody = false;
    }
    expect(await plans()).toContain('(sensitive)');
    await apply(0);
  });

  it('a value read from a file in a field that refuses it: validate, plan and apply', async () => {
    await writeFile(path.join(edges, 'secrets', 'provider'), BAD_FIELD_SECRET);
    await writeYaml(path.join(edges, 'shop.yaml'), [shop({ file: 'secrets/provider' })]);
    for (const command of ['validate', 'plan', 'apply']) {
      const extra = command === 'apply' ? ['--yes'] : [];
      const run = await cli([command, edges, ...common(), ...extra], cliEnv());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('unknown webhook provider "(sensitive)"');
      expectNoSecret(command, run.stdout + run.stderr, server.apiKey);
    }
  });
});
