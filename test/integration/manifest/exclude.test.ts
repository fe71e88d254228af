/**
 * `exclude` globs in the loader: excluded trees are not loaded, not even their problems; their
 * manifest files are read only for the kind and name of what they declare (left alone by plans).
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/manifest/listing.js';
import { type LoaderFs, loadManifests } from '../../../src/manifest/loader.js';
import { tempDir } from '../apply/helpers.js';

describe('loadManifests exclude', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    tmp = await tempDir('edgesync-exclude-');
    const dir = tmp.dir;
    await writeFile(
      path.join(dir, 'edge.yaml'),
      'kind: TLSEdge\nname: a\nhostports: [a.example.com:443]\n',
    );
    await mkdir(path.join(dir, 'k8s', 'base'), { recursive: true });
    await writeFile(path.join(dir, 'k8s', 'base', 'deploy.yaml'), 'kind: Deployment\n');
    await symlink('/nonexistent', path.join(dir, 'k8s', 'dangling.yaml'));
    await mkdir(path.join(dir, 'team'), { recursive: true });
    await writeFile(path.join(dir, 'team', 'pipeline.ci.yml'), 'on: push\n');
  });
  afterEach(async () => {
    await tmp.cleanup();
  });

  it.each([
    [[] as string[], false, ['edge.yaml', 'k8s/base/deploy.yaml', 'team/pipeline.ci.yml']],
    [['k8s/**'], false, ['edge.yaml', 'team/pipeline.ci.yml']],
    [['k8s/**', '**/*.ci.yml'], true, ['edge.yaml']],
    [['k8s', 'team/*'], true, ['edge.yaml']],
  ])('exclude %j', async (exclude, ok, files) => {
    const result = await loadManifests(tmp.dir, { exclude, env: {} });
    expect(result.files).toEqual(files);
    expect(result.ok).toBe(ok);
    if (exclude.length > 0) {
      expect(result.diagnostics.some((d) => d.file === 'k8s/dangling.yaml')).toBe(false);
    }
  });

  it('reads excluded manifest files for what they declare, nothing more', async () => {
    await writeFile(
      path.join(tmp.dir, 'k8s', 'edges.yaml'),
      [
        'kind: HTTPSEdge\nname: kept\nhostports: [not a hostport]\n',
        'kind: CloudEndpoint\nname: wiki\n',
        'kind: Deployment\nname: web\n',
        'kind: TLSEdge\nname: [broken\n',
        'kind: BotUser\nname: ci\n',
      ].join('---\n'),
    );
    const result = await loadManifests(tmp.dir, { exclude: ['k8s/**', 'team/**'], env: {} });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.set.excluded).toEqual({
      declared: [
        { kind: 'HTTPSEdge', name: 'kept', file: 'k8s/edges.yaml' },
        { kind: 'CloudEndpoint', name: 'wiki', file: 'k8s/edges.yaml' },
        { kind: 'BotUser', name: 'ci', file: 'k8s/edges.yaml' },
      ],
      unreadable: [],
    });
  });

  it('an excluded directory that cannot be listed makes what it declares unknown', async () => {
    const fs: LoaderFs = {
      ...nodeFs,
      readdir: async (dir) => {
        if (path.basename(dir) === 'k8s') {
          throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        }
        return nodeFs.readdir(dir);
      },
    };
    const result = await loadManifests(tmp.dir, { exclude: ['k8s', 'team/**'], env: {}, fs });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.set.excluded).toEqual({ declared: [], unreadable: ['k8s'] });
  });
});
