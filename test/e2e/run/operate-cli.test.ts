/**
 * Operating a running daemon from the command line, as a person does: `edgesync status`,
 * `suspend`, `resume` and `reconcile` as child processes (the compiled CLI) against a daemon on
 * loopback that requires its control token; and `edgesync completion bash` loaded into a real
 * bash, completing commands, flags and a flag's values.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, spawnCli, stopChildren, waitFor } from '../../../bench/harness.js';
import { type InProcessDaemon, startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import { assertBuilt, tempDir, tlsEdge, writeYaml } from '../../integration/run/helpers.js';

const TOKEN = 'operate-cli-token-0123456789abcdef';

type Server = Awaited<ReturnType<typeof startTestServer>>;
let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let daemon: InProcessDaemon;

beforeAll(() => assertBuilt());

beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir();
  await writeYaml(path.join(tmp.dir, 'edges', 'tcp.yaml'), [tlsEdge('db'), tlsEdge('cache')]);
  daemon = await startDaemon({
    args: ['edges', '--interval', '1h'],
    cwd: tmp.dir,
    env: {
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'operate',
      EDGESYNC_CONTROL_TOKEN: TOKEN,
    },
  });
  await waitFor('the first cycle', async () => (await daemon.status()).ready || undefined);
});

afterEach(async () => {
  await stopChildren();
  await stopDaemons();
  await server.close();
  await tmp.cleanup();
});

async function edgesync(args: string[], env: Record<string, string> = {}) {
  const child = spawnCli(args, { env, cwd: tmp.dir });
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

describe('edgesync status', () => {
  it('prints the daemon and each resource like flux get, and its /status with -o json', async () => {
    const text = await edgesync(['status', '--url', daemon.base]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe(`Daemon:        ${daemon.base}`);
    expect(text.stdout).toMatch(/^Ready: +True$/m);
    expect(text.stdout).toMatch(/^Mode: +enforce$/m);
    expect(text.stdout).toMatch(/^Last cycle: +changed at \S+ \(startup, \d+ ms, 2 writes/m);
    expect(text.stdout).toMatch(/^KIND +ADDRESS +ID +STATE +REASON$/m);
    expect(text.stdout).toMatch(/^tls_edge +tls_edge\.cache +edgtls_\S+ +in_sync$/m);
    expect(text.stdout).toMatch(/^tls_edge +tls_edge\.db +edgtls_\S+ +in_sync$/m);
    expect(text.stdout).toContain('2 resources: 2 in sync, 0 not');

    const json = await edgesync(['status', '--url', daemon.base, '-o', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await daemon.status());
  });

  it('shows manifest errors with file:line:column', async () => {
    await writeYaml(path.join(tmp.dir, 'edges', 'bad.yaml'), [{ kind: 'TLSEdge', name: 'Bad' }]);
    await waitFor('the invalid cycle', async () => {
      const s = await daemon.status();
      return s.last_reconcile?.result === 'invalid' || undefined;
    });
    const text = await edgesync(['status', '--url', daemon.base]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Manifest errors:\n {2}bad\.yaml:2:7: name: names are /m);
    expect(text.stdout).toMatch(/^Last error: +1 error in 1 file: the manifests are invalid/m);
  });

  it('says so when no daemon answers, and when --url is not a daemon', async () => {
    const gone = await edgesync(['status', '--url', 'http://127.0.0.1:1']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(
      /^edgesync status: cannot reach the daemon at http:\/\/127\.0\.0\.1:1 \(.+\): is "edgesync run" running there\? \(--url URL\)\n$/,
    );
    const notOne = await edgesync(['status', '--url', server.url]);
    expect(notOne.code).toBe(1);
    expect(notOne.stderr).toContain('edgesync status: ');
    expect(notOne.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('edgesync suspend, resume, reconcile', () => {
  it('need the control token, and do what they say', async () => {
    const refused = await edgesync(['suspend', '--url', daemon.base]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `edgesync suspend: ${daemon.base} refused POST /-/suspend: it needs the control token (--control-token-file FILE or EDGESYNC_CONTROL_TOKEN)\n`,
    );
    const wrong = await edgesync(['suspend', '--url', daemon.base], {
      EDGESYNC_CONTROL_TOKEN: 'not-the-token-0123456789',
    });
    expect(wrong.stderr).toContain('wrong control token');
    expect(wrong.stderr).not.toContain('not-the-token');
    expect((await daemon.status()).suspended).toBe(false);

    const env = { EDGESYNC_CONTROL_TOKEN: TOKEN, EDGESYNC_DAEMON_URL: daemon.base };
    const suspended = await edgesync(['suspend'], env);
    expect(suspended).toEqual({ code: 0, stdout: '', stderr: `${daemon.base}: suspended\n` });
    expect((await daemon.status()).suspended).toBe(true);
    const again = await edgesync(['suspend'], env);
    expect(again.stderr).toBe(`${daemon.base} was already suspended: nothing changed\n`);
    const shown = await edgesync(['status'], env);
    expect(shown.stdout).toMatch(
      /^Mode: +observe \(suspended: "edgesync resume" lets it write again\)$/m,
    );

    const resumed = await edgesync(['resume'], env);
    expect(resumed).toEqual({ code: 0, stdout: '', stderr: `${daemon.base}: resumed\n` });
    expect((await daemon.status()).suspended).toBe(false);

    const requested = await edgesync(['reconcile'], env);
    expect(requested.code).toBe(0);
    expect(requested.stderr).toBe(
      `reconcile requested from ${daemon.base}; "edgesync status" shows its result\n`,
    );
    await waitFor('the requested cycle', async () => {
      const s = await daemon.status();
      return s.last_reconcile?.reason === 'webhook' || undefined;
    });
  });

  it('refuse a --url that is not http(s) or carries credentials (exit 64)', async () => {
    for (const url of ['ftp://127.0.0.1:9090', 'http://user:pass@127.0.0.1:9090']) {
      const r = await edgesync(['reconcile', '--url', url]);
      expect(r.code).toBe(64);
      expect(r.stderr).not.toContain('pass@');
    }
  });
});

describe('edgesync completion', () => {
  const run = promisify(execFile);

  /** What bash completes for the words typed (the last one being completed). */
  async function complete(words: string[]): Promise<string[]> {
    const script = [
      `source <("${process.execPath}" "${BIN}" completion bash)`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
      `COMP_CWORD=${words.length - 1}`,
      '_edgesync',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's, not a template
      'printf "%s\\n" "${COMPREPLY[@]}"',
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], { cwd: tmp.dir });
    return stdout.split('\n').filter((l) => l !== '');
  }

  it('bash completes commands, flags and the values a flag lists, from the flag definitions', async () => {
    expect(await complete(['edgesync', 'su'])).toEqual(['suspend']);
    expect(await complete(['edgesync', 're'])).toEqual(['release', 'reconcile', 'resume']);
    expect(await complete(['edgesync', 'plan', '--ta'])).toEqual(['--target']);
    expect(await complete(['edgesync', 'validate', '--output', ''])).toEqual(['text', 'json']);
    expect(await complete(['edgesync', 'plan', '-o', 'm'])).toEqual(['markdown']);
    expect(await complete(['edgesync', 'validate', 'ed'])).toEqual(['edges']);
  });

  it('zsh gets a script too; another shell is a usage error', async () => {
    const zsh = await edgesync(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.split('\n')[0]).toBe('#compdef edgesync');
    expect(zsh.stdout).toContain("'status:show a running daemon");
    expect(zsh.stdout).toMatch(/'\*--target=\[plan only this resource \(repeatable\)/);
    const fish = await edgesync(['completion', 'fish']);
    expect(fish.code).toBe(64);
  });
});
