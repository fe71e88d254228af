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
   * With `cache`: read only the files touched since the cache's last load (`touchManifests`),
   * the ones whose kept result cannot be reused (references, findings) and new ones; take every
   * other file as that load read it, and its listing when every touched path is a file it
   * listed. A full load when the cache has no load of this directory or was told everything
   * may have changed. Default false: every file is read (the daemon's resyncs).
   */
  readonly incremental?: boolean;
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
  /**
   * The stamps of the files this load read (all of `stamps` unless `incremental`): the only
   * ones it can have read mid-save.
   */
  readonly read: ReadonlyMap<string, FileStamp>;
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

/**
 * What the loader keeps with a `FileCache` between loads of one directory: the listing, each
 * file's stamp, what the excluded files declare, and the paths touched since (`touchManifests`).
 */
interface LoadMemory {
  /** Undefined until a whole load of a directory was made. */
  readonly last:
    | {
        readonly resolvedDir: string;
        /** The options the listing depends on. */
        readonly listedWith: string;
        readonly listing: Listing;
        /** By relative path: where it was read from and its stamp then. */
        readonly stamps: ReadonlyMap<string, { readonly path: string; readonly stamp: FileStamp }>;
        readonly excluded: ExcludedDeclarations | undefined;
      }
    | undefined;
  /** Absolute paths reported changed since the last load (files or directories). */
  readonly touched: Set<string>;
  /** Told that anything may have changed since the last load. */
  everything: boolean;
  /** Counts the times it was told so, to tell one during a load. */
  epoch: number;
}

const memories = new WeakMap<FileCache, LoadMemory>();

function memoryOf(cache: FileCache): LoadMemory {
  let memory = memories.get(cache);
  if (memory === undefined) {
    memory = { last: undefined, touched: new Set(), everything: true, epoch: 0 };
    memories.set(cache, memory);
  }
  return memory;
}

/**
 * Tells the cache's next `incremental` load which paths changed since its last load (the
 * daemon's watcher reports them); undefined when that is not known (a link swapped): the next
 * load reads everything.
 */
export function touchManifests(cache: FileCache, paths: readonly string[] | undefined): void {
  const memory = memoryOf(cache);
  if (paths === undefined) {
    memory.everything = true;
    memory.epoch += 1;
  } else for (const p of paths) memory.touched.add(p);
}

/** Loads and validates every manifest under `dir`. Throws ManifestDirError only for the directory. */
export async function loadManifests(dir: string, options: LoadOptions = {}): Promise<LoadResult> {
  const absolute = path.resolve(dir);
  const { resolvedDir, revision } = await resolveDir(absolute);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;

  const fs = options.fs ?? nodeFs;
  const secretDirs = (options.secretDirs ?? [])
    .map((d) => safeRealpath(path.resolve(d)))
    .filter((d): d is string => d !== undefined);
  const listedWith = JSON.stringify([options.exclude ?? [], secretDirs]);
  const list = (): Promise<Listing> =>
    options.files === undefined
      ? listManifestFiles(resolvedDir, absolute, fs, secretDirs, excludeMatcher(options.exclude))
      : listNamedFiles(resolvedDir, fs, options.files);
  const cache = options.cache;
  const memory = cache === undefined ? undefined : memoryOf(cache);
  const epoch = memory?.epoch;
  // What this load reads from: every path touched until now is read (or listed) again.
  const touched = [...(memory?.touched ?? [])];
  const last = memory?.last;
  const base =
    options.incremental === true &&
    options.files === undefined &&
    memory?.everything === false &&
    last?.resolvedDir === resolvedDir &&
    last.listedWith === listedWith
      ? last
      : undefined;
  const read =
    base === undefined || cache === undefined
      ? await readAll(fs, resolvedDir, await list(), maxFileBytes)
      : await readChanged(fs, resolvedDir, base, cache, touched, list, maxFileBytes);
  const { listing, sources, stamps, fresh } = read;
  const readProblems: Diagnostic[] = [...listing.problems, ...read.problems];

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
    ...(cache === undefined ? {} : { cache }),
    ...(options.owner === undefined ? {} : { owner: options.owner }),
    ...(options.policyTests === undefined ? {} : { policyTests: options.policyTests }),
    digestKey: digestKeyFrom(options.env ?? process.env, (file) => readFileSync(file, 'utf8')),
  });
  // Excluded files are not watched: what they declare is read again with a new listing only.
  const excluded =
    base !== undefined && listing === base.listing
      ? base.excluded
      : await readExcluded(fs, listing, maxFileBytes, options.maxAliasCount);
  if (memory !== undefined && cache !== undefined) {
    for (const p of touched) memory.touched.delete(p);
    // A load of named files is no base for one of the whole directory; nor is one during which
    // the cache was told that anything may have changed.
    const whole = options.files === undefined;
    memory.everything = !whole || memory.epoch !== epoch;
    if (whole) {
      memories.set(cache, {
        ...memory,
        last: { resolvedDir, listedWith, listing, stamps, excluded },
      });
    }
  }
  const info = {
    dir: absolute,
    resolvedDir,
    revision,
    files: listing.files,
    counts: { ...built.counts, files: listing.files.length },
    stamps: new Map([...stamps.values()].map((s) => [s.path, s.stamp])),
    read: fresh,
    deferred: built.deferred,
  };
  if (built.ok && readProblems.length === 0) {
    const set = excluded === undefined ? built.set : { ...built.set, excluded };
    return { ...info, ok: true, set, diagnostics: [] };
  }
  const diagnostics = sortDiagnostics([...readProblems, ...built.diagnostics]);
  return { ...info, ok: false, diagnostics };
}

