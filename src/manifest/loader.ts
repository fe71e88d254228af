/**
 * The manifest directory on disk -> DesiredSet or diagnostics (`loadManifests`). Owns the file
 * system side: resolving a (git-sync) symlinked directory once per load, the listing
 * (./listing.ts), the size cap checked before reading, the stamps that tell a file saved while
 * it was read, and `{ file }` references confined to the manifest tree (plus explicitly allowed
 * secret directories). A missing or unreadable directory throws ManifestDirError: the desired
 * state is unknown, never empty.
 */

import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import {
  type Diagnostic,
  errorMessage,
  FileRefusedError,
  ManifestDirError,
  ManifestError,
} from '../errors.js';
import { runPool } from '../pool.js';
import {
  type BuildResult,
  buildDesiredSet,
  DEFAULT_MAX_ALIAS_COUNT,
  DEFAULT_MAX_FILE_BYTES,
  type FileCache,
  type ResourceCounts,
  type SourceFile,
} from './build.js';
import { sortDiagnostics } from './diagnostics.js';
import { digestKeyFrom } from './digest.js';
import { declaredIn, type ExcludedDeclarations, type ExcludedResource } from './excluded.js';
import {
  excludeMatcher,
  inside,
  type Listing,
  type LoaderFs,
  listManifestFiles,
  listNamedFiles,
  nodeFs,
  problem,
  readRegularFile,
} from './listing.js';
import {
  credentialIn,
  credentialVariable,
  type OwnCredential,
  ownCredentials,
} from './own-credentials.js';
import type { ReadResult, RefReader } from './refs.js';
import { resolveManifestDir } from './resolve.js';
import type { DesiredSet } from './schema.js';
import type { DeferredCheck } from './shape.js';
import { decode } from './shape.js';

export {
  excludeMatcher,
  inside,
  isSkippedName,
  type LoaderFs,
  SKIPPED_DIRECTORIES,
} from './listing.js';

export interface LoadOptions {
  /** Owner id stored in edge metadata (counts towards the 4096-byte limit). Default `default`. */
  readonly owner?: string;
  /**
   * Run each cloud endpoint's policy tests, a failing case being a diagnostic (default true).
   * `edgesync test` runs them itself, to report every case.
   */
  readonly policyTests?: boolean;
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
  /** The file-system calls of the listing and reading (tests inject failures). */
  readonly fs?: LoaderFs;
  /**
   * Globs relative to the manifest directory (`k8s/**`, or `*.ci.yaml` files anywhere) whose
   * files and directories are not read at all: a repository's other YAML can live beside the edges.
   */
  readonly exclude?: readonly string[];
  /** Kept between loads by the daemon: unchanged files are not parsed again (`FileCache`). */
  readonly cache?: FileCache;
  /**
   * The controller's credentials held beyond `env`'s own variables (an `--api-key`, the
   * control token file's, the embedded server's key): no reference may read them.
   */
  readonly credentials?: readonly OwnCredential[];
  /**
   * Only these files (relative to the directory, `/`-separated) instead of the listing:
   * `validate a.yaml b.yaml`. The rules across documents then see these files only.
   */
  readonly files?: readonly string[];
  /**
   * A reference whose value is not there (a variable not set, a file not found) is left for
   * later instead of an error (`validate`; see `RefReader.deferUnresolved`). The set of such a
   * load is not to be acted on.
   */
  readonly deferUnresolved?: boolean;
}

interface LoadInfo {
  /** The directory as given (absolute). */
  readonly dir: string;
  /** Where it was read from (symlinks resolved once for this load). */
  readonly resolvedDir: string;
  /** git-sync's revision (`basename(readlink(...))`) or a plain checkout's commit, else null. */
  readonly revision: string | null;
  /** Manifest files read, relative to the directory, in load order. */
  readonly files: string[];
  readonly counts: ResourceCounts;
  /**
   * What each file looked like when it was read (stat'ed before the read), by the path it was read
   * from, for `manifestsChangedSince`: a file saved while it was read must not be acted on.
   */
  readonly stamps: ReadonlyMap<string, FileStamp>;
  /** The references left for later (`deferUnresolved`), in file order. */
  readonly deferred: DeferredCheck[];
}

/** One file as it was when read: its size, and a key that changes with any save or replacement. */
export interface FileStamp {
  /** Relative to the manifest directory, `/`-separated. */
  readonly file: string;
  readonly size: number;
  /** Size, modification and change times, inode: equal keys, same file, same content. */
  readonly key: string;
}

export type LoadResult =
  | (LoadInfo & { readonly ok: true; readonly set: DesiredSet; readonly diagnostics: [] })
  | (LoadInfo & { readonly ok: false; readonly diagnostics: Diagnostic[] });

