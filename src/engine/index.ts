/**
 * The reconcile engine's public surface: the run that `plan`, `apply` and the daemon's reconcile
 * step call (run.ts), its pipeline, `release` and `import` (the commands reach the applier only
 * through here), and the reconciler the daemon runs every cycle (its contract: contract.ts).
 */
export { DEFAULT_CONCURRENCY } from '../apply/executor.js';
export { type ImportResult, importLive } from '../apply/import.js';
// What the commands show of an apply: the applier's pure renderers of its progress and result.
export {
  type Budget,
  formatDuration,
  progressLine,
  progressSteps,
  summarize,
} from '../apply/progress.js';
export {
  parseReleaseTarget,
  RELEASE_MANIFEST_KINDS,
  RELEASE_PLAN_KINDS,
  type ReleaseTarget,
} from '../apply/release.js';
export {
  type ApplyResultJson,
  appliedResult,
  notAppliedResult,
  renderApplyResult,
} from '../apply/report.js';
export * from './contract.js';
/** @internal tests size their edits from it */
export { INCREMENTAL_MAX_READS } from './incremental.js';
export { checkMaxDeletes, checkOwner, OWNER_PATTERN } from './pipeline.js';
export { createReconciler } from './reconciler.js';
export { runRelease } from './release.js';
export { type Assessment, pipeline, type RunEnding, run } from './run.js';
