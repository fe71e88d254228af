/**
 * Preparing a cycle: its plan and what the plan was made from, by one of two strategies behind
 * one interface. `fullPreparation` loads the manifests and lists the whole account concurrently
 * (the pipeline of `plan` and `apply`); `incrementalPreparation` plans a manifest change against
 * the account as of the last converged cycle and reads by ID only what that plan touches, handing
 * over to the full one when a listing is the better deal. `choosePreparation` picks one per cycle.
 */
import type { LiveSnapshot } from '../api/index.js';
import { errorMessage } from '../errors.js';
import type { LoadResult } from '../manifest/loader.js';
import { PlanMemo } from '../plan/index.js';
import { type EngineState, planOptionsOf, type ReconcilerOptions } from './context.js';
import type { AnticipateInput, ReconcileInput } from './contract.js';
import {
  type Guess,
  INCREMENTAL_REASONS,
  type Prepared,
  planGuess,
  prepareIncremental,
  readManifests,
} from './incremental.js';
import { type PreparedPlan, preparePlan } from './pipeline.js';
import { forgetLastCycle } from './report.js';
import { declaresFewer } from './steps.js';

export interface Preparation {
  /** Which strategy this is (an incremental one may still hand over to a full one). */
  readonly kind: 'full' | 'incremental';
  prepare(input: ReconcileInput): Promise<Prepared>;
}

/** The whole pipeline: load and list concurrently, plan. */
export function fullPreparation(options: ReconcilerOptions, state: EngineState): Preparation {
  return {
    kind: 'full',
    async prepare({ dir, signal, assertCurrent }) {
      let prepared: PreparedPlan;
      // Every record of a listing is new: nothing in the old memo would be reused, nor a plan
      // read ahead against the old snapshot, nor what the report kept of the last cycle.
      state.memo = new PlanMemo();
      forgetLastCycle(state.secrets);
      state.ahead = undefined;
      // Nor the kept snapshot: the listing replaces it, and holding both through the listing
      // is the daemon's peak memory. A full cycle that ends without converging leaves nothing
      // kept, so the next change lists the account again (a listing, not a wrong plan).
      state.kept = undefined;
      try {
        prepared = await preparePlan({
          dir,
          client: options.client,
          ...planOptionsOf(options, state),
          env: options.env,
          secretDirs: options.secretDirs,
          credentials: options.credentials,
          exclude: options.exclude,
          cache: state.files,
          signal,
          // Fingerprints guard saved plans (`plan --out`); a cycle applies its own plan at once.
          fingerprint: false,
        });
      } catch (err) {
        // git-sync deletes the old worktree right after a swap: files vanishing under the loader
        // are the swap, not broken manifests. Report the swap (a superseded cycle: no failure, no
        // bogus diagnostics) when the link moved; the real error otherwise.
        await assertCurrent();
        throw err;
      }
      return {
        plan: prepared.plan,
        live: prepared.snapshot,
        desired: prepared.desired,
        mode: 'full',
        stamps: prepared.manifests.stamps,
      };
    },
  };
}

/** A manifest change against the kept snapshot `known`; `full` when it touches too much. */
export function incrementalPreparation(
  options: ReconcilerOptions,
  state: EngineState,
  known: LiveSnapshot,
  full: Preparation,
): Preparation {
  return {
    kind: 'incremental',
    async prepare(input) {
      const prepared = await prepareIncremental(
        input,
        known,
        incrementalOptionsOf(options, state),
        takeAhead(state, input, known),
      );
      if (prepared !== undefined) return prepared;
      options.logger.debug('the change touches many resources: full cycle');
      return full.prepare(input);
    },
  };
}

function incrementalOptionsOf(options: ReconcilerOptions, state: EngineState) {
  return { ...options, plan: planOptionsOf(options, state), cache: state.files };
}

/**
 * What `anticipate` read and planned for this cycle: only when nothing changed since (the same
 * directory, revision and watcher generation, planned against the same kept snapshot). Taken
 * once either way.
 */
function takeAhead(
  state: EngineState,
  input: ReconcileInput,
  known: LiveSnapshot,
): Guess | undefined {
  const ahead = state.ahead;
  state.ahead = undefined;
  if (
    ahead === undefined ||
    ahead.generation !== input.generation ||
    ahead.dir !== input.dir ||
    ahead.revision !== input.revision ||
    ahead.known !== known
  ) {
    return undefined;
  }
  return ahead.read;
}

/**
 * `AnticipateFn`: while the daemon waits out a change's debounce, read the manifests and plan
 * them against the kept snapshot (`state.ahead`), with no API call. When the next cycle will be
 * a full one (nothing kept), the read only fills the file cache, so that cycle parses no file
 * again; so does a read in which a file lost resources (half a save). A failure keeps nothing:
 * the cycle reads again and reports it.
 */
export async function anticipate(
  input: AnticipateInput,
  options: ReconcilerOptions,
  state: EngineState,
): Promise<void> {
  state.ahead = undefined;
  const known = state.kept;
  const incremental = incrementalOptionsOf(options, state);
  try {
    if (options.incremental === false || known === undefined) {
      await readManifests(input.dir, incremental);
      return;
    }
    const loaded = await readManifests(input.dir, incremental, true);
    // A file that lost resources is most likely half a save (an editor truncates, then writes):
    // the cycle does not act on such a read (`unsettled`), and no plan of the last one fits a
    // set that lost resources, so planning it would plan the whole set (at 50,000 resources,
    // several times an edit's CPU, and a heap of garbage). Left to the cycle, which reads again.
    if (lostResources(loaded, state)) return;
    state.ahead = { ...input, known, read: planGuess(loaded, known, incremental) };
  } catch (err) {
    options.logger.debug({ err: errorMessage(err) }, 'reading ahead failed; the cycle reads again');
  }
}

/** Whether a file `loaded` read now declares fewer resources than a cycle last went on with. */
function lostResources(loaded: LoadResult, state: EngineState): boolean {
  for (const [path, stamp] of loaded.read ?? loaded.stamps) {
    if (declaresFewer(state, path, state.files.declaredIn(stamp.file))) return true;
  }
  return false;
}

/**
 * Incremental for a manifest change (a file saved, a git-sync revision) when the account as of
 * the last converged cycle is kept; full for every other trigger, the first cycle, and any cycle
 * after one that did not converge.
 */
export function choosePreparation(
  input: ReconcileInput,
  options: ReconcilerOptions,
  state: EngineState,
): Preparation {
  const full = fullPreparation(options, state);
  const known = state.kept;
  if (
    options.incremental === false ||
    !INCREMENTAL_REASONS.has(input.reason) ||
    known === undefined
  ) {
    return full;
  }
  return incrementalPreparation(options, state, known, full);
}