/** Loads and validates every manifest under `dir`. Throws ManifestDirError only for the directory. */
export async function loadManifests(dir: string, options: LoadOptions = {}): Promise<LoadResult> {
  const absolute = path.resolve(dir);
  const { resolvedDir, revision } = await resolveDir(absolute);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;

  const fs = options.fs ?? nodeFs;
  const secretDirs = (options.secretDirs ?? [])
    .map((d) => safeRealpath(path.resolve(d)))
    .filter((d): d is string => d !== undefined);
  const listing =
    options.files === undefined
      ? await listManifestFiles(
          resolvedDir,
          absolute,
          fs,
          secretDirs,
          excludeMatcher(options.exclude),
        )
      : await listNamedFiles(resolvedDir, fs, options.files);
  const sources: SourceFile[] = [];
  const readProblems: Diagnostic[] = [...listing.problems];
  const stamps = new Map<string, FileStamp>();
  await runPool(listing.files, 16, async (rel) => {
    const file = manifestPath(resolvedDir, listing.realPaths, rel);
    const result = await readManifest(fs, file, maxFileBytes);
    if ('bytes' in result) {
      sources.push({ file: rel, text: decode(result.bytes, maxFileBytes) });
      stamps.set(file, { file: rel, size: result.size, key: result.stamp });
    } else readProblems.push(problem(rel, result.error));
  });

  const reader = createRefReader(resolvedDir, {
    env: options.env ?? process.env,
    secretDirs: options.secretDirs ?? [],
    maxFileBytes,
    credentials: options.credentials ?? [],
    deferUnresolved: options.deferUnresolved === true,
  });
  const built: BuildResult = buildDesiredSet(sources, {
    reader,
    maxFileBytes,
    maxAliasCount: options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT,
    ...(options.cache === undefined ? {} : { cache: options.cache }),
    ...(options.owner === undefined ? {} : { owner: options.owner }),
    ...(options.policyTests === undefined ? {} : { policyTests: options.policyTests }),
    digestKey: digestKeyFrom(options.env ?? process.env, (file) => readFileSync(file, 'utf8')),
  });
  const excluded = await readExcluded(fs, listing, maxFileBytes, options.maxAliasCount);
  const info = {
    dir: absolute,
    resolvedDir,
    revision,
    files: listing.files,
    counts: { ...built.counts, files: listing.files.length },
    stamps,
    deferred: built.deferred,
  };
  if (built.ok && readProblems.length === 0) {
    const set = excluded === undefined ? built.set : { ...built.set, excluded };
    return { ...info, ok: true, set, diagnostics: [] };
  }
  const diagnostics = sortDiagnostics([...readProblems, ...built.diagnostics]);
  return { ...info, ok: false, diagnostics };
}

/**
 * The kind and name of what each excluded manifest file declares (./excluded.ts); undefined
 * when nothing was excluded. A file that is not a regular file, is over the size cap or is not
 * text is no manifest and declares nothing; one that cannot be read at all is `unreadable`.
 */
async function readExcluded(
  fs: LoaderFs,
  listing: Listing,
  maxFileBytes: number,
  maxAliasCount = DEFAULT_MAX_ALIAS_COUNT,
): Promise<ExcludedDeclarations | undefined> {
  if (listing.excluded.size === 0 && listing.excludedUnreadable.length === 0) return undefined;
  const declared: ExcludedResource[] = [];
  const unreadable = [...listing.excludedUnreadable];
  for (const [rel, real] of listing.excluded) {
    let bytes: Uint8Array;
    try {
      const info = await fs.stat(real);
      if (!info.isFile() || info.size > maxFileBytes) continue;
      bytes = await fs.readFile(real);
    } catch (err) {
      if (!(err instanceof FileRefusedError)) unreadable.push(rel);
      continue;
    }
    const text = decode(bytes, maxFileBytes);
    if (typeof text === 'string') declared.push(...declaredIn(rel, text, maxAliasCount));
  }
  return { declared, unreadable };
}

/**
 * A file of a load, read again as the load read it (a regular file, size-capped, decoded): for a
 * command that needs the documents as written (`migrate` keeps `{ env }` / `{ file }` as
 * references) after the load validated them.
 */
export async function readLoadedFile(
  resolvedDir: string,
  rel: string,
  maxFileBytes = DEFAULT_MAX_FILE_BYTES,
): Promise<string | { error: string }> {
  const result = await readManifest(
    nodeFs,
    path.join(resolvedDir, ...rel.split('/')),
    maxFileBytes,
  );
  return 'bytes' in result ? decode(result.bytes, maxFileBytes) : result;
}

