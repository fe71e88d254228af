/**
 * Every command line the README shows in a ```sh block runs: this test runs each one that can
 * run offline, in the repository, and expects exit status 0. The others are listed below, each
 * with the reason it is not run here; a listed line the README no longer shows fails the test,
 * so the list cannot go stale silently.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import MarkdownIt from 'markdown-it';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '../../..');

/** Command lines not run here, and why. */
const NOT_RUN: Record<string, string> = {
  'npm ci && npm start': 'reinstalls node_modules, then a long-running daemon',
  'npm test': 'the whole suite, this test included',
  'curl -s -H "Authorization: Bearer $(cat .edgesync/api-key)" -H \'Svc-Version: 2\' http://127.0.0.1:8787/edges/https':
    'needs the daemon that npm start runs',
  'export EDGESYNC_API_URL=https://api.example.com EDGESYNC_API_KEY=...': 'a real account',
  'echo team-web > edges/.edgesync-owner': "writes into a real account's manifest directory",
  'npx edgesync validate edges/': "a real account's manifest directory",
  'npx edgesync plan edges/': 'a real account',
  'npx edgesync run edges/': 'a real account, and a long-running daemon',
  'npm pack': 'rebuilds and writes a tarball (test/e2e/ship covers installing it)',
  'npm install --save-dev ./edgesync-0.2.0.tgz': 'runs in your project, after npm pack',
  'npx edgesync --version': 'runs in the project that installed the package',
  'npm install --save-dev "git+https://git.example.com/your-org/edgesync.git#v0.2.0"':
    'a Git host (network)',
};

/** The command lines of the README's sh blocks: comments dropped, continued lines joined. */
function readmeCommands(): string[] {
  const tokens = new MarkdownIt().parse(readFileSync(path.join(repo, 'README.md'), 'utf8'), {});
  return tokens
    .filter((t) => t.type === 'fence' && t.info.trim() === 'sh')
    .flatMap((t) => t.content.replaceAll('\\\n', ' ').split('\n'))
    .map((line) => line.replace(/(^|\s+)#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The environment of a user with no API configured. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('EDGESYNC_') && !/_proxy$/i.test(k)) env[k] = v;
  return env;
}

const commands = readmeCommands();
const runnable = commands.filter((c) => NOT_RUN[c] === undefined);

beforeAll(() => assertFreshBuild());

describe('the README shell blocks', () => {
  it('are read, and every line not run here is one the README still shows', () => {
    expect(runnable.length).toBeGreaterThanOrEqual(4);
    expect(Object.keys(NOT_RUN).filter((c) => !commands.includes(c))).toEqual([]);
  });

  it.each(runnable)('%s exits 0', async (command) => {
    const r = await run('sh', ['-c', command], { cwd: repo, env: offlineEnv() }).then(
      (ok) => ({ code: 0, ...ok }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect({ command, code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({
      command,
      code: 0,
      stderr: '',
    });
  });
});
