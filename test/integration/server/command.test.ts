/**
 * The `server` command in-process: flags and environment, the start-up lines (URL and keys on
 * stderr), serving until the signal aborts, a clean exit 0, and usage errors (exit 64).
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { run } from '../../../src/cli/commands/server.js';
import type { CliContext } from '../../../src/cli/context.js';
import { main } from '../../../src/cli/main.js';
import { UsageError } from '../../../src/errors.js';
import { generateApiKey } from '../../../src/server/index.js';
import { clientFor } from './client.js';

function context(argv: string[], env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  stdout.resume();
  const controller = new AbortController();
  const ctx: CliContext = {
    argv,
    stdout,
    stderr,
    env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
  return { ctx, controller, stderr: () => err };
}

function waitForLine(read: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  return waitFor(`${pattern} in the output`, () => pattern.exec(read()) ?? undefined);
}

describe('edgesync server', () => {
  it('prints URL and keys, serves every key (flags and env), exits 0 on abort', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgesync-cmd-'));
    try {
      const { ctx, controller, stderr } = context(
        [
          '--port',
          '0',
          '--api-key',
          'flag-key',
          '--data',
          dir,
          '--rate-limit',
          '100/1s',
          '--latency',
          '0-1',
        ],
        { EDGESYNC_SERVER_API_KEYS: 'env-a, env-b', EDGESYNC_LOG_LEVEL: 'silent' },
      );
      const done = run(ctx);
      const url = (
        await waitForLine(stderr, /listening on (http:\/\/127\.0\.0\.1:\d+)/)
      )[1] as string;
      await waitForLine(stderr, /env-b/);
      expect(stderr()).toContain('flag-key');
      expect(stderr()).toContain('env-a');
      for (const key of ['flag-key', 'env-a', 'env-b']) {
        expect((await clientFor({ url }, key)('POST', '/bot_users', { name: key })).status).toBe(
          201,
        );
      }
      expect((await clientFor({ url }, 'nope')('GET', '/bot_users')).status).toBe(401);
      controller.abort();
      expect(await done).toBe(0);
      expect(await readdir(dir)).toContain('log-0.jsonl');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('generates and prints a key when none is given', async () => {
    const { ctx, controller, stderr } = context(
      ['--port', '0', '--public-url', 'https://edge.example.test/'],
      {
        EDGESYNC_LOG_LEVEL: 'silent',
      },
    );
    const done = run(ctx);
    const url = (await waitForLine(stderr, /listening on (\S+)/))[1] as string;
    const key = (
      await waitForLine(stderr, /generated API key:\n {2}(esk_[0-9A-Za-z]{32})/)
    )[1] as string;
    const r = await clientFor({ url }, key)('POST', '/bot_users', { name: 'x' });
    expect(r.status).toBe(201);
    expect(r.json.uri).toMatch(/^https:\/\/edge\.example\.test\/bot_users\/bot_/);
    controller.abort();
    expect(await done).toBe(0);
  });

  it('--require-reserved-domains and --cnames-created set the domain knobs', async () => {
    const key = generateApiKey();
    const { ctx, controller, stderr } = context(
      ['--port', '0', '--api-key', key, '--require-reserved-domains', '--cnames-created'],
      { EDGESYNC_LOG_LEVEL: 'silent' },
    );
    const done = run(ctx);
    const url = (await waitForLine(stderr, /listening on (\S+)/))[1] as string;
    const call = clientFor({ url }, key);
    const policy = '{"on_http_request":[{"actions":[{"type":"deny"}]}]}';
    const bare = await call('POST', '/endpoints', {
      url: 'https://app.example.com',
      traffic_policy: policy,
    });
    expect(bare.json.error_code).toBe('ERR_SVC_319');
    const domain = await call('POST', '/reserved_domains', { domain: 'app.example.com' });
    expect(domain.json.certificate.id).toMatch(/^cert_/);
    const on = await call('POST', '/endpoints', {
      url: 'https://app.example.com',
      traffic_policy: policy,
    });
    expect(on.json.domain.id).toBe(domain.json.id);
    controller.abort();
    expect(await done).toBe(0);
  });

  it.each([
    [['--port', '70000']],
    [['--port', 'x']],
    [['--rate-limit', 'fast']],
    [['--rate-limit', '0/1s']],
    [['--latency', '5-1']],
    [['--fault-rate', '2']],
    [['--reset-rate', '-0.1']],
    [['--public-url', 'not a url']],
    [['--bogus']],
    [['positional']],
    [['--data', '']],
  ])('rejects %j with a usage error (exit 64)', async (argv) => {
    const { ctx } = context(argv);
    await expect(run(ctx)).rejects.toBeInstanceOf(UsageError);
    const viaMain = context(['server', ...argv]);
    expect(await main(viaMain.ctx)).toBe(64);
    expect(viaMain.stderr()).toMatch(/^edgesync server: /);
  });

  it.each([
    // procfs answers ENOENT for any new child: Node's recursive mkdir spun forever on it.
    [
      'a data directory that cannot be created',
      ['--data', '/proc/edgesync-no-such/data'],
      /cannot open the data directory \/proc\/edgesync-no-such\/data/,
    ],
    ['a data path that is a file', ['--data', '<file>'], /cannot open the data directory/],
    ['a port in use', ['--port', '<busy>'], /cannot listen on 127\.0\.0\.1:\d+: address in use/],
  ])('fails to start on %s: exit 1, one clear line, no stack', async (_what, flags, message) => {
    const dir = await mkdtemp(join(tmpdir(), 'edgesync-cmd-'));
    const busy = createNetServer();
    try {
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const port = String((busy.address() as AddressInfo).port);
      const file = join(dir, 'file');
      await writeFile(file, 'x');
      const fill = (f: string) => (f === '<file>' ? file : f === '<busy>' ? port : f);
      const argv = ['server', '--port', '0', ...flags.map(fill)];
      const { ctx, stderr } = context(argv, { EDGESYNC_LOG_LEVEL: 'silent' });
      expect(await main(ctx)).toBe(1);
      expect(stderr()).toMatch(message);
      expect(stderr()).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--help prints the flags on stdout and exits 0', async () => {
    const { ctx } = context(['--help']);
    let out = '';
    ctx.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    expect(await run(ctx)).toBe(0);
    for (const flag of [
      '--host',
      '--port',
      '--data',
      '--api-key',
      '--public-url',
      '--rate-limit',
      '--latency',
      '--fault-rate',
      '--reset-rate',
    ]) {
      expect(out).toContain(flag);
    }
  });
});

describe('generated API keys', () => {
  it('are always esk_ and 32 base62 characters', () => {
    for (let i = 0; i < 2000; i++) expect(generateApiKey()).toMatch(/^esk_[0-9A-Za-z]{32}$/);
  });
});
