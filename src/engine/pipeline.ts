/**
 * The load -> observe -> plan pipeline shared by `plan`, `apply` and the daemon (one code path):
 * load and validate the manifest directory and list the live account concurrently, build the
 * plan, and fingerprint what it saw (fingerprint.ts). This is the I/O glue around the pure
 * planner: it owns the rule that a manifest error or a listing error means no plan at all (so
 * nothing can be deleted from a partial view).
 */

import { type LiveSnapshot, type ObserveClient, observe } from '../api/observe.js';
import { EdgesyncError, ManifestError, UsageError } from '../errors.js';
import type { FileCache } from '../manifest/build.js';
import { type LoadResult, loadManifests } from '../manifest/loader.js';
import { DEFAULT_OWNER } from '../manifest/metadata.js';
import type { OwnCredential } from '../manifest/own-credentials.js';
import type { DesiredSet } from '../manifest/schema.js';
import { didYouMean } from '../manifest/suggest.js';
import type { Plan } from '../plan/model.js';
import { buildPlan, DEFAULT_MAX_DELETES, type PlanMemo } from '../plan/plan.js';
import { targetedAddresses, unknownTargets } from '../plan/targets.js';
import { assertEdgesAvailable } from './edge-access.js';
import { fingerprintHmacKey, fingerprintLive, fingerprintManifests } from './fingerprint.js';

export interface PreparePlanOptions {
  /** The manifest directory (absolute, or relative to the process cwd). */
  readonly dir: string;
  readonly client: ObserveClient;
  readonly owner?: string | undefined;
  readonly allowEmpty?: boolean | undefined;
  /** Hold back what needs a resource that is not ready (`PlanOptions.waitForReady`). */
  readonly waitForReady?: boolean | undefined;
  readonly maxDeletes?: number | undefined;
  /** Environment for `{ env }` references. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Extra directories `{ file }` references may read (mounted secrets). */
  readonly secretDirs?: readonly string[] | undefined;
  /** The controller's credentials beyond `env`'s, which no reference may read. */
  readonly credentials?: readonly OwnCredential[] | undefined;
  /** Globs (relative to `dir`) of files and directories not to read (`--exclude`). */
  readonly exclude?: readonly string[] | undefined;
  /** The daemon's parsed files, kept between cycles (`FileCache`). */
  readonly cache?: FileCache | undefined;
  /** The daemon's planner memo (`PlanMemo`). */
  readonly memo?: PlanMemo | undefined;
  /** Evaluate each changed endpoint policy's impact (`PlanOptions.policyPreview`; default on). */
  readonly policyPreview?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
  /**
   * Compute the fingerprints (default: when `fingerprintKey` is given). `plan` skips them for text and Markdown output
   * without `--out`: hashing a 10,000-edge snapshot costs a tenth of a second or more.
   */
  readonly fingerprint?: boolean | undefined;
  /**
   * The API key the fingerprints are keyed with (required unless `fingerprint` is false): a
   * published plan must not let anyone test guesses of a secret offline, and `plan` and `apply`
   * both hold the key.
   */
  readonly fingerprintKey?: string | undefined;
  /**
   * `--target`: plan these resources only (`PlanOptions.targets`). A target that names no
   * resource of the manifests or of the plan is a UsageError: a typo must not plan nothing.
   */
  readonly targets?: ReadonlySet<string> | undefined;
}

export interface Fingerprint {
  readonly live: string;
  readonly manifests: string;
}

export interface PreparedPlan {
  /** In memory, with real secret values (mask before showing); carries `fingerprint` if made. */
  readonly plan: Plan;
  readonly desired: DesiredSet;
  readonly snapshot: LiveSnapshot;
  /** Undefined when the caller passed `fingerprint: false` or no `fingerprintKey`. */
  readonly fingerprint: Fingerprint | undefined;
  /** What was read: resolved directory, git-sync revision, files, counts. */
  readonly manifests: Omit<Extract<LoadResult, { ok: true }>, 'ok' | 'set' | 'diagnostics'>;
}

