/**
 * The commit of a plain git checkout, read from `.git` without running git: `HEAD` is either a
 * commit ID (detached) or `ref: refs/heads/<branch>`, whose commit is in its loose ref file or
 * in `packed-refs`. A `.git` file (`gitdir: <path>`, worktrees and submodules) is followed; a
 * worktree's branch refs live in the common directory named by its `commondir` file. Anything
 * unexpected gives undefined: the revision is information, never a reason to fail a cycle.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

async function readText(file: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** The git directory of the repository containing `dir`, if there is one. */
async function findGitDir(dir: string): Promise<string | undefined> {
  return (await findGit(dir))?.gitDir;
}

/** The work tree containing `dir` (where its `.git` is), if there is one. */
export async function findRepositoryRoot(dir: string): Promise<string | undefined> {
  return (await findGit(dir))?.root;
}

async function findGit(dir: string): Promise<{ root: string; gitDir: string } | undefined> {
  for (let at = dir; ; ) {
    const candidate = path.join(at, '.git');
    try {
      const info = await fs.stat(candidate);
      if (info.isDirectory()) return { root: at, gitDir: candidate };
      if (info.isFile()) {
        const pointer = /^gitdir:\s*(.+)$/m.exec((await readText(candidate)) ?? '')?.[1];
        return pointer === undefined
          ? undefined
          : { root: at, gitDir: path.resolve(at, pointer.trim()) };
      }
    } catch {
      // not here: look in the parent
    }
    const parent = path.dirname(at);
    if (parent === at) return undefined;
    at = parent;
  }
}

async function resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
  const common = await readText(path.join(gitDir, 'commondir'));
  const dirs = common === undefined ? [gitDir] : [gitDir, path.resolve(gitDir, common)];
  for (const d of dirs) {
    const loose = await readText(path.join(d, ref));
    if (loose !== undefined && COMMIT.test(loose)) return loose;
    const packed = await readText(path.join(d, 'packed-refs'));
    for (const line of packed?.split('\n') ?? []) {
      const [id, name] = line.trim().split(' ');
      if (name === ref && id !== undefined && COMMIT.test(id)) return id;
    }
  }
  return undefined;
}

/** The commit checked out in the repository containing `dir`; undefined when none is found. */
export async function gitRevision(dir: string): Promise<string | undefined> {
  const gitDir = await findGitDir(dir);
  if (gitDir === undefined) return undefined;
  const head = await readText(path.join(gitDir, 'HEAD'));
  if (head === undefined) return undefined;
  if (COMMIT.test(head)) return head;
  const ref = /^ref:\s*(refs\/\S+)$/.exec(head)?.[1];
  return ref === undefined ? undefined : resolveRef(gitDir, ref);
}
