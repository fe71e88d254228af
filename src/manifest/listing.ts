/**
 * The manifest tree's listing: which files `loadManifests` reads. Recursive and deterministic
 * (`*.yaml` / `*.yml` in any case; names starting with `.` skipped, so `..data` and `.git` are,
 * and `node_modules`; sorted by code unit), symlinks followed only inside the tree, `--exclude` globs applied before
 * any stat, and every entry that cannot be listed, stat'ed or resolved a diagnostic: desired
 * state unknown is never "empty". The file-system calls are injectable (`LoaderFs`).
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  type Stats,
  statSync,
} from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { compareCodeUnits } from '../compare.js';
import { type Diagnostic, errorMessage, FileRefusedError, ManifestDirError } from '../errors.js';

const MANIFEST_EXTENSIONS = ['.yaml', '.yml'];

/**
 * Directories never read besides the dot-named ones (`.git`, `.github`, `..data`): a project
 * that installed edgesync has a `node_modules` full of other packages' YAML.
 */
export const SKIPPED_DIRECTORIES: readonly string[] = ['node_modules'];

/** A name the listing (and the daemon's watcher) passes over: dot-named, or a skipped directory. */
export function isSkippedName(name: string): boolean {
  return name.startsWith('.') || SKIPPED_DIRECTORIES.includes(name);
}

export function problem(file: string, message: string): Diagnostic {
  return { file, line: 1, column: 1, path: '', message, severity: 'error' };
}

export interface Listing {
  readonly files: string[];
  /** Where each file of `files` was found, links resolved: what is read is what was checked. */
  readonly realPaths: ReadonlyMap<string, string>;
  readonly problems: Diagnostic[];
  /**
   * The manifest files `--exclude` skipped (relative, sorted), by real path: read only for the
   * names they declare (./excluded.ts), so that exclusion never turns into deletion.
   */
  readonly excluded: ReadonlyMap<string, string>;
  /** Excluded entries that could not be listed or stat'ed: what they declare is unknown. */
  readonly excludedUnreadable: string[];
}

/**
 * The file-system calls the listing and reading make, injectable so that tests can produce the
 * errors a root-run test cannot (EACCES, EIO). Default: `nodeFs`.
 */
export interface LoaderFs {
  readonly lstat: (path: string) => Promise<Stats>;
  readonly stat: (path: string) => Promise<Stats>;
  readonly readdir: (dir: string) => Promise<string[]>;
  readonly realpath: (path: string) => Promise<string>;
  readonly readFile: (file: string) => Promise<Uint8Array>;
}

/**
 * Node's file system, called synchronously behind the promise interface. A manifest tree is a
 * few hundred small local files (a git-sync checkout): each asynchronous call costs a trip
 * through libuv's thread pool, and the daemon's cycle after one file save read 250 files and
 * stat'ed them again in about 50 ms that way, against a few milliseconds synchronously. Errors
 * still arrive as rejections (the functions are `async`).
 */
export const nodeFs: LoaderFs = {
  lstat: async (p) => lstatSync(p),
  stat: async (p) => statSync(p),
  readdir: async (dir) => readdirSync(dir),
  realpath: async (p) => realpathSync(p),
  readFile: async (file) => readRegularFile(file),
};

/**
 * A file's bytes, opened without blocking: a file that became a FIFO (or any non-regular file)
 * since it was stat'ed is refused (`FileRefusedError`), never waited on, which matters more now that the
 * read holds the loop. The checks are made on the opened descriptor, so what is read is what was
 * checked. With `maxBytes`, a larger file is refused (the same error) before it is read. Manifests and
 * `{ file: }` secrets are both read through here.
 */
export function readRegularFile(file: string, maxBytes?: number): Uint8Array {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) {
      throw new FileRefusedError('not-a-file', 'not a regular file');
    }
    if (maxBytes !== undefined && info.size > maxBytes) {
      throw new FileRefusedError('too-large', `file is over the ${maxBytes}-byte limit`);
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** What an entry is, in the words a diagnostic uses. */
function specialKind(info: Stats): string | null {
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return null;
}

function linkProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return 'broken symbolic link: its target does not exist';
  if (code === 'ELOOP') return 'symbolic link loop: the link cannot be resolved';
  return `cannot resolve symbolic link: ${errorMessage(err)}`;
}

