/**
 * The JSON renderer (`--output json`): the masked plan, versioned by its `format_version`, with
 * two-space indentation and a final newline. Pure.
 */
import { maskPlan } from '../mask.js';
import type { Plan } from '../model.js';

export function renderJson(plan: Plan): string {
  return `${JSON.stringify(maskPlan(plan), null, 2)}\n`;
}