/** Owner ids: like manifest names, so they are safe in metadata, messages and file names. */
export const OWNER_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

export function checkOwner(owner: string | undefined): string {
  const value = owner ?? DEFAULT_OWNER;
  if (!OWNER_PATTERN.test(value)) {
    throw new UsageError(
      `invalid owner id "${value}": 1-63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit`,
    );
  }
  return value;
}

export function checkMaxDeletes(value: number | undefined): number {
  const n = value ?? DEFAULT_MAX_DELETES;
  if (!Number.isInteger(n) || n < 0) {
    throw new UsageError(`--max-deletes must be a whole number >= 0, got ${String(value)}`);
  }
  return n;
}

/**
 * Loads the manifests and observes the live account (concurrently), then plans. Throws
 * ManifestError (every diagnostic) or ManifestDirError when the desired state is invalid or
 * unknown, and the client's error when a listing fails: in every such case there is no plan.
 */
export async function preparePlan(options: PreparePlanOptions): Promise<PreparedPlan> {
  const owner = checkOwner(options.owner);
  const maxDeletes = checkMaxDeletes(options.maxDeletes);
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) controller.abort(options.signal.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // The first failure stops the other half: no point listing 10,000 edges for invalid manifests.
  const stopOnFailure = (err: unknown): never => {
    controller.abort(err);
    throw err;
  };
  try {
    const loading = loadManifests(options.dir, {
      owner,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.secretDirs === undefined ? {} : { secretDirs: options.secretDirs }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
      ...(options.cache === undefined ? {} : { cache: options.cache }),
    }).then((result) => {
      if (!result.ok) throw new ManifestError(result.diagnostics);
      return result;
    });
    const observing = observe(options.client, { signal: controller.signal });
    const [loaded, observed] = await Promise.allSettled([
      loading.catch(stopOnFailure),
      observing.catch(stopOnFailure),
    ]);
    // Manifest problems come first: they are what the user must fix.
    if (loaded.status === 'rejected') throw loaded.reason;
    if (observed.status === 'rejected') throw observed.reason;
    const { ok: _ok, set: desired, diagnostics: _none, ...manifests } = loaded.value;
    const snapshot = observed.value;
    assertEdgesAvailable(desired, snapshot);
    let fingerprint: Fingerprint | undefined;
    if (options.fingerprint === true && options.fingerprintKey === undefined) {
      throw new EdgesyncError('ES_INTERNAL', 'fingerprints need the API key to key them');
    }
    if (options.fingerprint !== false && options.fingerprintKey !== undefined) {
      const key = fingerprintHmacKey(options.fingerprintKey);
      fingerprint = {
        live: fingerprintLive(key, snapshot),
        manifests: fingerprintManifests(key, owner, desired),
      };
    }
    const built = buildPlan(desired, snapshot, {
      owner,
      allowEmpty: options.allowEmpty,
      maxDeletes,
      memo: options.memo,
      waitForReady: options.waitForReady,
      targets: options.targets,
      policyPreview: options.policyPreview,
    });
    if (options.targets !== undefined) checkTargets(options.targets, desired, built);
    const plan: Plan = fingerprint === undefined ? built : { ...built, fingerprint };
    return { plan, desired, snapshot, fingerprint, manifests };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Every target names a resource of the manifests or of the plan (an orphan to delete). */
function checkTargets(targets: ReadonlySet<string>, desired: DesiredSet, plan: Plan): void {
  const known = targetedAddresses(desired, plan);
  const unknown = unknownTargets(targets, known);
  if (unknown.length === 0) return;
  const first = unknown[0] as string;
  throw new UsageError(
    `--target ${first} names no resource of the manifests or of owner "${plan.owner}" in the account${didYouMean(first, [...known])}`,
  );
}
