/**
 * The manifest directory on disk -> DesiredSet or diagnostics (`loadManifests`). Owns the file
 * system side: resolving a (git-sync) symlinked directory once per load, the recursive,
 * deterministic listing (`*.yaml` / `*.yml`, names starting with `.` skipped, so `..data` and
 * `.git` are), the size cap checked before reading, and `{ file }` references confined to the
 * manifest tree (plus explicitly allowed secret directories). A missing or unreadable directory
 * throws ManifestDirError: the desired state is unknown, never empty.
 */
import type { Dirent } from 'node:fs';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { lstat, readdir, readFile, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Diagnostic, errorMessage, ManifestDirError, ManifestError } from '../errors.js';
import {
  type BuildResult,
  buildDesiredSet,
  DEFAULT_MAX_ALIAS_COUNT,
  DEFAULT_MAX_FILE_BYTES,
  type ResourceCounts,
  type SourceFile,
} from './build.js';
import { sortDiagnostics } from './diagnostics.js';
import type { ReadResult, RefReader } from './refs.js';
import type { DesiredSet } from './schema.js';

export interface LoadOptions {
  /** Owner id stored in edge metadata (counts towards the 4096-byte limit). Default `default`. */
  readonly owner?: string;
  /** Environment for `{ env }` references. Default: `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Absolute directories outside the manifest tree that `{ file }` references may read (e.g.
   * a mounted Kubernetes secret). The manifest tree itself is always allowed.
   */
  readonly secretDirs?: readonly string[];
  /** Files larger than this are refused (default 1 MiB). Also bounds referenced files. */
  readonly maxFileBytes?: number;
  /** Bound on YAML alias expansion (default 100). */
  readonly maxAliasCount?: number;
}

interface LoadInfo {
  /** The directory as given (absolute). */
  readonly dir: string;
  /** Where it was read from (symlinks resolved once for this load). */
  readonly resolvedDir: string;
  /** `basename(readlink(dir))` when the directory is a symlink (git-sync's revision), else null. */
  readonly revision: string | null;
  /** Manifest files read, relative to the directory, in load order. */
  readonly files: string[];
  readonly counts: ResourceCounts;
}

export type LoadResult =
  | (LoadInfo & { readonly ok: true; readonly set: DesiredSet; readonly diagnostics: [] })
  | (LoadInfo & { readonly ok: false; readonly diagnostics: Diagnostic[] });

const MANIFEST_EXTENSIONS = ['.yaml', '.yml'];

/** Loads and validates every manifest under `dir`. Throws ManifestDirError only for the directory. */
export async function loadManifests(dir: string, options: LoadOptions = {}): Promise<LoadResult> {
  const absolute = path.resolve(dir);
  const { resolvedDir, revision } = await resolveDir(absolute);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;

  const listing = await listManifestFiles(resolvedDir, absolute);
  const sources: SourceFile[] = [];
  const readProblems: Diagnostic[] = [...listing.problems];
  await forEachLimit(listing.files, 16, async (rel) => {
    const result = await readManifest(path.join(resolvedDir, ...rel.split('/')), maxFileBytes);
    if ('bytes' in result) sources.push({ file: rel, bytes: result.bytes });
    else readProblems.push(problem(rel, result.error));
  });

  const reader = createRefReader(resolvedDir, {
    env: options.env ?? process.env,
    secretDirs: options.secretDirs ?? [],
    maxFileBytes,
  });
  const built: BuildResult = buildDesiredSet(sources, {
    reader,
    maxFileBytes,
    maxAliasCount: options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT,
    ...(options.owner === undefined ? {} : { owner: options.owner }),
  });
  const info = {
    dir: absolute,
    resolvedDir,
    revision,
    files: listing.files,
    counts: { ...built.counts, files: listing.files.length },
  };
  if (built.ok && readProblems.length === 0)
    return { ...info, ok: true, set: built.set, diagnostics: [] };
  const diagnostics = sortDiagnostics([...readProblems, ...built.diagnostics]);
  return { ...info, ok: false, diagnostics };
}

/** Like `loadManifests`, but throws ManifestError carrying every diagnostic when invalid. */
export async function loadDesiredSet(
  dir: string,
  options: LoadOptions = {},
): Promise<{ set: DesiredSet; resolvedDir: string; revision: string | null; files: string[] }> {
  const result = await loadManifests(dir, options);
  if (!result.ok) throw new ManifestError(result.diagnostics);
  return {
    set: result.set,
    resolvedDir: result.resolvedDir,
    revision: result.revision,
    files: result.files,
  };
}

function problem(file: string, message: string): Diagnostic {
  return { file, line: 1, column: 1, path: '', message, severity: 'error' };
}

