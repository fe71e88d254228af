/**
 * The JSON renderer (`--output json`): the masked plan, versioned by its `format_version`, with
 * two-space indentation and a final newline. Pure.
 */
import type { MaskedPlan } from '../mask.js';

/** Renders a plan masked by `maskPlan` (the only kind it accepts). */
export function renderJson(masked: MaskedPlan): string {
  return `${JSON.stringify(masked, null, 2)}\n`;
}
