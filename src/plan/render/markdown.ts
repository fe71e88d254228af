/**
 * The Markdown renderer (`--output markdown`), for pull-request comments: the summary line, a
 * table of the resources that change, one collapsible `<details>` per resource holding a
 * `diff` code block, and the blocked resources. Every piece of outside text is escaped for the
 * place it lands in (HTML entities in summaries and table cells, a fence longer than any
 * backtick run in code blocks), so no manifest value can break the comment's layout. Pure.
 */
import { escapeControl } from '../../escape.js';
import type { MaskedPlan } from '../../manifest/secrets.js';
import { fieldLines, NO_CHANGES, SYMBOL, summaryLine, VERB, visibleChanges } from './common.js';
import { CUTOVER_TITLE, cutoverLines } from './cutover.js';
import { impactMarkdown } from './impact.js';

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '|': '&#124;',
  '`': '&#96;',
  '*': '&#42;',
  _: '&#95;',
  '[': '&#91;',
  ']': '&#93;',
  '~': '&#126;',
  '\\': '&#92;',
  '#': '&#35;',
};

/** Text safe inside HTML and inside a table cell: entities for markup, spaces for newlines. */
export function escapeInline(text: string): string {
  return escapeControl(text.replace(/\r\n|\r|\n/g, ' ')).replace(
    /[&<>"'|`*_[\]~\\#]/g,
    (c) => ENTITIES[c] ?? c,
  );
}

function code(text: string): string {
  return `<code>${escapeInline(text)}</code>`;
}

/** A fenced block whose fence no line of the content can close. */
function fenced(lang: string, content: string): string {
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${content}\n${fence}`;
}

/** Renders a plan masked by `maskPlan` (the only kind it accepts). */
export function renderMarkdown(masked: MaskedPlan): string {
  const changes = visibleChanges(masked);
  const out: string[] = [`#### edgesync plan (owner ${code(masked.owner)})`, ''];
  for (const w of masked.warnings) out.push(`> **Warning:** ${escapeInline(w)}`, '');
  if (changes.length === 0 && masked.blocked.length === 0) {
    out.push(NO_CHANGES, '');
    return `${out.join('\n')}\n`.replace(/\n+$/, '\n');
  }
  out.push(`**${summaryLine(masked)}**`, '');
  if (changes.length > 0) {
    out.push('| | Resource | Action | Reason |', '|---|---|---|---|');
    for (const c of changes) {
      out.push(
        `| ${escapeInline(SYMBOL[c.action])} | ${code(c.address)} | ${c.action} | ${escapeInline(c.reason)} |`,
      );
    }
    out.push('');
    for (const c of changes) {
      const id = c.id === undefined ? '' : ` (${code(c.id)})`;
      out.push(
        `<details><summary>${escapeInline(SYMBOL[c.action])} ${code(c.address)}${id} ${VERB[c.action]}</summary>`,
        '',
      );
      const lines = [`# ${escapeControl(c.reason)}`];
      for (const f of c.fields)
        for (const l of fieldLines(f, true)) lines.push(`${l.symbol} ${l.text}`);
      out.push(fenced('diff', lines.join('\n')), '', '</details>', '');
    }
  }
  const cutovers = masked.cutovers ?? [];
  if (cutovers.length > 0) {
    out.push(`**${CUTOVER_TITLE}**`, '');
    cutovers.forEach((c, i) => {
      const steps = cutoverLines(c).map((l) => `${l.symbol} ${l.text}`);
      out.push(`${i + 1}. ${escapeInline(steps.join('; '))}`);
    });
    out.push('');
  }
  out.push(...impactMarkdown(masked, escapeInline));
  if (masked.blocked.length > 0) {
    out.push('**Blocked (not attempted)**', '', '| Resource | Kind | Reason |', '|---|---|---|');
    for (const b of masked.blocked) {
      out.push(`| ${code(b.address)} | ${b.kind} | ${escapeInline(b.reason)} |`);
    }
    out.push('');
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
