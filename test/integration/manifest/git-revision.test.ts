/**
 * The revision of a plain git checkout (not git-sync): read from `.git` without running git.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitRevision } from '../../../src/manifest/git.js';
import { loadManifests } from '../../../src/manifest/loader.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
let root: string;

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'edgesync-git-')));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function put(rel: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await fs.writeFile(path.join(root, rel), text);
}

describe('gitRevision', () => {
  it('reads a detached HEAD', async () => {
    await put('.git/HEAD', `${A}\n`);
    await fs.mkdir(path.join(root, 'edges'));
    expect(await gitRevision(path.join(root, 'edges'))).toBe(A);
  });

  it('follows a branch to its loose ref, else to packed-refs', async () => {
    await put('.git/HEAD', 'ref: refs/heads/main\n');
    await put(
      '.git/packed-refs',
      `# pack-refs with: peeled fully-peeled sorted\n${B} refs/heads/main\n`,
    );
    expect(await gitRevision(root)).toBe(B);
    await put('.git/refs/heads/main', `${A}\n`);
    expect(await gitRevision(root)).toBe(A);
  });

  it('follows a .git file to a worktree, and its branch refs to the common directory', async () => {
    await put('main/.git/refs/heads/feature', `${B}\n`);
    await put('main/.git/worktrees/wt/HEAD', 'ref: refs/heads/feature\n');
    await put('main/.git/worktrees/wt/commondir', '../..\n');
    await put('wt/.git', `gitdir: ${path.join(root, 'main/.git/worktrees/wt')}\n`);
    expect(await gitRevision(path.join(root, 'wt'))).toBe(B);
  });

  it('is undefined outside a repository and for anything unexpected', async () => {
    expect(await gitRevision(root)).toBeUndefined();
    await put('.git/HEAD', 'ref: refs/heads/none\n');
    expect(await gitRevision(root)).toBeUndefined();
    await put('.git/HEAD', 'garbage\n');
    expect(await gitRevision(root)).toBeUndefined();
  });

  it('is what loadManifests reports as the revision of a plain checkout', async () => {
    await put('.git/HEAD', `${A}\n`);
    await put('edges/bots.yaml', 'kind: BotUser\nname: ci\n');
    const result = await loadManifests(path.join(root, 'edges'), { env: {} });
    expect(result.revision).toBe(A);
  });
});
