/**
 * Every command line the README and the docs show in a ```sh block runs. Each page has a place
 * to run in: the README's and most pages' commands run in the repository with no API configured
 * (as a user of a fresh clone would); the getting-started page's run in order, in an empty
 * project where `npx edgesync` is this package, against a local server of the test's own (the
 * page starts one on port 8787 in a second terminal; the test's has a free port, and sets the
 * page's `export` itself). Each line must exit 0. The lines not run are listed below with the
 * reason; a listed line no page shows any more fails the test, so the list cannot go stale
 * silently, and a new line on a page is run unless it is listed.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdirSync, readFileSync, symlink } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir } from '../../integration/run/helpers.js';

const run = promisify(execFile);
const mkdirP = promisify(mkdir);
const link = promisify(symlink);
const repo = path.resolve(import.meta.dirname, '../../..');

/** The pages whose sh blocks are read: the README and every page under docs/. */
const PAGES = [
  'README.md',
  ...readdirSync(path.join(repo, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f.split(path.sep).join('/')}`)
    .sort(),
];

/** The page whose commands run in order in an empty project, against the test's server. */
const PROJECT_PAGE = 'docs/getting-started.md';

const A_REAL_ACCOUNT = 'a real account';
const LONG_RUNNING = 'a long-running process (the e2e run tests start the daemon and the server)';
const PLACEHOLDER =
  'an example with placeholder directories; getting-started.md runs the same commands';
const WHOLE_SUITE = 'the project’s own build or test scripts (CI runs them)';

/** Command lines not run here, by page, and why. */
const NOT_RUN: Record<string, Record<string, string>> = {
  'README.md': {
    'npm ci && npm start': 'reinstalls node_modules, then a long-running daemon',
    'npm test': 'the whole suite, this test included',
    'curl -s -H "Authorization: Bearer $(cat .edgesync/api-key)" -H \'Svc-Version: 2\' http://127.0.0.1:8787/edges/https':
      'needs the daemon that npm start runs',
    'export EDGESYNC_API_URL=https://api.example.com EDGESYNC_API_KEY=...': A_REAL_ACCOUNT,
    'echo team-web > edges/.edgesync-owner': "writes into a real account's manifest directory",
    'npx edgesync validate edges/': "a real account's manifest directory",
    'npx edgesync plan edges/': A_REAL_ACCOUNT,
    'npx edgesync run edges/': `${A_REAL_ACCOUNT}, and ${LONG_RUNNING}`,
    'npm pack': 'rebuilds and writes a tarball (test/e2e/ship covers installing it)',
    'npm install --save-dev ./edgesync-0.2.0.tgz': 'runs in your project, after npm pack',
    'npx edgesync --version': 'runs in the project that installed the package',
    'npm install --save-dev "git+https://git.example.com/your-org/edgesync.git#v0.2.0"':
      'a Git host (network)',
  },
  [PROJECT_PAGE]: {
    'npx edgesync server --api-key dev-key': `${LONG_RUNNING}; the test starts its own server`,
    'export EDGESYNC_API_URL=http://127.0.0.1:8787 EDGESYNC_API_KEY=dev-key':
      'the test sets these to its own server',
    'npx edgesync run edges/': LONG_RUNNING,
    'npx edgesync migrate old-edges/ --out endpoints/ --backends backends.yaml':
      'placeholder edge manifests; docs/migrate.md runs migrate on the examples',
  },
  'docs/daemon.md': {
    'node --expose-gc --heap-growing-percent=25 --max-semi-space-size=8 "$(npm root -g)/edgesync/bin/edgesync.js" run manifests/': `a global install, and ${LONG_RUNNING}`,
  },
  'docs/development.md': Object.fromEntries(
    [
      'npm run check',
      'npm run build',
      'npm run format',
      'npm run coverage',
      'npm run docs',
      'npm run test:unit',
      'npm run test:integration',
      'npm run test:e2e',
      "npx vitest run --project 'integration*' test/integration/plan",
      'npm run build && node bin/edgesync.js schema > schema/edgesync.schema.json',
    ].map((c) => [c, WHOLE_SUITE]),
  ),
  'docs/kubernetes.md': {
    'docker build -t edgesync .': 'a container engine (test/e2e/ship replays the image build)',
    'docker run --rm -v "$PWD/edges:/manifests:ro" -p 9090:9090    -e EDGESYNC_API_URL=https://api.example.com -e EDGESYNC_API_KEY    edgesync': `a container engine, ${A_REAL_ACCOUNT}, and ${LONG_RUNNING}`,
  },
  'docs/migrate.md': {
    'npx edgesync migrate edges/ --out endpoints/ --backends backends.yaml': PLACEHOLDER,
    'node bin/edgesync.js migrate config-examples/edges --out /tmp/endpoints    --backends config-examples/migrate/backends.yaml':
      'the page shows it refusing the lossy parts (exit 1); test/integration/docs/migrate-example.test.ts checks that output',
    'node bin/edgesync.js test /tmp/endpoints':
      "runs on the output of the migrate line above, which is not run here; test/integration/migrate/policy-tests.test.ts runs the migrated examples' tests",
  },
  'docs/policy-tests.md': {
    'edgesync test [DIR]': PLACEHOLDER,
    'edgesync test DIR --output json': PLACEHOLDER,
  },
  'docs/reference/cli.md': Object.fromEntries(
    [
      'edgesync plan edges/',
      'edgesync plan edges/ --detailed-exitcode',
      'edgesync plan edges/ --output markdown > plan.md',
      'edgesync plan edges/ --out plan.json',
      'edgesync apply edges/',
      'edgesync apply edges/ --yes --concurrency 8 --rate-limit 120/60s',
      'edgesync plan edges/ --out plan.json && edgesync apply plan.json --dir edges/',
      'edgesync release HTTPSEdge/storefront --dry-run',
      'edgesync release HTTPSEdge/storefront TLSEdge/legacy-db',
      'git rm edges/storefront.yaml edges/legacy-db.yaml',
      'edgesync plan edges/ --target https_edge.storefront',
      'edgesync apply edges/ --target https_edge.storefront --target bot_user.ci --yes',
    ]
      .map((c) => [c, `${PLACEHOLDER} (and ${A_REAL_ACCOUNT})`])
      .concat(
        ['source <(edgesync completion bash)', 'source <(edgesync completion zsh)'].map((c) => [
          c,
          "a line for a shell's startup file; test/e2e/run/operate-cli.test.ts loads the completion in a real bash",
        ]),
      ),
  ),
  'docs/reference/http-endpoints.md': {
    'edgesync run edges/ --listen 0.0.0.0:9090 --admin-listen 127.0.0.1:9091': LONG_RUNNING,
    'curl -XPOST http://127.0.0.1:9091/-/suspend': 'needs that daemon',
    'edgesync run edges/ --listen 0.0.0.0:9090 --control-token-file /var/run/secrets/edgesync/control-token':
      LONG_RUNNING,
    'curl -XPOST -H "Authorization: Bearer $(cat token)" http://edgesync:9090/-/reconcile':
      'needs that daemon',
    "curl 'http://127.0.0.1:9090/status/resources?state=out_of_sync&limit=20'":
      'needs a running daemon; test/integration/daemon/http.test.ts serves the same query',
  },
  'docs/reference/manifests.md': {
    "edgesync plan . --exclude 'k8s/**' --exclude '**/*.ci.yaml'": PLACEHOLDER,
    "EDGESYNC_EXCLUDE='k8s/**,.github/**' edgesync run .": LONG_RUNNING,
  },
  'docs/server.md': {
    'edgesync server': LONG_RUNNING,
    'edgesync server --data .edgesync/server --api-key "$KEY" --port 8787': LONG_RUNNING,
    'EDGESYNC_SERVER_API_KEYS=key1,key2 edgesync server': LONG_RUNNING,
    'curl -H "Authorization: Bearer $KEY" -H \'Svc-Version: 2\' http://127.0.0.1:8787/edges/https':
      'needs that server',
  },
};

/**
 * The command lines of a page's sh blocks: comments dropped, continued lines joined, and a
 * here-document kept with its command as one multi-line command.
 */
function pageCommands(page: string): string[] {
  const tokens = new MarkdownIt().parse(readFileSync(path.join(repo, page), 'utf8'), {});
  const commands: string[] = [];
  for (const t of tokens.filter((t) => t.type === 'fence' && t.info.trim() === 'sh')) {
    const lines = t.content.replaceAll('\\\n', ' ').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] ?? '';
      const heredoc = /<<-?\s*'?([A-Z_]+)'?\s*$/.exec(raw);
      if (heredoc !== null) {
        const end = lines.indexOf(heredoc[1] as string, i + 1);
        commands.push(lines.slice(i, end + 1).join('\n'));
        i = end;
        continue;
      }
      const line = raw.replace(/(^|\s+)#\s.*$/, '').trim();
      if (line !== '' && !line.startsWith('#')) commands.push(line);
    }
  }
  return commands;
}

/** The environment of a user with no API configured. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('EDGESYNC_') && !/_proxy$/i.test(k)) env[k] = v;
  return env;
}

async function sh(command: string, cwd: string, env: NodeJS.ProcessEnv) {
  const r = await run('sh', ['-c', command], { cwd, env }).then(
    (ok) => ({ code: 0, ...ok }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  return { command, code: r.code, stderr: r.code === 0 ? '' : r.stderr };
}

const shown = Object.fromEntries(PAGES.map((p) => [p, pageCommands(p)]));
const runnable = (page: string) =>
  (shown[page] ?? []).filter((c) => NOT_RUN[page]?.[c] === undefined);

beforeAll(() => assertFreshBuild());

describe('the shell blocks of the README and the docs', () => {
  it('are read, and every line not run here is one its page still shows', () => {
    expect(runnable('README.md').length).toBeGreaterThanOrEqual(4);
    expect(runnable(PROJECT_PAGE).length).toBeGreaterThanOrEqual(8);
    const stale = Object.entries(NOT_RUN).flatMap(([page, lines]) =>
      Object.keys(lines)
        .filter((c) => !(shown[page] ?? []).includes(c))
        .map((c) => `${page}: ${c}`),
    );
    expect(stale).toEqual([]);
  });

  const inRepository = PAGES.filter((p) => p !== PROJECT_PAGE).flatMap((page) =>
    runnable(page).map((command) => [page, command] as const),
  );
  it.each(inRepository)('%s: %s exits 0', async (_page, command) => {
    expect(await sh(command, repo, offlineEnv())).toEqual({ command, code: 0, stderr: '' });
  });
});

describe(`${PROJECT_PAGE}, in an empty project against a local server`, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let project: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    server = await startTestServer();
    project = await tempDir();
    // The project that installed edgesync: npx finds the package's executable in node_modules.
    await mkdirP(path.join(project.dir, 'node_modules', '.bin'), { recursive: true });
    await link(repo, path.join(project.dir, 'node_modules', 'edgesync'));
    await link(
      path.join('..', 'edgesync', 'bin', 'edgesync.js'),
      path.join(project.dir, 'node_modules', '.bin', 'edgesync'),
    );
  });
  afterAll(async () => {
    await project?.cleanup();
    await server?.close();
  });

  // About ten commands, each a Node process: more than the default 30 s on a busy machine.
  it('runs every command in order, each exiting 0', { timeout: 180_000 }, async () => {
    const env = {
      ...offlineEnv(),
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: server.apiKey,
    };
    const results = [];
    for (const command of runnable(PROJECT_PAGE)) {
      results.push(await sh(command, project.dir, env));
    }
    expect(results).toEqual(
      runnable(PROJECT_PAGE).map((command) => ({ command, code: 0, stderr: '' })),
    );
    // What the page says the commands leave behind.
    const imported = readdirSync(path.join(project.dir, 'imported')).sort();
    expect(imported).toEqual(['.edgesync-owner', 'bot-ci-deployer.yaml', 'endpoint-shop.yaml']);
  });
});
