/**
 * What a reconciler is configured with, and what it keeps between cycles. The steps of a cycle
 * (preparation.ts, steps.ts) read the options and update the kept state; nothing else does.
 */

import type { ApiClient, LiveSnapshot } from '../api/index.js';
import type { Logger } from '../log.js';
import { FileCache } from '../manifest/build.js';
import type { OwnCredential } from '../manifest/own-credentials.js';
import type { ValueMask } from '../manifest/secrets.js';
import { PlanMemo } from '../plan/index.js';
import type { PlanOptions } from '../plan/plan.js';
import type { Guess } from './incremental.js';

export interface ReconcilerOptions {
  readonly client: ApiClient;
  readonly owner: string;
  readonly allowEmpty: boolean;
  /** Hold back what needs a resource that is not ready (`PlanOptions.waitForReady`). */
  readonly waitForReady?: boolean | undefined;
  readonly maxDeletes: number;
  readonly concurrency: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly secretDirs: readonly string[];
  /** The controller's credentials beyond `env`'s, which no reference may read. */
  readonly credentials?: readonly OwnCredential[] | undefined;
  /** `--exclude` globs, relative to the manifest directory. */
  readonly exclude?: readonly string[] | undefined;
  readonly logger: Logger;
  /** The client's API budget, for the ETA of long applies. */
  readonly budget?: { readonly limit: number; readonly windowMs: number } | undefined;
  /** Incremental cycles for file events (default true); false lists the account every cycle. */
  readonly incremental?: boolean | undefined;
  /**
   * `observe`: plan every cycle and report each difference as drift, never write (`--mode
   * observe`, or a suspended daemon). Read at each cycle and before each write, so a suspension
   * stops writes at once.
   */
  readonly mode?: (() => 'enforce' | 'observe') | undefined;
  /**
   * Set to each cycle's sensitive values (read from env or file), for the log lines the cycle
   * writes (`createLogger({ mask })`). The report's own strings are masked here either way.
   */
  readonly mask?: ValueMask | undefined;
  /** Leader election: standbys plan but never write; the applier fences every write. */
  readonly leadership?: { isLeader(): boolean; fence(): void } | undefined;
  /**
   * How long a file that lost resources (emptied or truncated) must stay unchanged before a cycle
   * acts on it (the daemon's debounce; default `DEFAULT_SETTLE_MS`): a file being rewritten in
   * place reads so until its writer is done.
   */
  readonly settleMs?: number | undefined;
  /** Wall clock in ms, for `settleMs`. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /**
   * Called between a cycle's writes and the check that reads them back (`RunOptions.beforeVerify`):
   * the daemon's collection when the heap grew (src/daemon/memory.ts).
   */
  readonly beforeVerify?: (() => void) | undefined;
}

export const DEFAULT_SETTLE_MS = 250;

/** What one reconciler keeps from cycle to cycle, so a cycle costs what changed. */
export interface EngineState {
  /**
   * The verdicts of up-to-date edges (`PlanMemo`). A full listing makes every record new, so a
   * full cycle starts a new memo: the old verdicts go before the listing comes.
   */
  memo: PlanMemo;
  /** The account as of the last converged cycle (undefined: the next cycle lists it). */
  kept: LiveSnapshot | undefined;
  /**
   * The manifest files as parsed last time: an unchanged file is not parsed again and yields the
   * same objects, which (with the kept snapshot's records) lets the planner skip the edges it
   * already found up to date.
   */
  readonly files: FileCache;
  /** The last cycle's sensitive values: the same array while they do not change. */
  secrets: readonly string[];
  /**
   * The manifests read and planned against `kept` ahead of a cycle, while the daemon waited out
   * a change's debounce (`anticipate`): taken by the next incremental cycle when nothing changed
   * since (same directory, revision, watcher generation and kept snapshot), dropped otherwise.
   */
  ahead: Ahead | undefined;
  /**
   * Each file (by the path it was read from) at the last read a cycle went on with: its stamp,
   * size and how many resources it declared. A file that lost some since is read again before
   * it is acted on (`unsettled`).
   */
  held: ReadonlyMap<string, Held>;
  /** Files that read smaller than `sizes` says, as first read that way: key and when. */
  readonly shrunk: Map<string, { readonly key: string; readonly at: number }>;
}

/** A file as a cycle went on with it (`EngineState.held`). */
export interface Held {
  readonly key: string;
  readonly size: number;
  readonly resources: number;
}

/** What `anticipate` read and planned, and what it read it from. */
export interface Ahead {
  readonly dir: string;
  readonly revision: string | undefined;
  readonly generation: number;
  readonly known: LiveSnapshot;
  readonly read: Guess;
}

export function newEngineState(): EngineState {
  return {
    memo: new PlanMemo(),
    kept: undefined,
    files: new FileCache(),
    secrets: [],
    ahead: undefined,
    held: new Map(),
    shrunk: new Map(),
  };
}

/** The planner's options for this reconciler, with the memo as it is now. */
export function planOptionsOf(options: ReconcilerOptions, state: EngineState): PlanOptions {
  return {
    owner: options.owner,
    allowEmpty: options.allowEmpty,
    maxDeletes: options.maxDeletes,
    memo: state.memo,
    waitForReady: options.waitForReady,
    // The daemon executes its plans; nobody reads a preview of them.
    policyPreview: false,
  };
}
