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
 * The daemon calls `pointAt` at the start of each cycle with the fresh resolution, before the
 * reconcile reads anything, so a change made after the read is always seen. Events from before a
 * watcher's `ready` are dropped: they describe the state the coming cycle reads anyway.
 */
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
  readonly onChange: (kind: ChangeKind, file: string) => void;
  readonly logger: Logger;
  /** How long to wait for a watcher's initial scan before going on without it. */
  readonly readyTimeoutMs?: number;
  /** `--exclude`: paths relative to the manifest directory (`/`-separated) not to watch. */
  readonly excluded?: (rel: string) => boolean;
}

const MANIFEST_FILE = /\.ya?ml$/i;
/** Kubernetes ConfigMap/Secret volumes swap this symlink to publish a new version. */
const CONFIGMAP_DATA = '..data';

interface Running {
  readonly key: string;
  readonly watcher: FSWatcher;
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
  const watcher = watch(root, {
    ignoreInitial: true,
    followSymlinks: false,
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
  watcher.on('all', (event, p) => {
    if (!isReady) return;
    const base = path.basename(p);
    if (base === CONFIGMAP_DATA) onChange('link', p);
    else if (p === root) onChange('link', p);
    else if (event === 'addDir' || event === 'unlinkDir') onChange('file', p);
    else if (MANIFEST_FILE.test(base)) onChange('file', p);
  });
  await ready(options, watcher, root);
  isReady = true;
  return { key, watcher };
}

async function closeOne(
  options: ManifestWatcherOptions,
  running: Running | undefined,
): Promise<void> {
  if (!running) return;
  try {
    await running.watcher.close();
  } catch (err) {
    onError(options, 'close')(err);
  }
}
