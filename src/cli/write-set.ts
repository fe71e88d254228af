/**
 * A set of files written into an output directory all at once, or not at all (`import`,
 * `migrate`): a partial set would validate, and applying it would delete what is missing.
 *
 * Every file is first written into a staging directory inside the output directory (the same
 * file system, so a rename moves it; a name starting with `.`, so no manifest listing reads
 * it), and only when all of them are written are they moved into place, each by one `rename`
 * (or `link`, which refuses a file that appeared meanwhile, when nothing may be replaced). A
 * file replaced is first hard-linked into the staging directory, so that undoing needs no
 * space. A failure at any point (a full disk, a refused path) removes what was staged, moves
 * the replaced files back, removes the directories this call made, and throws: the output
 * directory is as it was. A full disk is a `DiskFullError` that says so.
 *
 * Every path written is checked, not only the output directory: each directory level is
 * resolved (links followed) before anything is made below it, and must stay inside the output
 * directory and out of the directories the caller forbids (migrate's source), so a symbolic
 * link such as `out/internal -> src/internal` cannot lead a write elsewhere. A link at a file's
 * own place is replaced by the file (a rename never writes through a link).
 */
import {
  copyFile,
  link,
  lstat,
  mkdir,
  mkdtemp,
  realpath,
  rename,
  rm,
  rmdir,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import {
  ConfigError,
  DiskFullError,
  EdgesyncError,
  errorMessage,
  isDiskFull,
  UsageError,
} from '../errors.js';
import { inside } from '../manifest/listing.js';

export interface OutputFile {
  /** Relative to the output directory, `/`-separated. */
  readonly file: string;
  readonly text: string;
}

/** The calls that write data or move files, injectable so that tests can fail one (ENOSPC). */
export interface WriteFs {
  readonly writeFile: (file: string, text: string) => Promise<void>;
  readonly rename: (from: string, to: string) => Promise<void>;
  readonly link: (existing: string, created: string) => Promise<void>;
}

export const nodeWriteFs: WriteFs = {
  writeFile: (file, text) => writeFile(file, text, { flag: 'wx' }),
  rename,
  link,
};

export interface WriteSetOptions {
  /** Replace existing files; else one that exists is an error and nothing is written. */
  readonly overwrite: boolean;
  /** Directories no written file may land in, whatever links lead there, and why (for the message). */
  readonly forbidden?: readonly { readonly dir: string; readonly what: string }[];
  /** The output directory as the user named it, for messages (`--out out/`). */
  readonly shown: string;
  readonly fs?: WriteFs | undefined;
}

/** One file on its way: where it is staged, where it goes, and whether it replaces one. */
interface Staged {
  readonly staged: string;
  readonly dest: string;
  readonly exists: boolean;
  backup?: string;
}

/** Writes `files` into `out` (made if missing), all of them or none; see the module comment. */
export async function writeFileSet(
  out: string,
  files: readonly OutputFile[],
  options: WriteSetOptions,
): Promise<void> {
  const fs = options.fs ?? nodeWriteFs;
  const created: string[] = [];
  // What was being done when a call failed, for the message.
  let doing = `create ${path.resolve(out)}`;
  try {
    await makeLevels(path.resolve(out), created);
    doing = `write into ${path.resolve(out)}`;
    const realOut = await realpath(out);
    const forbidden = await Promise.all(
      (options.forbidden ?? []).map(async (f) => ({
        what: f.what,
        dir: await realpath(f.dir).catch(() => path.resolve(f.dir)),
      })),
    );
    for (const f of forbidden) {
      if (inside(f.dir, realOut)) {
        throw new UsageError(
          `refusing to write into ${options.shown}: it resolves to ${realOut}, inside ${f.what}: nothing was written`,
        );
      }
    }
    const staging = await mkdtemp(path.join(realOut, '.edgesync-staging-'));
    try {
      const placed: Staged[] = [];
      for (const [i, f] of files.entries()) {
        doing = `create the directories of ${f.file} under ${options.shown}`;
        const dest = await destination(realOut, f.file, forbidden, created, options);
        doing = `write ${dest}`;
        const exists = await lstat(dest).then(
          () => true,
          () => false,
        );
        if (exists && !options.overwrite) {
          throw new ConfigError(`${dest} already exists: nothing was written to ${options.shown}`);
        }
        const staged = path.join(staging, String(i));
        await fs.writeFile(staged, f.text);
        placed.push({ staged, dest, exists });
      }
      await moveIntoPlace(placed, staging, fs, options.overwrite, (d) => {
        doing = `write ${d}`;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  } catch (err) {
    await removeMade(created);
    throw refusal(err, doing, options.shown);
  }
}

/**
 * Where `rel` goes under `realOut`: each directory level made if missing (recorded in `created`)
 * and resolved before the next one is made below it, and checked.
 */
async function destination(
  realOut: string,
  rel: string,
  forbidden: readonly { dir: string; what: string }[],
  created: string[],
  options: WriteSetOptions,
): Promise<string> {
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new EdgesyncError(
      'ES_INTERNAL',
      `refusing to write ${JSON.stringify(rel)}: not a relative file path`,
    );
  }
  let at = realOut;
  for (const part of parts.slice(0, -1)) {
    const next = path.join(at, part);
    await makeLevels(next, created);
    at = await realpath(next);
    checkPlace(rel, path.relative(realOut, next), at, realOut, forbidden, options);
  }
  return path.join(at, parts.at(-1) as string);
}

function checkPlace(
  rel: string,
  level: string,
  real: string,
  realOut: string,
  forbidden: readonly { dir: string; what: string }[],
  options: WriteSetOptions,
): void {
  const where = path.join(options.shown, level);
  for (const f of forbidden) {
    if (inside(f.dir, real)) {
      throw new UsageError(
        `refusing to write ${rel}: ${where} resolves to ${real}, inside ${f.what} (a symbolic link): nothing was written`,
      );
    }
  }
  if (!inside(realOut, real)) {
    throw new UsageError(
      `refusing to write ${rel}: ${where} resolves to ${real}, outside ${options.shown} (a symbolic link): nothing was written`,
    );
  }
}

/** Makes `dir` and its missing ancestors, recording each one made (outermost first). */
async function makeLevels(dir: string, created: string[]): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      await lstat(at);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(at) === at) throw err;
      missing.unshift(at);
    }
  }
  for (const level of missing) {
    try {
      await mkdir(level);
      created.push(level);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * Backs up every file to be replaced (a hard link: no space needed; a copy where links are not
 * supported, before anything moved), then moves each staged file into place; on a failure,
 * undoes every move made.
 */
async function moveIntoPlace(
  placed: readonly Staged[],
  staging: string,
  fs: WriteFs,
  overwrite: boolean,
  doing: (dest: string) => void,
): Promise<void> {
  for (const [i, p] of placed.entries()) {
    if (!p.exists) continue;
    doing(p.dest);
    const backup = path.join(staging, `${i}.old`);
    await fs.link(p.dest, backup).catch(() => copyFile(p.dest, backup));
    p.backup = backup;
  }
  const done: Staged[] = [];
  try {
    for (const p of placed) {
      doing(p.dest);
      if (overwrite) await fs.rename(p.staged, p.dest);
      else await fs.link(p.staged, p.dest);
      done.push(p);
    }
  } catch (err) {
    for (const p of done.reverse()) {
      if (p.backup !== undefined) await rename(p.backup, p.dest).catch(() => undefined);
      else await unlink(p.dest).catch(() => undefined);
    }
    throw err;
  }
}

/** Removes the directories this call made, innermost first (only empty ones go). */
async function removeMade(created: readonly string[]): Promise<void> {
  for (const dir of [...created].reverse()) await rmdir(dir).catch(() => undefined);
}

function refusal(err: unknown, doing: string, shown: string): unknown {
  if (isDiskFull(err)) {
    return new DiskFullError(
      `disk full: cannot ${doing}: nothing was written to ${shown} (free some space and run again)`,
      { cause: err },
    );
  }
  if (err instanceof EdgesyncError) return err;
  return new ConfigError(`cannot ${doing}: ${errorMessage(err)}: nothing was written to ${shown}`, {
    cause: err,
  });
}
