/**
 * Desired state unknown is never "empty" (issue 9): every entry of the manifest tree that cannot
 * be listed, stat'ed, resolved or read is a located diagnostic and makes the set invalid, and a
 * link may not lead the loader outside the tree. End to end: `validate` fails and `apply` writes
 * nothing, counted at the local server.
 */

import { execFileSync } from 'node:child_process';
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer as createNetServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/manifest/diagnostics.js';
import { type LoaderFs, loadManifests } from '../../../src/manifest/loader.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiEnv, runCli } from '../apply/helpers.js';

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'edgesync-unknown-'));
  dir = path.join(root, 'edges');
  await mkdir(dir);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(rel: string, content: string): Promise<void> {
  const file = path.join(dir, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

const tls = (name: string) =>
  `kind: TLSEdge\nname: ${name}\nhostports: [${name}.example.com:443]\n`;

async function lines(options: Parameters<typeof loadManifests>[1] = {}): Promise<string[]> {
  const result = await loadManifests(dir, { env: {}, ...options });
  expect(result.ok).toBe(result.diagnostics.length === 0);
  return result.diagnostics.map(formatDiagnostic);
}

describe('entries that cannot be read are diagnostics, whatever their name', () => {
  it('a dangling link to a directory', async () => {
    await put('a.yaml', tls('a'));
    await symlink(path.join(root, 'gone'), path.join(dir, 'team-b'));
    expect(await lines()).toEqual(['team-b:1:1: broken symbolic link: its target does not exist']);
  });

  it('a dangling link to a file', async () => {
    await symlink('missing.yaml', path.join(dir, 'b.yaml'));
    await symlink('missing.txt', path.join(dir, 'notes'));
    expect(await lines()).toEqual([
      'b.yaml:1:1: broken symbolic link: its target does not exist',
      'notes:1:1: broken symbolic link: its target does not exist',
    ]);
  });

  it('a symlink loop', async () => {
    await symlink('loop-b', path.join(dir, 'loop-a'));
    await symlink('loop-a', path.join(dir, 'loop-b'));
    expect(await lines()).toEqual([
      'loop-a:1:1: symbolic link loop: the link cannot be resolved',
      'loop-b:1:1: symbolic link loop: the link cannot be resolved',
    ]);
  });

  it('a directory linked to itself inside the tree is read once, not an error', async () => {
    await put('team/a.yaml', tls('a'));
    await symlink('..', path.join(dir, 'team', 'again'));
    const result = await loadManifests(dir, { env: {} });
    expect(result.diagnostics).toEqual([]);
    expect(result.files).toEqual(['team/a.yaml']);
  });

  it('a FIFO and a socket, even without a manifest extension', async () => {
    execFileSync('mkfifo', [path.join(dir, 'pipe.yaml')]);
    const socketPath = path.join(dir, 'sock');
    const server: Server = createNetServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      expect(await lines()).toEqual([
        'pipe.yaml:1:1: a named pipe (FIFO) in the manifest directory: cannot be read',
        'sock:1:1: a socket in the manifest directory: cannot be read',
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  // Tests run as root, which ignores permission bits, and a real EIO or device node cannot be
  // made here: these errors come from an injected file system that fails like the kernel would.
  const failing = (pattern: RegExp, call: keyof LoaderFs, code: string): LoaderFs => {
    const fail = (p: string) => {
      if (pattern.test(p)) {
        throw Object.assign(new Error(`${code}: simulated, ${call} '${p}'`), { code });
      }
    };
    const guard =
      <A extends unknown[], R>(name: keyof LoaderFs, fn: (p: string, ...rest: A) => R) =>
      (p: string, ...rest: A): R => {
        if (call === name) fail(p);
        return fn(p, ...rest);
      };
    return {
      lstat: guard('lstat', lstat) as LoaderFs['lstat'],
      stat: guard('stat', stat) as LoaderFs['stat'],
      readdir: guard('readdir', (p: string) => readdir(p)),
      realpath: guard('realpath', realpath) as LoaderFs['realpath'],
      readFile: guard('readFile', (p: string) => readFile(p)),
    };
  };

  it.each([
    [
      'an unreadable subdirectory (EACCES)',
      /private$/,
      'readdir',
      'EACCES',
      'private:1:1: cannot list directory: EACCES',
    ],
    [
      'an unreadable file (EACCES)',
      /b\.yaml$/,
      'readFile',
      'EACCES',
      'b.yaml:1:1: cannot read file: EACCES',
    ],
    ['an I/O error (EIO)', /b\.yaml$/, 'readFile', 'EIO', 'b.yaml:1:1: cannot read file: EIO'],
    ["an entry that cannot be stat'ed", /b\.yaml$/, 'lstat', 'EIO', 'b.yaml:1:1: cannot stat: EIO'],
  ] as const)('%s', async (_name, pattern, call, code, expected) => {
    await put('a.yaml', tls('a'));
    await put('b.yaml', tls('b'));
    await put('private/c.yaml', tls('c'));
    const result = await lines({ fs: failing(pattern, call, code) });
    expect(result).toHaveLength(1);
    expect(result[0]).toMatch(new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('a device', async () => {
    await put('a.yaml', tls('a'));
    const fs: LoaderFs = {
      lstat: (async (p: string) => {
        const info = await lstat(p);
        if (!p.endsWith('a.yaml')) return info;
        return Object.assign(Object.create(Object.getPrototypeOf(info)), info, {
          isFile: () => false,
          isCharacterDevice: () => true,
        });
      }) as LoaderFs['lstat'],
      stat,
      readdir: (p) => readdir(p),
      realpath,
      readFile,
    };
    expect(await lines({ fs })).toEqual([
      'a.yaml:1:1: a device in the manifest directory: cannot be read',
    ]);
  });
});

describe('the tree is confined', () => {
  it.each([
    ['up -> ..', 'up', '..'],
    ['r -> /', 'r', '/'],
    ['a file outside', 'outside.yaml', '../secret.yaml'],
  ])(
    'a link that escapes (%s) is a diagnostic and nothing behind it is read',
    async (_n, name, target) => {
      await writeFile(path.join(root, 'secret.yaml'), tls('outside'));
      await put('a.yaml', tls('a'));
      await symlink(target, path.join(dir, name));
      const result = await loadManifests(dir, { env: {} });
      expect(result.ok).toBe(false);
      expect(result.diagnostics.map(formatDiagnostic)).toEqual([
        `${name}:1:1: symbolic link points outside the manifest directory: not read`,
      ]);
      expect(result.files).toEqual(['a.yaml']);
    },
  );

  it('links inside the tree are followed', async () => {
    await put('real/a.yaml', tls('a'));
    await symlink('real', path.join(dir, 'alias'));
    await symlink('real/a.yaml', path.join(dir, 'b.yaml'));
    const result = await loadManifests(dir, { env: {} });
    // `alias` is the same directory as `real`, read once; `b.yaml` is the same file: a duplicate.
    expect(result.files).toEqual(['alias/a.yaml', 'b.yaml']);
  });

  it('manifest extensions match in any case', async () => {
    await put('A.YAML', tls('a'));
    await put('b.Yml', tls('b'));
    await put('c.yAmL.txt', tls('c'));
    const result = await loadManifests(dir, { env: {} });
    expect(result.files).toEqual(['A.YAML', 'b.Yml']);
    expect(result.ok && result.set.tlsEdges.map((e) => e.name)).toEqual(['a', 'b']);
  });
});

describe('end to end: validate refuses, apply writes nothing', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('a file name cannot forge a diagnostic line or clear the terminal', async () => {
    const esc = String.fromCharCode(27);
    await put(`evil${esc}[2J\rok.yaml`, 'kind: TLSEdge\nname: x\nbogus: 1\n');
    const validate = await runCli(['validate', dir], { env: {} });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('evil\\x1b[2J\\rok.yaml:3:1: unknown field "bogus"');
    expect(validate.stderr).not.toContain(esc);
    expect(validate.stderr).not.toContain('\r');
  });

  it('a directory of edges replaced by a dangling link deletes nothing', async () => {
    const env = { ...apiEnv(server.url, server.apiKey) };
    await put('team-a/a.yaml', tls('a'));
    await put('b.yaml', tls('b'));
    const first = await runCli(['apply', '--yes', dir], { env });
    expect(first.code).toBe(0);

    // The team's directory becomes a link whose target is gone (an unmounted volume, a bad
    // git-sync checkout): its edges are unknown, not absent.
    await rm(path.join(dir, 'team-a'), { recursive: true });
    await symlink(path.join(root, 'unmounted'), path.join(dir, 'team-a'));

    const validate = await runCli(['validate', dir], { env });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('team-a:1:1: broken symbolic link');

    const before = writesAt(server);
    const apply = await runCli(['apply', '--yes', dir], { env });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain('team-a:1:1: broken symbolic link');
    expect(writesAt(server)).toBe(before);
  });
});