/**
 * Every manifest file under `root`, as `/`-separated paths relative to it, sorted by code unit.
 *
 * Desired state unknown is never "empty": every entry that cannot be listed, stat'ed, resolved
 * or read is a diagnostic, whatever its name (a dangling link named `team-a` may have been the
 * directory holding a team's edges). Symlinks are followed (Kubernetes ConfigMap volumes are made
 * of them) only when their target resolves inside `root`; one that escapes is a diagnostic and
 * nothing behind it is read. FIFOs, sockets and devices are diagnostics too: Git cannot store
 * them, so one in the tree is a sign that something is wrong, and reading a FIFO would block.
 * A directory reached twice through links is read once. A link into an allowed secret directory
 * is skipped (it is there for `{ file }`).
 */
export async function listManifestFiles(
  root: string,
  shownDir: string,
  fs: LoaderFs,
  secretDirs: readonly string[],
  excluded: (rel: string) => boolean,
): Promise<Listing> {
  const walk: Walk = {
    root,
    shownDir,
    fs,
    secretDirs,
    excluded,
    files: [],
    realPaths: new Map(),
    problems: [],
    visited: new Set(),
    excludedFiles: new Map(),
    excludedUnreadable: [],
    excludedVisited: new Set(),
  };
  await visitDir(walk, root, '');
  walk.files.sort(compareCodeUnits);
  const skipped = new Map([...walk.excludedFiles].sort(([a], [b]) => compareCodeUnits(a, b)));
  return {
    files: walk.files,
    realPaths: walk.realPaths,
    problems: walk.problems,
    excluded: skipped,
    excludedUnreadable: walk.excludedUnreadable.sort(compareCodeUnits),
  };
}

/** One listing: what it reads from, and what it has found so far. */
interface Walk {
  readonly root: string;
  readonly shownDir: string;
  readonly fs: LoaderFs;
  readonly secretDirs: readonly string[];
  readonly excluded: (rel: string) => boolean;
  readonly files: string[];
  readonly realPaths: Map<string, string>;
  readonly problems: Diagnostic[];
  readonly visited: Set<string>;
  readonly excludedFiles: Map<string, string>;
  readonly excludedUnreadable: string[];
  readonly excludedVisited: Set<string>;
}

async function visitDir(walk: Walk, realDir: string, rel: string): Promise<void> {
  if (walk.visited.has(realDir)) return;
  walk.visited.add(realDir);
  let names: string[];
  try {
    names = await walk.fs.readdir(realDir);
  } catch (err) {
    if (rel === '') {
      throw new ManifestDirError(
        walk.shownDir,
        `manifest directory ${walk.shownDir} cannot be listed: desired state unknown`,
        { cause: err },
      );
    }
    walk.problems.push(problem(rel, `cannot list directory: ${errorMessage(err)}`));
    return;
  }
  names.sort(compareCodeUnits);
  for (const name of names) {
    if (isSkippedName(name)) continue;
    const childRel = rel === '' ? name : `${rel}/${name}`;
    // Before any stat: an excluded tree is not ours, even its broken links and FIFOs. Its
    // manifest files are still found, for the names they declare.
    if (walk.excluded(childRel)) {
      await visitExcluded(walk, path.join(realDir, name), childRel);
      continue;
    }
    const entry = await entryOf(walk, path.join(realDir, name), childRel);
    if (entry === undefined) continue;
    const { info, real } = entry;
    if (info.isDirectory()) {
      await visitDir(walk, real, childRel);
      continue;
    }
    const special = specialKind(info);
    if (special !== null) {
      walk.problems.push(problem(childRel, `${special} in the manifest directory: cannot be read`));
      continue;
    }
    if (info.isFile() && isManifestName(name)) {
      walk.files.push(childRel);
      walk.realPaths.set(childRel, real);
    }
  }
}

/**
 * An excluded entry: its manifest files (`*.yaml`, links followed inside the tree only) are
 * recorded for the names they declare; nothing here is a problem of the load (broken links,
 * FIFOs, other YAML are not ours), except an entry that cannot be stat'ed or listed at all,
 * whose declarations are then unknown.
 */
