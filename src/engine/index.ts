/**
 * The reconcile engine's public surface: the pipeline `plan` and `apply` run once, and the
 * reconciler the daemon runs every cycle (its contract: contract.ts).
 */
export * from './contract.js';
/** @internal tests size their edits from it */
export { INCREMENTAL_MAX_READS } from './incremental.js';
export {
  checkMaxDeletes,
  checkOwner,
  OWNER_PATTERN,
  type PreparedPlan,
  preparePlan,
} from './pipeline.js';
export { createReconciler } from './reconciler.js';
