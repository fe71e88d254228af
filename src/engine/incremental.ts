/**
 * The incremental half of the daemon's reconcile step: a file event, or a git-sync
 * revision, against the account as of the last converged cycle. The manifests are read (no API
 * call; unchanged files come from the `FileCache`) and planned against that snapshot; only the
 * edges, bot users and endpoints that plan has operations for are read again by ID, and the plan is made
 * again from their current state before anything is written. At 10,000 managed edges one changed
 * module costs 3 calls (GET, PATCH, GET). A change whose plan touches more roots than
 * `INCREMENTAL_MAX_READS` (or than a listing would cost) is left to a full cycle.
 */

import { type ApiClient, type LiveSnapshot, NO_CALLS } from '../api/index.js';
import { pagesOf, touchedCount, touchedRoots, verifyTouched } from '../apply/verify.js';
import { ManifestError } from '../errors.js';
import { everyReplaced } from '../in-place.js';
import type { FileCache } from '../manifest/build.js';
import { type FileStamp, type LoadResult, loadManifests } from '../manifest/loader.js';
import type { OwnCredential } from '../manifest/own-credentials.js';
import type { DesiredSet } from '../manifest/schema.js';
import { buildPlan, type Plan } from '../plan/index.js';
import type { PlanOptions } from '../plan/plan.js';
import type { ReconcileInput } from './contract.js';
import { assertEdgesAvailable } from './edge-access.js';

/** Triggers that say only the manifests changed: a file saved, a git-sync revision. */
export const INCREMENTAL_REASONS: ReadonlySet<string> = new Set(['file', 'link']);

/** The most roots a file event reads by ID before a full listing is the better deal. */
export const INCREMENTAL_MAX_READS = 20;

/** A plan ready to check and apply, and what it was made from. */
export interface Prepared {
  readonly plan: Plan;
  readonly live: LiveSnapshot;
  readonly desired: DesiredSet;
  readonly mode: 'full' | 'incremental';
  /** What each manifest file looked like when read (`manifestsChangedSince`, `unsettled`). */
  readonly stamps: ReadonlyMap<string, FileStamp>;
  /** The stamps of the files read for this cycle, when not all of them were. */
  readonly read?: ReadonlyMap<string, FileStamp> | undefined;
}

/**
 * The reconciler's options this step reads (stated here, not picked from the reconciler's, so
 * the step never imports the reconciler that calls it), with its plan options and file cache.
 */
export interface IncrementalOptions {
  readonly client: ApiClient;
  readonly owner: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly secretDirs: readonly string[];
  readonly credentials?: readonly OwnCredential[] | undefined;
  readonly exclude?: readonly string[] | undefined;
  readonly concurrency: number;
  readonly plan: PlanOptions;
  readonly cache: FileCache;
}

/** The manifests as read, and the plan they make against a kept snapshot (no API call). */
export interface Guess {
  readonly loaded: LoadResult;
  /** Undefined when the manifests are invalid (`loaded.ok` false). */
  readonly guess: Plan | undefined;
}

/**
 * The manifests under `dir`, through the reconciler's file cache (unchanged files not parsed
 * again); `incremental`: only the files touched since the last read are read.
 */
export function readManifests(
  dir: string,
  options: Omit<IncrementalOptions, 'client' | 'concurrency' | 'plan'>,
  incremental = false,
): Promise<LoadResult> {
  return loadManifests(dir, {
    incremental,
    owner: options.owner,
    env: options.env,
    secretDirs: options.secretDirs,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
    cache: options.cache,
  });
}

/**
 * Read the manifests and plan them against the kept snapshot `known`: the part of an incremental
 * cycle that makes no API call, so the daemon can run it while it waits out a change's debounce
 * (`anticipate` in reconciler.ts). Throws what the loader throws for the directory.
 */
export async function guessPlan(
  dir: string,
  known: LiveSnapshot,
  options: IncrementalOptions,
): Promise<Guess> {
  return planGuess(await readManifests(dir, options, true), known, options);
}

/** The plan of manifests read incrementally (`readManifests`) against the kept snapshot `known`. */
export function planGuess(
  loaded: LoadResult,
  known: LiveSnapshot,
  options: Pick<IncrementalOptions, 'plan'>,
): Guess {
  if (!loaded.ok) return { loaded, guess: undefined };
  assertEdgesAvailable(loaded.set, known);
  return { loaded, guess: buildPlan(loaded.set, known, options.plan) };
}

/**
 * Read the manifests (or take them as read ahead, `ahead`), plan against the kept snapshot
 * `known`, read the roots that plan has operations for by ID, and plan again from their current
 * state. Undefined when a full cycle is the better deal.
 */
export async function prepareIncremental(
  { dir, signal, assertCurrent }: ReconcileInput,
  known: LiveSnapshot,
  options: IncrementalOptions,
  ahead?: Guess,
): Promise<Prepared | undefined> {
  const { client } = options;
  let read: Guess;
  try {
    read = ahead ?? (await guessPlan(dir, known, options));
  } catch (err) {
    // git-sync deletes the old worktree right after a swap: report the swap when the link moved.
    await assertCurrent();
    throw err;
  }
  const { loaded, guess } = read;
  if (!loaded.ok || guess === undefined) {
    await assertCurrent();
    throw new ManifestError(loaded.diagnostics);
  }
  const desired = loaded.set;
  // Creates have no ID yet: nothing live to read for them.
  const touched = touchedRoots(guess, { created: {} });
  const reads = touchedCount(touched);
  if (reads > Math.min(INCREMENTAL_MAX_READS, listCost(known))) return undefined;
  if (reads === 0) {
    return {
      plan: guess,
      live: known,
      desired,
      mode: 'incremental',
      stamps: loaded.stamps,
      read: loaded.read,
    };
  }
  // Read with an empty plan's verification: the same GET-by-ID overlay, before writing.
  const live = await verifyTouched(
    client,
    guess,
    known,
    { created: {} },
    { signal, concurrency: options.concurrency },
  );
  // Usually nobody touched those roots since: the plan made on the kept snapshot stands.
  const unchanged =
    sameRecords(known.tlsEdges, live.tlsEdges) &&
    sameRecords(known.httpsEdges, live.httpsEdges) &&
    sameRecords(known.botUsers, live.botUsers) &&
    sameRecords(known.cloudEndpoints, live.cloudEndpoints);
  return {
    plan: unchanged ? guess : buildPlan(desired, live, options.plan),
    live: { ...live, calls: NO_CALLS },
    desired,
    mode: 'incremental',
    stamps: loaded.stamps,
    read: loaded.read,
  };
}

/**
 * The same records in the same order: untouched ones are the same objects, read ones compared
 * as JSON (zod outputs keys in schema order, so equal records serialise alike).
 */
function sameRecords<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  // Only the places the read-back put records in, when it says (`everyReplaced`).
  return everyReplaced(a, b, (i) => a[i] === b[i] || JSON.stringify(a[i]) === JSON.stringify(b[i]));
}

/** List calls a full observation of the account in `live` takes (a full last page ends a list). */
export function listCost(live: LiveSnapshot): number {
  return (
    pagesOf(live.tlsEdges.length) +
    pagesOf(live.httpsEdges.length) +
    pagesOf(live.botUsers.length) +
    pagesOf(live.cloudEndpoints.length)
  );
}