async function visitExcluded(walk: Walk, abs: string, rel: string): Promise<void> {
  let info: Stats;
  let real = abs;
  try {
    info = await walk.fs.lstat(abs);
    if (info.isSymbolicLink()) {
      real = await walk.fs.realpath(abs).catch(() => '');
      // A broken link, or one leading out of the tree, declares nothing of this directory.
      if (real === '' || !inside(walk.root, real)) return;
      info = await walk.fs.stat(real);
    }
  } catch {
    walk.excludedUnreadable.push(rel);
    return;
  }
  if (info.isFile()) {
    if (isManifestName(path.basename(rel))) walk.excludedFiles.set(rel, real);
    return;
  }
  if (!info.isDirectory() || walk.excludedVisited.has(real)) return;
  walk.excludedVisited.add(real);
  let names: string[];
  try {
    names = await walk.fs.readdir(real);
  } catch {
    walk.excludedUnreadable.push(rel);
    return;
  }
  for (const name of names.sort(compareCodeUnits)) {
    if (!name.startsWith('.')) await visitExcluded(walk, path.join(real, name), `${rel}/${name}`);
  }
}

/**
 * What an entry is, a symbolic link followed to its target; undefined (a problem recorded, or
 * a link into an allowed secret directory) when it is not to be read.
 */
async function entryOf(
  walk: Walk,
  childAbs: string,
  childRel: string,
): Promise<{ info: Stats; real: string } | undefined> {
  const { fs, problems } = walk;
  let info: Stats;
  try {
    info = await fs.lstat(childAbs);
  } catch (err) {
    problems.push(problem(childRel, `cannot stat: ${errorMessage(err)}`));
    return undefined;
  }
  if (!info.isSymbolicLink()) return { info, real: childAbs };
  let real: string;
  try {
    real = await fs.realpath(childAbs);
  } catch (err) {
    problems.push(problem(childRel, linkProblem(err)));
    return undefined;
  }
  if (!inside(walk.root, real)) {
    // A link to a mounted secret is what `--secret-dir` allows: `{ file }` may read it, the
    // listing never does.
    if (walk.secretDirs.some((dir) => inside(dir, real))) return undefined;
    problems.push(
      problem(childRel, 'symbolic link points outside the manifest directory: not read'),
    );
    return undefined;
  }
  try {
    return { info: await fs.stat(real), real };
  } catch (err) {
    problems.push(problem(childRel, `cannot stat the link's target: ${errorMessage(err)}`));
    return undefined;
  }
}

/**
 * The `exclude` globs as one predicate over `/`-separated relative paths. picomatch rather than
 * Node's `path.matchesGlob`: that one is experimental in Node 20 and prints an
 * ExperimentalWarning on stderr at first use. `k8s/**` also matches `k8s` itself, so an
 * excluded directory is not even listed.
 */
export function excludeMatcher(globs: readonly string[] | undefined): (rel: string) => boolean {
  if (globs === undefined || globs.length === 0) return () => false;
  return picomatch([...globs], { dot: true });
}

/** `.yaml` and `.yml`, in any case: `STOREFRONT.YAML` is a manifest, not silently ignored. */
function isManifestName(name: string): boolean {
  const lower = name.toLowerCase();
  return MANIFEST_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

export function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Files named on the command line instead of a listing (`validate a.yaml b.yaml`), relative to
 * `root` (their deepest common directory): each must be a regular file inside it once links
 * are resolved. One that is not is a diagnostic, as in a listing. Named, a file is read whatever
 * its extension or name.
 */
export async function listNamedFiles(
  root: string,
  fs: LoaderFs,
  named: readonly string[],
): Promise<Listing> {
  const files: string[] = [];
  const realPaths = new Map<string, string>();
  const problems: Diagnostic[] = [];
  for (const rel of [...new Set(named)].sort(compareCodeUnits)) {
    const abs = path.join(root, ...rel.split('/'));
    let real: string;
    let info: Stats;
    try {
      real = await fs.realpath(abs);
      info = await fs.stat(real);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problems.push(
        problem(rel, code === 'ENOENT' ? 'no such file' : `cannot stat: ${errorMessage(err)}`),
      );
      continue;
    }
    if (!inside(root, real)) {
      problems.push(problem(rel, 'symbolic link points outside the manifest directory: not read'));
    } else if (!info.isFile()) {
      problems.push(problem(rel, `${specialKind(info) ?? 'not a regular file'}: cannot be read`));
    } else {
      files.push(rel);
      realPaths.set(rel, real);
    }
  }
  return { files, realPaths, problems, excluded: new Map(), excludedUnreadable: [] };
}
