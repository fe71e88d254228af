/**
 * File-system triggers (chokidar): two watchers, re-pointed as the manifest set moves.
 *
 * - The *anchor watcher* watches the anchor's parent, depth 0, for the anchor's name only: a
 *   git-sync swap (`mv -T tmp link`), the link or directory disappearing or appearing. Swaps
 *   replace one entry by another of the same name, which a directory diff cannot see, so the
 *   raw `rename` events of that name count too.
 * - The *tree watcher* watches the resolved real directory recursively for `*.yaml`/`*.yml`
 *   files and sub-directories (names starting with `.` skipped, as the loader skips them; a
 *   Kubernetes ConfigMap's `..data` swap is the exception and counts as a link change). Editors
 *   that save by rename or unlink+add produce add/unlink/change events here; all of them just
 *   request a (debounced) cycle.
 *
 * - *Rechecks.* chokidar reports one change of a file per 50 ms and drops the others (no trailing
 *   event), and drops raw events 5 ms apart: a save in place (truncate, then write a few
 *   milliseconds later) reports the truncation only. So every reported change of a manifest file
 *   is followed by a look at the file after that window (`RECHECK_MS`): when its size, times or
 *   inode differ from what the report saw, the change is reported again (and looked at again),
 *   with the file's ctime: the debounce counts from the write, not from the second look.
 *
 * The daemon calls `pointAt` at the start of each cycle with the fresh resolution, before the
 * reconcile reads anything, so a change made after the read is always seen. Events from before a
 * watcher's `ready` are dropped: they describe the state the coming cycle reads anyway.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import type { Logger } from '../log.js';
import { isSkippedName } from '../manifest/loader.js';

export type ChangeKind = 'file' | 'link';

export interface WatchTarget {
  /** See `Anchor` in resolve.ts. */
  readonly anchor: string;
  /** The resolved directory to watch recursively, when it currently resolves. */
  readonly realDir?: string | undefined;
  /** Its device:inode, so a directory recreated at the same path is re-watched. */
  readonly identity?: string | undefined;
}

export interface ManifestWatcher {
  /** (Re)points the watchers; resolves once they are ready (or after the ready timeout). */
  pointAt(target: WatchTarget): Promise<void>;
  close(): Promise<void>;
}

export interface ManifestWatcherOptions {
  /**
   * A change of `kind` at `file`; `changedAt` (epoch ms, the file's ctime) when it was found on a
   * second look, after the change itself was reported or dropped.
   */
  readonly onChange: (kind: ChangeKind, file: string, changedAt?: number) => void;
  /**
   * An entry of the tree that is no manifest file appeared or went (a link, which may lead to a
   * directory, another file): no cycle of its own, but the next read lists the tree again.
   */
  readonly onEntry?: (file: string) => void;
  readonly logger: Logger;
  /** How long to wait for a watcher's initial scan before going on without it. */
  readonly readyTimeoutMs?: number;
  /** `--exclude`: paths relative to the manifest directory (`/`-separated) not to watch. */
  readonly excluded?: (rel: string) => boolean;
}

const MANIFEST_FILE = /\.ya?ml$/i;
/** Kubernetes ConfigMap/Secret volumes swap this symlink to publish a new version. */
const CONFIGMAP_DATA = '..data';

/** After chokidar's window of one change per file (50 ms), with room for its stat. */
const RECHECK_MS = 100;

interface Running {
  readonly key: string;
  readonly watcher: FSWatcher;
  /** Stops the tree watcher's rechecks (none for the anchor watcher). */
  readonly stop?: () => void;
}

export function createManifestWatcher(options: ManifestWatcherOptions): ManifestWatcher {
  const { logger } = options;
  let anchorWatch: Running | undefined;
  let treeWatch: Running | undefined;
  let closed = false;
  // pointAt and close run one at a time, in call order.
  let chain: Promise<void> = Promise.resolve();

  function serial(step: () => Promise<void>): Promise<void> {
    const run = chain.then(step, step);
    chain = run.catch(() => undefined);
    return run;
  }

  return {
    pointAt(target) {
      return serial(async () => {
        if (closed) return;
        if (anchorWatch?.key !== target.anchor) {
          await closeOne(options, anchorWatch);
          anchorWatch = undefined;
          anchorWatch = await startAnchorWatch(options, target.anchor);
          logger.debug({ anchor: target.anchor }, 'watching for link swaps');
        }
        const treeKey =
          target.realDir === undefined ? undefined : `${target.realDir}\0${target.identity ?? ''}`;
        if (treeWatch?.key !== treeKey) {
          await closeOne(options, treeWatch);
          treeWatch = undefined;
          if (target.realDir !== undefined && treeKey !== undefined) {
            treeWatch = await startTreeWatch(options, target.realDir, treeKey);
            logger.debug({ dir: target.realDir }, 'watching manifest files');
          }
        }
        if (closed) {
          await closeOne(options, anchorWatch);
          await closeOne(options, treeWatch);
        }
      });
    },

    close() {
      closed = true;
      return serial(async () => {
        await closeOne(options, anchorWatch);
        await closeOne(options, treeWatch);
        anchorWatch = undefined;
        treeWatch = undefined;
      });
    },
  };
}

