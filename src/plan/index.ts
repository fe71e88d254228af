/**
 * The planner's public surface: build a plan, mask it, render it. Everything here is pure; the
 * I/O around it (load, observe, fingerprints) is `src/cli/pipeline.ts`.
 */
export { diffModule, fieldChanges, type ModuleDiff, Sensitivity } from './diff.js';
export { maskOperation, maskPlan, parsePath } from './mask.js';
export * from './model.js';
export { canonicalModule, liveModuleToWrite } from './normalize.js';
export {
  buildPlan,
  DEFAULT_MAX_DELETES,
  type LiveState,
  operationCount,
  type PlanOptions,
  planHasChanges,
  routeAddress,
} from './plan.js';
export { renderJson } from './render/json.js';
export { renderMarkdown } from './render/markdown.js';
export { renderText, type TextOptions } from './render/text.js';