function stampOf(info: { size: number; mtimeMs: number; ctimeMs?: number; ino?: number }): string {
  // ctime and the inode too: a save by rename, or within the clock's granularity, moves one.
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs ?? ''}:${info.ino ?? ''}`;
}

/**
 * A file of the load that changed since it was read (saved meanwhile, removed), or undefined.
 * The daemon checks it before its first write: a set read while an editor was saving it (a
 * truncated file reads as no edges) is not acted on; the save's own event reconciles next.
 */
export async function manifestsChangedSince(
  loaded: Pick<LoadInfo, 'stamps'>,
  fs: Pick<LoaderFs, 'stat'> = nodeFs,
): Promise<string | undefined> {
  for (const [file, stamp] of loaded.stamps) {
    try {
      if (stampOf(await fs.stat(file)) !== stamp.key) return file;
    } catch {
      return file;
    }
  }
  return undefined;
}

/** Like `loadManifests`, but throws ManifestError carrying every diagnostic when invalid.
 *
 * @internal used by tests and benchmarks
 */
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

const LOADER_WORDING: Readonly<Record<string, string>> = {
  'does not exist': 'does not exist',
  'permission denied': 'is not readable',
  'not a directory': 'is not a directory',
};

/** The shared resolver (./resolve.ts), with the command line's wording of its failures. */
async function resolveDir(dir: string): Promise<{ resolvedDir: string; revision: string | null }> {
  try {
    const resolved = await resolveManifestDir(dir);
    return { resolvedDir: resolved.realDir, revision: resolved.revision ?? null };
  } catch (err) {
    if (!(err instanceof ManifestDirError) || err.detail === undefined) throw err;
    const why = LOADER_WORDING[err.detail] ?? `cannot be read (${err.detail})`;
    throw new ManifestDirError(dir, `manifest directory ${dir} ${why}: desired state unknown`, {
      cause: err.cause,
      detail: err.detail,
    });
  }
}

/** Where a listed manifest file is read from: its real path if it was reached through a link. */
function manifestPath(
  resolvedDir: string,
  realPaths: ReadonlyMap<string, string>,
  rel: string,
): string {
  return realPaths.get(rel) ?? path.join(resolvedDir, ...rel.split('/'));
}

async function readManifest(
  fs: LoaderFs,
  file: string,
  maxFileBytes: number,
): Promise<{ bytes: Uint8Array; stamp: string; size: number } | { error: string }> {
  try {
    // Checked before reading, so a huge file is never pulled into memory; a file that became a
    // FIFO since the listing is refused rather than blocking the read.
    const info = await fs.stat(file);
    if (!info.isFile()) return { error: 'is no longer a regular file: cannot be read' };
    if (info.size > maxFileBytes) {
      return { error: `file is ${info.size} bytes, over the ${maxFileBytes}-byte limit` };
    }
    return { bytes: await fs.readFile(file), stamp: stampOf(info), size: info.size };
  } catch (err) {
    return { error: `cannot read file: ${errorMessage(err)}` };
  }
}

/**
 * `{ env }` from the given environment; `{ file }` relative to the manifest file's directory,
 * allowed only inside the manifest tree or one of `secretDirs` (after resolving symlinks, so a
 * link cannot escape either). Successful reads are cached for the load: one secret file is read once.
 * Neither may read the controller's own credentials (the environment's and `credentials`).
 */
export function createRefReader(
  root: string,
  options: {
    env: Readonly<Record<string, string | undefined>>;
    secretDirs: readonly string[];
    maxFileBytes: number;
    credentials?: readonly OwnCredential[];
    deferUnresolved?: boolean;
  },
): RefReader {
  const credentials = ownCredentials(options.env, options.credentials);
  const cache = new Map<string, ReadResult>();
  const allowed = [root, ...options.secretDirs.map((d) => safeRealpath(path.resolve(d)))].filter(
    (d): d is string => d !== undefined,
  );
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return {
    deferUnresolved: options.deferUnresolved === true,
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
    ownCredential: ({ env, value }) =>
      (env === undefined ? undefined : credentialVariable(env)) ??
      (value === undefined ? undefined : credentialIn(value, credentials)),
  };
}

function safeRealpath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function readRefFile(
  target: string,
  shown: string,
  allowed: readonly string[],
  maxFileBytes: number,
  decoder: { decode(bytes: Uint8Array): string },
): ReadResult {
  const real = safeRealpath(target);
  if (real === undefined) return { ok: false, message: `file ${shown} not found`, missing: true };
  if (!allowed.some((dir) => inside(dir, real))) {
    return {
      ok: false,
      message: `file ${shown} is outside the manifest directory (allow its directory with --secret-dir)`,
    };
  }
  try {
    // One open, checked by its descriptor: a path swapped for a FIFO after any earlier look is
    // refused, never waited on (a blocked read would stall `validate` and the daemon alike).
    const bytes = readRegularFile(real, maxFileBytes);
    if (bytes.includes(0))
      return { ok: false, message: `file ${shown} is binary (contains NUL bytes)` };
    return { ok: true, text: decoder.decode(bytes) };
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, message: `file ${shown} is not valid UTF-8` };
    if (err instanceof FileRefusedError) {
      return err.reason === 'not-a-file'
        ? { ok: false, message: `${shown} is not a file` }
        : { ok: false, message: `file ${shown} is over the ${maxFileBytes}-byte limit` };
    }
    return { ok: false, message: `cannot read file ${shown}: ${errorMessage(err)}` };
  }
}
