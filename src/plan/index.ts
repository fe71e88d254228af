/**
 * The planner's public surface: build a plan, mask it, render it. Everything here is pure; the
 * I/O around it (load, observe, fingerprints) is `src/engine/pipeline.ts`.
 */

export { writerStamps } from './generic.js';
export { type MaskedPlan, maskPlan } from './mask.js';
export * from './model.js';
export {
  buildPlan,
  DEFAULT_MAX_DELETES,
  operationCount,
  PlanMemo,
} from './plan.js';
export { renderText } from './render/text.js';
