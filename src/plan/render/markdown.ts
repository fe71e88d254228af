/**
 * The Markdown renderer (`--output markdown`), for pull-request comments: the summary line, a
 * table of the resources that change, one collapsible `<details>` per resource holding a
 * `diff` code block, and the blocked resources. Every piece of outside text is escaped for the
 * place it lands in (backslashes where Markdown would read a character, code spans for
 * addresses, HTML entities inside the `<summary>` HTML, a fence longer than any backtick run in
 * code blocks), so no manifest value can break the comment's layout, and no more than that, so
 * the raw text reads as cleanly as the rendered comment. Pure.
 */
import { escapeControl } from '../../escape.js';
import type { MaskedPlan } from '../mask.js';
import {
  fieldLines,
  NO_CHANGES,
  READINESS_TITLE,
  readinessLines,
  SYMBOL,
  summaryLine,
  VERB,
  visibleChanges,
} from './common.js';
import { CUTOVER_TITLE, cutoverLines } from './cutover.js';
import { impactMarkdown } from './impact.js';

/**
 * Text in a Markdown paragraph or table cell, escaped with backslashes where a character would
 * otherwise be read as Markdown or HTML, and only there, so the raw comment reads as it renders:
 * `circuit_breaker` stays as it is (an underscore inside a word starts no emphasis), while
 * `*`, a word-edge `_`, `` ` ``, `[`, `]`, `<`, `>`, `|`, `~` and `\` are escaped, and `&` only where
 * it would start a character reference. Newlines become spaces (a cell is one line).
 */
export function escapeInline(text: string): string {
  return escapeControl(text.replace(/\r\n|\r|\n/g, ' '))
    .replace(/[\\`*[\]<>|~]/g, (c) => `\\${c}`)
    .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_')
    .replace(/&(?=#?[A-Za-z0-9]+;)/g, '&amp;');
}

/** Text inside an HTML block (a `<summary>`): Markdown is not read there, only HTML is. */
function escapeHtml(text: string): string {
  return escapeControl(text.replace(/\r\n|\r|\n/g, ' ')).replace(
    /[&<>]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] ?? c,
  );
}

/** A code span: nothing in it is read as Markdown; `|` escaped so a table cell holds it. */
function code(text: string): string {
  const content = escapeControl(text.replace(/\r\n|\r|\n/g, ' ')).replaceAll('|', '\\|');
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = content.startsWith('`') || content.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${content}${pad}${fence}`;
}

/** A code element inside an HTML block. */
function htmlCode(text: string): string {
  return `<code>${escapeHtml(text)}</code>`;
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
  const readiness = masked.readiness ?? [];
  if (readiness.length > 0) {
    out.push(`**${READINESS_TITLE}**`, '');
    for (const r of readiness) {
      const [head, ...records] = readinessLines(r);
      out.push(`- ${escapeInline(head ?? '')}`);
      for (const l of records) out.push(`  - ${escapeInline(l)}`);
    }
    out.push('');
  }
  if (changes.length === 0 && masked.blocked.length === 0) {
    out.push(NO_CHANGES, '');
    return `${out.join('\n')}\n`.replace(/\n+$/, '\n');
  }
  out.push(`**${summaryLine(masked)}**`, '');
  if (changes.length > 0) {
    out.push('| | Resource | Action | Reason |', '|---|---|---|---|');
    for (const c of changes) {
      out.push(
        `| ${code(SYMBOL[c.action])} | ${code(c.address)} | ${c.action} | ${escapeInline(c.reason)} |`,
      );
    }
    out.push('');
    for (const c of changes) {
      const id = c.id === undefined ? '' : ` (${htmlCode(c.id)})`;
      out.push(
        `<details><summary>${escapeHtml(SYMBOL[c.action])} ${htmlCode(c.address)}${id} ${VERB[c.action]}</summary>`,
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
