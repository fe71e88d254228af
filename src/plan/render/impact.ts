/**
 * The plan's impact preview as text and as Markdown, in a section of its own after the
 * resources: per endpoint, the requests whose outcome the policy change alters, "before ->
 * after", those now getting through without a protection marked first. Pure.
 */
import { escapeControl } from '../../escape.js';
import type { MaskedPlan } from '../mask.js';

export const IMPACT_TITLE = 'Policy impact (requests whose outcome changes)';

type Entry = NonNullable<MaskedPlan['policy_impact']>[number];

function headline(e: Entry): string {
  const n = e.changes.length + e.omitted;
  const weakened = e.changes.filter((c) => c.weakened !== undefined).length;
  const flagged = weakened === 0 ? '' : `, ${weakened} now getting through without a protection`;
  return `${e.address}: ${n} of ${e.requests} request${e.requests === 1 ? '' : 's'} change${flagged}`;
}

/** Text lines: a headline per endpoint, one line per request (`!` weakened, `~` changed). */
export function impactTextLines(masked: MaskedPlan): { symbol: '!' | '~' | ' '; text: string }[] {
  const out: { symbol: '!' | '~' | ' '; text: string }[] = [];
  for (const e of masked.policy_impact ?? []) {
    out.push({ symbol: ' ', text: escapeControl(headline(e)) });
    for (const c of e.changes) {
      const flag = c.weakened === undefined ? '' : ` [reachable ${c.weakened}]`;
      out.push({
        symbol: c.weakened === undefined ? '~' : '!',
        text: escapeControl(`${c.request}: ${c.before} -> ${c.after}${flag}`),
      });
    }
    if (e.omitted > 0) out.push({ symbol: ' ', text: `  ... and ${e.omitted} more` });
  }
  return out;
}

/** Markdown: a collapsible table per endpoint (`escapeText` makes text safe in a cell). */
export function impactMarkdown(masked: MaskedPlan, escapeText: (text: string) => string): string[] {
  const entries = masked.policy_impact ?? [];
  if (entries.length === 0) return [];
  const out = [`**${IMPACT_TITLE}**`, ''];
  for (const e of entries) {
    out.push(`<details open><summary>${escapeText(headline(e))}</summary>`, '');
    out.push('| | Request | Before | After |', '|---|---|---|---|');
    for (const c of e.changes) {
      const flag = c.weakened === undefined ? '' : ` **(reachable ${escapeText(c.weakened)})**`;
      out.push(
        `| ${c.weakened === undefined ? '~' : '⚠️'} | ${escapeText(c.request)} | ${escapeText(c.before)} | ${escapeText(c.after)}${flag} |`,
      );
    }
    if (e.omitted > 0) out.push('', `... and ${e.omitted} more`);
    out.push('', '</details>', '');
  }
  return out;
}
