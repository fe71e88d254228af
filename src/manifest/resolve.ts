/**
 * Where the manifest directory really is right now, and which revision that is: the one
 * resolver of the loader (CLI commands) and the daemon.
 *
 * git-sync publishes each checkout by swapping a symlink atomically (`ln -s new tmp && mv -T tmp
 * link`) and then deleting the old worktree. The manifest path may be the link itself
 * (`/git/current`) or a folder inside it (`/git/current/edges`). The *anchor* is the deepest
 * symlink among the path's components; its parent is the directory to watch for swaps, and
 * `basename(readlink(anchor))` is the revision. Each cycle resolves afresh from a single
 * `readlink`, so the revision and the directory always describe the same checkout.
 *
 * A missing or unreadable directory is "desired state unknown": resolution throws
 * `ManifestDirError` and the daemon makes no call at all, never one with an empty set.
 */
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { errorMessage, ManifestDirError } from '../errors.js';
import { gitRevision } from './git.js';

export interface ResolvedDir {
  /** The configured path, absolute. */
  readonly dir: string;
  /** The real path of the directory (no symlinks left). */
  readonly realDir: string;
  /**
   * `basename(readlink(anchor))` when the path goes through a symlink (git-sync), else the
   * commit of a plain git checkout around the directory (`./git.ts`), else undefined.
   */
  readonly revision: string | undefined;
  /** The symlink component the revision comes from, when there is one. */
  readonly link: string | undefined;
  /** Device, inode and birth time of `realDir`: a directory recreated at the same path differs. */
  readonly identity: string;
}

export interface Anchor {
  /** The path whose appearance, disappearance or swap means "the manifest set moved". */
  readonly path: string;
  /** True when `path` is a symlink (git-sync style); false for a plain or missing directory. */
  readonly isLink: boolean;
}

/** The message every "directory unknown" failure starts with (asserted on by tests and users). */
export const MISSING_DIR_MESSAGE = 'manifest directory missing: desired state unknown; no writes';

/** Prefixes of `abs`, shortest first: `/a`, `/a/b`, `/a/b/c`. */
function prefixes(abs: string): string[] {
  const { root } = path.parse(abs);
  const parts = abs
    .slice(root.length)
    .split(path.sep)
    .filter((p) => p !== '');
  return parts.map((_, i) => path.join(root, ...parts.slice(0, i + 1)));
}

/**
 * Finds the anchor of `abs`: the deepest symlink component, else the first missing component
 * (so the watcher sees it appear), else `abs` itself. Top-level components (`/tmp`, `/var`) are
 * never the anchor: a system's own layout links (macOS `/var -> /private/var`) are not git-sync's.
 */
export async function findAnchor(dir: string): Promise<Anchor> {
  const abs = path.resolve(dir);
  let link: string | undefined;
  for (const [i, p] of prefixes(abs).entries()) {
    let isLink: boolean;
    try {
      isLink = (await fs.lstat(p)).isSymbolicLink();
    } catch {
      return link !== undefined ? { path: link, isLink: true } : { path: p, isLink: false };
    }
    if (isLink && i > 0) link = p;
  }
  return link !== undefined ? { path: link, isLink: true } : { path: abs, isLink: false };
}

function missing(abs: string, detail: string, cause?: unknown): ManifestDirError {
  return new ManifestDirError(abs, `${MISSING_DIR_MESSAGE} (${abs}: ${detail})`, { cause, detail });
}

function describe(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a path component is not a directory';
  if (code === 'ELOOP') return 'too many levels of symbolic links';
  return errorMessage(err);
}

/**
 * Resolves the manifest path now. Throws `ManifestDirError` when it is missing, not a directory
 * or unreadable.
 */
export async function resolveManifestDir(dir: string): Promise<ResolvedDir> {
  const abs = path.resolve(dir);
  // The anchor is found first and the path resolved after; if a link appeared or vanished in
  // between (a swap racing us), the pair would disagree, so resolve again.
  for (let attempt = 1; ; attempt++) {
    const anchor = await findAnchor(abs);
    const resolved = await resolveThrough(abs, anchor);
    const after = await findAnchor(abs);
    if (after.path === anchor.path && after.isLink === anchor.isLink) return resolved;
    if (attempt >= 3) throw missing(abs, 'it keeps changing while being resolved');
  }
}

async function resolveThrough(abs: string, anchor: Anchor): Promise<ResolvedDir> {
  let revision: string | undefined;
  let throughLink = abs;
  if (anchor.isLink) {
    let target: string;
    try {
      target = await fs.readlink(anchor.path);
    } catch (err) {
      throw missing(abs, describe(err), err);
    }
    revision = path.basename(target) || undefined;
    // Resolve through the target we read, not the link again: a swap between two reads would
    // pair one checkout's revision with another's files.
    const rest = path.relative(anchor.path, abs);
    throughLink = path.join(path.resolve(path.dirname(anchor.path), target), rest);
  }
  let realDir: string;
  try {
    realDir = await fs.realpath(throughLink);
    const stat = await fs.stat(realDir);
    if (!stat.isDirectory()) throw missing(abs, 'not a directory');
    await fs.access(realDir, constants.R_OK | constants.X_OK);
    if (revision === undefined) revision = await gitRevision(realDir);
    return {
      dir: abs,
      realDir,
      revision,
      link: anchor.isLink ? anchor.path : undefined,
      // Inode numbers are reused at once by ext4 and tmpfs; the birth time tells them apart.
      identity: `${stat.dev}:${stat.ino}:${stat.birthtimeMs}`,
    };
  } catch (err) {
    if (err instanceof ManifestDirError) throw err;
    throw missing(abs, describe(err), err);
  }
}

/** True when both resolutions name the same checkout of the same directory. */
export function sameResolution(a: ResolvedDir, b: ResolvedDir): boolean {
  return a.realDir === b.realDir && a.identity === b.identity && a.revision === b.revision;
}