function onError(options: ManifestWatcherOptions, which: string) {
  return (err: unknown) => options.logger.warn({ watcher: which, err }, 'file watcher error');
}

async function ready(
  options: ManifestWatcherOptions,
  w: FSWatcher,
  what: string,
): Promise<boolean> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 5000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ok = await Promise.race([
    new Promise<boolean>((resolve) => w.once('ready', () => resolve(true))),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), readyTimeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (!ok) options.logger.warn({ watch: what }, 'file watcher not ready in time; continuing');
  return ok;
}

/** Watches the entry `anchor` in its parent: a swap of the link is a change. */
async function startAnchorWatch(options: ManifestWatcherOptions, anchor: string): Promise<Running> {
  const { onChange } = options;
  const parent = path.dirname(anchor);
  const name = path.basename(anchor);
  let isReady = false;
  const watcher = watch(parent, {
    depth: 0,
    ignoreInitial: true,
    followSymlinks: false,
    ignored: (p: string) => p !== parent && path.basename(p) !== name,
  });
  watcher.on('error', onError(options, 'anchor'));
  watcher.on('all', (_event, p) => {
    if (isReady && path.basename(p) === name && path.dirname(p) === parent) {
      onChange('link', p);
    }
  });
  // A swap by rename leaves an entry of the same name, which chokidar's directory diff misses.
  watcher.on('raw', (_event, file, details) => {
    const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
    if (isReady && file === name && (watched === undefined || watched === parent)) {
      onChange('link', anchor);
    }
  });
  await ready(options, watcher, parent);
  isReady = true;
  return { key: anchor, watcher };
}

/** Watches the manifest tree: manifest files, directories, and the ConfigMap `..data` link. */
async function startTreeWatch(
  options: ManifestWatcherOptions,
  root: string,
  key: string,
): Promise<Running> {
  const { onChange } = options;
  let isReady = false;
  const recheck = rechecks((file, changedAt) => onChange('file', file, changedAt));
  const watcher = watch(root, {
    ignoreInitial: true,
    followSymlinks: false,
    // Every add and change comes with the file's stats: what a recheck compares with.
    alwaysStat: true,
    ignored: (p: string) => {
      if (p === root) return false;
      const parts = path.relative(root, p).split(path.sep);
      if (options.excluded?.(parts.join('/')) === true) return true;
      const last = parts.length - 1;
      return parts.some(
        (part, i) => isSkippedName(part) && !(i === last && part === CONFIGMAP_DATA),
      );
    },
  });
  watcher.on('error', onError(options, 'tree'));
  watcher.on('all', (event, p, stats) => {
    if (!isReady) return;
    const base = path.basename(p);
    if (base === CONFIGMAP_DATA) onChange('link', p);
    else if (p === root) onChange('link', p);
    else if (event === 'addDir' || event === 'unlinkDir') onChange('file', p);
    else if (MANIFEST_FILE.test(base)) {
      onChange('file', p);
      if (event === 'add' || event === 'change') recheck(p, stats);
    } else if (event === 'add' || event === 'unlink') options.onEntry?.(p);
  });
  // A dangling link comes as a raw rename only (chokidar cannot stat it).
  watcher.on('raw', (event, file, details) => {
    const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
    if (!isReady || event !== 'rename' || typeof watched !== 'string' || MANIFEST_FILE.test(file)) {
      return;
    }
    const p = path.join(watched, file);
    if (p !== root && !isSkippedName(path.basename(p))) options.onEntry?.(p);
  });
  await ready(options, watcher, root);
  isReady = true;
  return { key, watcher, stop: () => recheck.stop() };
}

/** What a recheck compares: the same key, the same file and content as far as stat can tell. */
function statKey(stats: Stats | undefined): string {
  return stats === undefined ? '' : `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}`;
}

/**
 * Looks at a reported file again `RECHECK_MS` later and reports it once more when it changed
 * since the report (a change chokidar dropped), then looks again, until it stays as reported.
 */
function rechecks(report: (file: string, changedAt: number) => void) {
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  let stopped = false;
  const arm = (file: string, seen: string) => {
    clearTimeout(timers.get(file));
    timers.set(
      file,
      setTimeout(() => {
        timers.delete(file);
        stat(file).then(
          (now) => {
            const key = statKey(now);
            if (stopped || key === seen) return;
            report(file, now.ctimeMs);
            arm(file, key);
          },
          // Gone: chokidar reports the unlink.
          () => undefined,
        );
      }, RECHECK_MS),
    );
  };
  return Object.assign((file: string, stats: Stats | undefined) => arm(file, statKey(stats)), {
    stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  });
}

async function closeOne(
  options: ManifestWatcherOptions,
  running: Running | undefined,
): Promise<void> {
  if (!running) return;
  running.stop?.();
  try {
    await running.watcher.close();
  } catch (err) {
    onError(options, 'close')(err);
  }
}