/** The files a load hands to the build, and what it found reading them. */
interface ReadFiles {
  readonly listing: Listing;
  readonly sources: SourceFile[];
  readonly problems: Diagnostic[];
  /** Every listed file read now or before, by relative path. */
  readonly stamps: Map<string, { readonly path: string; readonly stamp: FileStamp }>;
  /** The stamps of the files read now, by the path read. */
  readonly fresh: Map<string, FileStamp>;
}

/** Reads the files of `listing` named by `which` (all of them by default). */
async function readListed(
  fs: LoaderFs,
  resolvedDir: string,
  listing: Listing,
  maxFileBytes: number,
  which: (rel: string) => boolean = () => true,
): Promise<ReadFiles & { readonly failed: string[] }> {
  const sources: SourceFile[] = [];
  const problems: Diagnostic[] = [];
  const stamps = new Map<string, { path: string; stamp: FileStamp }>();
  const fresh = new Map<string, FileStamp>();
  const failed: string[] = [];
  await runPool(
    listing.files.filter((rel) => which(rel)),
    16,
    async (rel) => {
      const file = manifestPath(resolvedDir, listing.realPaths, rel);
      const result = await readManifest(fs, file, maxFileBytes);
      if ('bytes' in result) {
        sources.push({ file: rel, text: decode(result.bytes, maxFileBytes) });
        const stamp = { file: rel, size: result.size, key: result.stamp };
        stamps.set(rel, { path: file, stamp });
        fresh.set(file, stamp);
      } else {
        problems.push(problem(rel, result.error));
        failed.push(rel);
      }
    },
  );
  return { listing, sources, problems, stamps, fresh, failed };
}

function readAll(
  fs: LoaderFs,
  resolvedDir: string,
  listing: Listing,
  maxFileBytes: number,
): Promise<ReadFiles> {
  return readListed(fs, resolvedDir, listing, maxFileBytes);
}

/**
 * An incremental load's reading: the touched files, the ones whose kept result cannot stand
 * for their text (references, findings, not read last time) and those reached through a link;
 * every other listed file as the last load had it. The kept listing serves when every touched
 * path is a plain file it listed that can still be read; otherwise the directory is listed again
 * (a file added, removed or renamed, a directory) and the new files are read too.
 */
async function readChanged(
  fs: LoaderFs,
  resolvedDir: string,
  base: NonNullable<LoadMemory['last']>,
  cache: FileCache,
  touched: readonly string[],
  list: () => Promise<Listing>,
  maxFileBytes: number,
): Promise<ReadFiles> {
  const touchedRel = new Set(
    touched.map((p) => path.relative(resolvedDir, p).split(path.sep).join('/')),
  );
  const known = (listing: Listing) => (rel: string) =>
    !touchedRel.has(rel) &&
    cache.reusable(rel) &&
    base.stamps.has(rel) &&
    !viaLink(resolvedDir, listing, rel);
  const listed = listedFiles(base.listing);
  const keepListing = [...touchedRel].every(
    (rel) => listed.has(rel) && !viaLink(resolvedDir, base.listing, rel),
  );
  let listing = keepListing ? base.listing : await list();
  // One test per listing, not one made per file.
  let isKnown = known(listing);
  let read = await readListed(fs, resolvedDir, listing, maxFileBytes, (rel) => !isKnown(rel));
  if (listing === base.listing && read.failed.length > 0) {
    // Removed or replaced since: what the directory holds now is the listing's to say.
    listing = await list();
    isKnown = known(listing);
    read = await readListed(fs, resolvedDir, listing, maxFileBytes, (rel) => !isKnown(rel));
  }
  const stamps = new Map<string, { path: string; stamp: FileStamp }>();
  const sources: SourceFile[] = [...read.sources];
  for (const rel of listing.files) {
    const now = read.stamps.get(rel);
    const before = base.stamps.get(rel);
    if (now !== undefined) stamps.set(rel, now);
    else if (isKnown(rel) && before !== undefined) {
      stamps.set(rel, before);
      sources.push({ file: rel, unchanged: true });
    }
  }
  return { listing, sources, problems: read.problems, stamps, fresh: read.fresh };
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
  loaded: { readonly stamps: LoadInfo['stamps']; readonly read?: LoadInfo['read'] | undefined },
  fs: Pick<LoaderFs, 'stat'> = nodeFs,
): Promise<string | undefined> {
  // Only a file read now can have been read mid-save; one taken as last read was whole then.
  for (const [file, stamp] of loaded.read ?? loaded.stamps) {
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

/**
 * A listed file reached through a link (its own, or a directory's): the watcher, which does not
 * follow links, may not see it change, so an incremental load reads it every time.
 */
function viaLink(resolvedDir: string, listing: Listing, rel: string): boolean {
  let linked = linkedFiles.get(listing);
  if (linked === undefined) {
    linked = new Set();
    for (const [file, real] of listing.realPaths) {
      if (real !== path.join(resolvedDir, ...file.split('/'))) linked.add(file);
    }
    linkedFiles.set(listing, linked);
  }
  return linked.has(rel);
}

/** The files of a listing reached through a link (`viaLink`), worked out once per listing. */
const linkedFiles = new WeakMap<Listing, Set<string>>();

/** The files of a listing as a set, made once per listing (a load keeps the last listing). */
function listedFiles(listing: Listing): ReadonlySet<string> {
  let listed = listedSets.get(listing);
  if (listed === undefined) {
    listed = new Set(listing.files);
    listedSets.set(listing, listed);
  }
  return listed;
}

const listedSets = new WeakMap<Listing, ReadonlySet<string>>();

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