async function resolveDir(dir: string): Promise<{ resolvedDir: string; revision: string | null }> {
  try {
    const link = await lstat(dir);
    // git-sync swaps a symlink atomically: read it once and derive both the revision and the
    // directory from that one value, so they cannot come from two different swaps.
    let revision: string | null = null;
    let target = dir;
    if (link.isSymbolicLink()) {
      const value = await readlink(dir);
      revision = path.basename(value);
      target = path.resolve(path.dirname(dir), value);
    }
    const resolvedDir = await realpath(target);
    const info = await stat(resolvedDir);
    if (!info.isDirectory()) {
      throw new ManifestDirError(dir, `manifest directory ${dir} is not a directory`);
    }
    return { resolvedDir, revision };
  } catch (err) {
    if (err instanceof ManifestDirError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable'
          : `cannot be read (${errorMessage(err)})`;
    throw new ManifestDirError(dir, `manifest directory ${dir} ${why}: desired state unknown`, {
      cause: err,
    });
  }
}

interface Listing {
  readonly files: string[];
  readonly problems: Diagnostic[];
}

/**
 * Every manifest file under `root`, as `/`-separated paths relative to it, sorted by code unit.
 * Symlinks are followed (Kubernetes ConfigMap volumes are made of them); a directory reached
 * twice (a symlink loop) is read once.
 */
async function listManifestFiles(root: string, shownDir: string): Promise<Listing> {
  const files: string[] = [];
  const problems: Diagnostic[] = [];
  const visited = new Set<string>();

  const visit = async (absDir: string, rel: string): Promise<void> => {
    let real: string;
    try {
      real = await realpath(absDir);
    } catch (err) {
      problems.push(problem(rel, `cannot read directory: ${errorMessage(err)}`));
      return;
    }
    if (visited.has(real)) return;
    visited.add(real);
    let entries: Dirent[];
    try {
      entries = await readdir(absDir, { withFileTypes: true });
    } catch (err) {
      if (rel === '') {
        throw new ManifestDirError(
          shownDir,
          `manifest directory ${shownDir} cannot be listed: desired state unknown`,
          {
            cause: err,
          },
        );
      }
      problems.push(problem(rel, `cannot read directory: ${errorMessage(err)}`));
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const childAbs = path.join(absDir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        try {
          const target = await stat(childAbs);
          isDir = target.isDirectory();
          isFile = target.isFile();
        } catch {
          // A dangling link that looks like a manifest is worth an error; anything else is noise.
          if (isManifestName(entry.name)) problems.push(problem(childRel, 'broken symbolic link'));
          continue;
        }
      }
      if (isDir) await visit(childAbs, childRel);
      else if (isFile && isManifestName(entry.name)) files.push(childRel);
    }
  };

  await visit(root, '');
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { files, problems };
}

function isManifestName(name: string): boolean {
  return MANIFEST_EXTENSIONS.some((ext) => name.endsWith(ext));
}

async function readManifest(
  file: string,
  maxFileBytes: number,
): Promise<{ bytes: Uint8Array } | { error: string }> {
  try {
    // Checked before reading, so a huge file is never pulled into memory.
    const info = await stat(file);
    if (info.size > maxFileBytes) {
      return { error: `file is ${info.size} bytes, over the ${maxFileBytes}-byte limit` };
    }
    return { bytes: await readFile(file) };
  } catch (err) {
    return { error: `cannot read file: ${errorMessage(err)}` };
  }
}

async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * `{ env }` from the given environment; `{ file }` relative to the manifest file's directory,
 * allowed only inside the manifest tree or one of `secretDirs` (after resolving symlinks, so a
 * link cannot escape either). Successful reads are cached for the load: one secret file is read once.
 */
export function createRefReader(
  root: string,
  options: {
    env: Readonly<Record<string, string | undefined>>;
    secretDirs: readonly string[];
    maxFileBytes: number;
  },
): RefReader {
  const cache = new Map<string, ReadResult>();
  const allowed = [root, ...options.secretDirs.map((d) => safeRealpath(path.resolve(d)))].filter(
    (d): d is string => d !== undefined,
  );
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return {
    // Own string values only: `{ env: constructor }` must not find Object.prototype's.
    env: (name) => {
      if (!Object.hasOwn(options.env, name)) return undefined;
      const value: unknown = options.env[name];
      return typeof value === 'string' ? value : undefined;
    },
    file: (fromFile, ref) => {
      const fromDir = path.dirname(path.join(root, ...fromFile.split('/')));
      const target = path.resolve(fromDir, ref);
      const cached = cache.get(target);
      if (cached !== undefined) return cached;
      const result = readRefFile(target, ref, allowed, options.maxFileBytes, decoder);
      // Failures are not cached: their message names the path as each manifest wrote it.
      if (result.ok) cache.set(target, result);
      return result;
    },
  };
}

function safeRealpath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function readRefFile(
  target: string,
  shown: string,
  allowed: readonly string[],
  maxFileBytes: number,
  decoder: { decode(bytes: Uint8Array): string },
): ReadResult {
  const real = safeRealpath(target);
  if (real === undefined) return { ok: false, message: `file ${shown} not found` };
  if (!allowed.some((dir) => inside(dir, real))) {
    return {
      ok: false,
      message: `file ${shown} is outside the manifest directory (allow its directory with --secret-dir)`,
    };
  }
  try {
    const info = statSync(real);
    if (!info.isFile()) return { ok: false, message: `${shown} is not a file` };
    if (info.size > maxFileBytes) {
      return { ok: false, message: `file ${shown} is over the ${maxFileBytes}-byte limit` };
    }
    const bytes = readFileSync(real);
    if (bytes.includes(0))
      return { ok: false, message: `file ${shown} is binary (contains NUL bytes)` };
    return { ok: true, text: decoder.decode(bytes) };
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, message: `file ${shown} is not valid UTF-8` };
    return { ok: false, message: `cannot read file ${shown}: ${errorMessage(err)}` };
  }
}
