/**
 * The loader on the real file system: discovery (recursion, extensions, dot-names, symlinks),
 * the symlinked (git-sync) directory, missing directories, `{ file }` confinement, and the
 * committed examples.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManifestDirError, ManifestError } from '../../../src/errors.js';
import { ROUTE_MODULES } from '../../../src/hosted/modules/index.js';
import { FileCache } from '../../../src/manifest/build.js';
import { formatDiagnostic } from '../../../src/manifest/diagnostics.js';
import { loadDesiredSet, loadManifests } from '../../../src/manifest/loader.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'edgesync-manifest-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(rel: string, content: string): Promise<void> {
  const file = path.join(root, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

const bot = (name: string) => `kind: BotUser\nname: ${name}\n`;

describe('loadManifests', () => {
  it('reads *.yaml and *.yml recursively, in a deterministic order, skipping dot-names', async () => {
    await put('b.yaml', bot('b'));
    await put('a.yml', `${bot('a')}---\n${bot('a2')}`);
    await put('team/z/c.yaml', bot('c'));
    await put('notes.txt', 'kind: nonsense');
    await put('.hidden.yaml', 'not: [valid');
    await put('.git/config.yaml', 'not: [valid');
    await put('..2024_01_01/x.yaml', 'not: [valid');
    await symlink('..2024_01_01', path.join(root, '..data'));
    await put('team/.cache/d.yaml', 'not: [valid');
    const result = await loadManifests(root, { env: {} });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([]);
    expect(result.files).toEqual(['a.yml', 'b.yaml', 'team/z/c.yaml']);
    expect(
      result.ok && result.set.botUsers.map((b) => `${b.name}@${b.source.file}:${b.source.line}`),
    ).toEqual(['a@a.yml:1', 'a2@a.yml:4', 'b@b.yaml:1', 'c@team/z/c.yaml:1']);
    expect(result.counts).toEqual({
      files: 3,
      documents: 4,
      tls_edges: 0,
      https_edges: 0,
      routes: 0,
      bot_users: 4,
      cloud_endpoints: 0,
    });
    expect(result.revision).toBeNull();
  });

  it('follows file symlinks, as in a Kubernetes ConfigMap volume', async () => {
    await put('..2024_06_01/edges.yaml', bot('from-configmap'));
    await symlink('..2024_06_01', path.join(root, '..data'));
    await symlink('..data/edges.yaml', path.join(root, 'edges.yaml'));
    const result = await loadManifests(root, { env: {} });
    expect(result.ok && result.set.botUsers.map((b) => b.name)).toEqual(['from-configmap']);
  });

  it('reads a symlinked directory once, from its target, and reports the link target as revision', async () => {
    await put('rev-abc123/edges.yaml', bot('one'));
    const link = path.join(root, 'current');
    await symlink(path.join(root, 'rev-abc123'), link);
    const result = await loadManifests(link, { env: {} });
    expect(result.revision).toBe('rev-abc123');
    expect(result.resolvedDir).toBe(
      path.join(await import('node:fs/promises').then((f) => f.realpath(root)), 'rev-abc123'),
    );
    expect(result.dir).toBe(link);
    expect(result.ok && result.set.botUsers.map((b) => b.name)).toEqual(['one']);
  });

  it('treats a symlink loop inside the tree as one directory', async () => {
    await put('a/x.yaml', bot('x'));
    await symlink('..', path.join(root, 'a', 'loop'));
    const result = await loadManifests(root, { env: {} });
    expect(result.ok && result.set.botUsers.map((b) => b.name)).toEqual(['x']);
  });

  it('an empty directory is an empty, valid set', async () => {
    const result = await loadManifests(root, { env: {} });
    expect(result.ok && result.set).toEqual({
      tlsEdges: [],
      httpsEdges: [],
      botUsers: [],
      cloudEndpoints: [],
    });
  });

  it.each([
    ['missing', (r: string) => path.join(r, 'nope'), /does not exist: desired state unknown/],
    [
      'a dangling symlink',
      (r: string) => path.join(r, 'dangling'),
      /does not exist: desired state unknown/,
    ],
    ['a file', (r: string) => path.join(r, 'file.yaml'), /is not a directory/],
    [
      'an unreadable',
      (r: string) => path.join(r, 'file.yaml', 'sub'),
      /cannot be read \(a path component is not a directory\)/,
    ],
  ])('a %s directory throws ManifestDirError', async (_what, dirOf, message) => {
    await put('file.yaml', bot('x'));
    await symlink(path.join(root, 'gone'), path.join(root, 'dangling'));
    const dir = dirOf(root);
    const err = await loadManifests(dir, { env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestDirError);
    expect((err as ManifestDirError).message).toMatch(message);
    expect((err as ManifestDirError).dir).toBe(dir);
  });

  it('refuses a file over the size cap before reading it', async () => {
    await put('big.yaml', `${bot('x')}# ${'x'.repeat(2000)}\n`);
    const result = await loadManifests(root, { env: {}, maxFileBytes: 1000 });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      'big.yaml:1:1: file is 2025 bytes, over the 1000-byte limit',
    ]);
  });

  it('resolves { file } relative to the manifest, inside the tree only, unless allowed', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'edgesync-secrets-'));
    try {
      await writeFile(path.join(outside, 'secret'), 's3cret\n');
      await put('shared/desc.txt', 'Shared description\n');
      await put(
        'team/a.yaml',
        `kind: TLSEdge\nname: a\ndescription: { file: ../shared/desc.txt }\n---\nkind: TLSEdge\nname: b\ndescription: { file: ${path.join(outside, 'secret')} }\n---\nkind: TLSEdge\nname: c\ndescription: { file: ../../${path.basename(outside)}/secret }\n`,
      );
      await symlink(path.join(outside, 'secret'), path.join(root, 'team', 'link-out'));
      await put('team/b.yaml', 'kind: TLSEdge\nname: d\ndescription: { file: link-out }\n');

      const refused = await loadManifests(root, { env: {} });
      expect(refused.diagnostics.map(formatDiagnostic)).toEqual([
        `team/a.yaml:7:22: description: file ${path.join(outside, 'secret')} is outside the manifest directory (allow its directory with --secret-dir)`,
        `team/a.yaml:11:22: description: file ../../${path.basename(outside)}/secret is outside the manifest directory (allow its directory with --secret-dir)`,
        'team/b.yaml:3:22: description: file link-out is outside the manifest directory (allow its directory with --secret-dir)',
        'team/link-out:1:1: symbolic link points outside the manifest directory: not read',
      ]);

      const allowed = await loadManifests(root, { env: {}, secretDirs: [outside] });
      expect(
        allowed.ok && allowed.set.tlsEdges.map((e) => [e.name, e.description, e.sensitive]),
      ).toEqual([
        ['a', 'Shared description', [['description']]],
        ['b', 's3cret', [['description']]],
        ['c', 's3cret', [['description']]],
        ['d', 's3cret', [['description']]],
      ]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('reads { env } from the given environment, own values only', async () => {
    await put(
      'a.yaml',
      'kind: TLSEdge\nname: a\ndescription: { env: DESC }\n---\nkind: TLSEdge\nname: b\ndescription: { env: constructor }\n',
    );
    const result = await loadManifests(root, { env: { DESC: 'from env' } });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      'a.yaml:7:21: description: environment variable constructor is not set',
    ]);
  });

  it('with a FileCache, locates a problem on a kept document from what it kept, the file itself gone', async () => {
    // As git-sync: the manifest directory is a link swapped to a new worktree each revision.
    const kept = `# comment\n${bot('kept')}---\n${bot('dup')}`;
    await put('rev1/b.yaml', kept);
    await symlink('rev1', path.join(root, 'link'));
    const cache = new FileCache();
    expect((await loadManifests(path.join(root, 'link'), { cache })).ok).toBe(true);
    expect(cache.size).toBe(1);
    // The next revision adds a file that repeats a name of the kept (unchanged) b.yaml; the old
    // worktree is gone.
    await put('rev2/b.yaml', kept);
    await put('rev2/a.yaml', bot('dup'));
    await rm(path.join(root, 'link'));
    await symlink('rev2', path.join(root, 'link'));
    await rm(path.join(root, 'rev1'), { recursive: true });
    const warm = await loadManifests(path.join(root, 'link'), { cache });
    const cold = await loadManifests(path.join(root, 'link'));
    expect(warm.ok).toBe(false);
    expect(warm.diagnostics).toEqual(cold.diagnostics);
    expect(warm.diagnostics[0]).toMatchObject({ file: 'b.yaml', line: 6, column: 7 });
  });

  it('loadDesiredSet throws ManifestError with every diagnostic', async () => {
    await put('a.yaml', 'kind: TLSEdge\nname: A\n');
    await put('b.yaml', 'kind: Nope\n');
    const err = await loadDesiredSet(root, { env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).diagnostics.map((d) => d.file)).toEqual(['a.yaml', 'b.yaml']);
  });
});

describe('config-examples/edges', () => {
  const examples = path.resolve(import.meta.dirname, '../../../config-examples/edges');

  it('are all valid, without any environment variable', async () => {
    const result = await loadManifests(examples, { env: {} });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([]);
  });

  it('use every module shape at least once, and a bot user', async () => {
    const result = await loadManifests(examples, { env: {} });
    if (!result.ok) throw new Error('examples invalid');
    const { tlsEdges, httpsEdges, botUsers } = result.set;
    const allTlsModules = tlsEdges.some(
      (e) => e.backend && e.ip_restriction && e.mutual_tls && e.tls_termination && e.traffic_policy,
    );
    expect(allTlsModules).toBe(true);
    expect(httpsEdges.filter((e) => e.routes.length > 1).length).toBeGreaterThanOrEqual(2);
    const routeModules = new Set(
      httpsEdges.flatMap((e) => e.routes.flatMap((r) => Object.keys(r))),
    );
    for (const m of ROUTE_MODULES) {
      expect(routeModules, m).toContain(m);
    }
    expect(httpsEdges.some((e) => e.mutual_tls && e.tls_termination)).toBe(true);
    expect(botUsers.length).toBeGreaterThan(0);
  });

  it('start with a yaml-language-server line pointing at the committed schema', async () => {
    const { readFile } = await import('node:fs/promises');
    const result = await loadManifests(examples, { env: {} });
    for (const file of result.files) {
      const text = await readFile(path.join(examples, file), 'utf8');
      const depth = file.split('/').length - 1;
      const first = text.split('\n')[0];
      expect(first, file).toBe(
        `# yaml-language-server: $schema=${'../'.repeat(depth + 2)}schema/edgesync.schema.json`,
      );
    }
  });
});
