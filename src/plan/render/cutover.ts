/**
 * The cut-over section the text and Markdown renderers share: each edge handed over to cloud
 * endpoints, in the order the apply runs them (the edge's delete, then the creates that take
 * its hosts and ports). Pure; the plan is masked before it gets here.
 */
import { escapeControl } from '../../escape.js';
import type { Cutover } from '../model.js';

export const CUTOVER_TITLE = 'Cut-over to cloud endpoints (one edge at a time, in this order)';

/** One step of a cut-over as plain text: `-` the edge's delete, `+` an endpoint's create. */
export interface CutoverLine {
  readonly symbol: '-' | '+';
  readonly text: string;
}

/** The lines of one cut-over, escaped for a terminal. */
export function cutoverLines(c: Cutover): CutoverLine[] {
  return [
    { symbol: '-', text: escapeControl(`delete ${c.edge} (${c.id})`) },
    ...c.endpoints.map(
      (e): CutoverLine => ({
        symbol: '+',
        text: escapeControl(`then create ${e.address} ${e.url} (takes over ${e.hostport})`),
      }),
    ),
  ];
}
