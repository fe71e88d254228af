import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManifestDirError } from '../../../src/errors.js';
import {
  findAnchor,
  MISSING_DIR_MESSAGE,
  resolveManifestDir,
  sameResolution,
} from '../../../src/manifest/resolve.js';
import { makeTempDir, removeDir } from './helpers.js';

let root: string;

beforeEach(async () => {
  root = await makeTempDir('daemon-resolve');
  await fs.mkdir(path.join(root, '.worktrees', 'abc123', 'edges'), { recursive: true });
  await fs.mkdir(path.join(root, 'plain'));
  await fs.writeFile(path.join(root, 'file.yaml'), 'x: 1\n');
  await fs.symlink('.worktrees/abc123', path.join(root, 'current'));
  await fs.symlink('.worktrees/gone', path.join(root, 'dangling'));
});

afterEach(async () => {
  await removeDir(root);
});

describe('resolveManifestDir', () => {
  it.each([
    ['current', 'current', '.worktrees/abc123', 'abc123'],
    ['a folder inside the link', 'current/edges', '.worktrees/abc123/edges', 'abc123'],
    ['a plain directory', 'plain', 'plain', undefined],
  ])('resolves %s', async (_name, rel, realRel, revision) => {
    const resolved = await resolveManifestDir(path.join(root, rel));
    expect(resolved).toMatchObject({
      dir: path.join(root, rel),
      realDir: path.join(root, realRel),
      revision,
      link: revision === undefined ? undefined : path.join(root, 'current'),
    });
    expect(resolved.identity).toMatch(/^\d+:\d+:[\d.]+$/);
  });

  it.each([
    ['a missing directory', 'nope', 'does not exist'],
    ['a missing folder inside the link', 'current/other', 'does not exist'],
    ['a dangling link', 'dangling', 'does not exist'],
    ['a file', 'file.yaml', 'not a directory'],
    ['a path through a file', 'file.yaml/x', 'not a directory'],
  ])('refuses %s as "desired state unknown"', async (_name, rel, detail) => {
    const promise = resolveManifestDir(path.join(root, rel));
    await expect(promise).rejects.toThrow(ManifestDirError);
    await expect(resolveManifestDir(path.join(root, rel))).rejects.toThrow(MISSING_DIR_MESSAGE);
    await expect(resolveManifestDir(path.join(root, rel))).rejects.toThrow(detail);
  });

  it('tells a swapped checkout and a recreated directory from the same one', async () => {
    const a = await resolveManifestDir(path.join(root, 'current'));
    expect(sameResolution(a, await resolveManifestDir(path.join(root, 'current')))).toBe(true);
    await fs.mkdir(path.join(root, '.worktrees', 'def456'));
    await fs.symlink('.worktrees/def456', path.join(root, 'tmp-link'));
    await fs.rename(path.join(root, 'tmp-link'), path.join(root, 'current'));
    const b = await resolveManifestDir(path.join(root, 'current'));
    expect(b.revision).toBe('def456');
    expect(sameResolution(a, b)).toBe(false);

    const p = await resolveManifestDir(path.join(root, 'plain'));
    await fs.rm(path.join(root, 'plain'), { recursive: true });
    await fs.mkdir(path.join(root, 'plain'));
    expect(sameResolution(p, await resolveManifestDir(path.join(root, 'plain')))).toBe(false);
  });
});

describe('findAnchor', () => {
  it.each([
    ['current', 'current', true],
    ['current/edges', 'current', true],
    ['current/missing/deeper', 'current', true],
    ['plain', 'plain', false],
    ['nope/deeper', 'nope', false],
  ])('%s -> %s (link: %s)', async (rel, anchorRel, isLink) => {
    expect(await findAnchor(path.join(root, rel))).toEqual({
      path: path.join(root, anchorRel),
      isLink,
    });
  });
});
