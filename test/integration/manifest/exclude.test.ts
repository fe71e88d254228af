/** `exclude` globs in the loader: excluded trees are not listed at all, not even their problems. */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../../src/manifest/loader.js';
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
});
