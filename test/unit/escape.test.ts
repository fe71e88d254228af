/** Output hygiene: control characters from outside text are shown escaped in every text output. */
import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/apply/progress.js';
import { escapeControl, escapeControlKeepNewlines, hasControl } from '../../src/escape.js';
import { escapeForPretty } from '../../src/log.js';
import { formatDiagnostic } from '../../src/manifest/diagnostics.js';
import { maskPlan } from '../../src/plan/mask.js';
import type { Plan } from '../../src/plan/model.js';
import { renderMarkdown } from '../../src/plan/render/markdown.js';
import { renderText } from '../../src/plan/render/text.js';

const HOSTILE = [
  ['ESC[2J (clear screen)', '\x1b[2J'],
  ['CR', 'a\rb'],
  ['LF', 'a\nb'],
  ['BEL', '\x07'],
  ['NUL', '\x00'],
  ['DEL', '\x7f'],
  ['C1 CSI', '\x9b2J'],
  ['bidi override', 'abc\u202edef'],
  ['zero-width space', 'a\u200bb'],
  ['line separator', 'a\u2028b'],
] as const;

/** Whether a line holds anything `escapeControl` would escape (tabs and newlines checked apart). */
const unsafe = (s: string) => hasControl(s.replaceAll('\t', '').replaceAll('\n', ''));

/** The renderer's own colour codes (which are not outside text). */
const stripColour = (s: string) =>
  s.replaceAll(`${String.fromCharCode(27)}[`, '\u00a7').replace(/\u00a7[0-9;]*m/g, '');

describe('escapeControl', () => {
  it.each(HOSTILE)('escapes %s', (_name, text) => {
    const out = escapeControl(`x${text}y`);
    expect(unsafe(out)).toBe(false);
    expect(out).not.toContain('\n');
    expect(out.startsWith('x') && out.endsWith('y')).toBe(true);
  });

  it('shows what was there', () => {
    expect(escapeControl('a\x1b[2Jb\r\n\t\x00\x7f\x9b\u202e')).toBe(
      'a\\x1b[2Jb\\r\\n\\t\\x00\\x7f\\x9b\\u{202e}',
    );
    expect(escapeControl('plain: é ü 日本 ✓')).toBe('plain: é ü 日本 ✓');
    expect(escapeControlKeepNewlines('a\nb\x1bc')).toBe('a\nb\\x1bc');
  });
});

describe('every text output', () => {
  it('a file name cannot forge a diagnostic line or clear the terminal', () => {
    const line = formatDiagnostic({
      file: 'evil\n/etc/x.yaml:1:1: all good\x1b[2J.yaml',
      line: 3,
      column: 1,
      path: 'routes[0]',
      message: 'unknown field "a\rb"',
      severity: 'error',
    });
    expect(line.split('\n')).toHaveLength(1);
    expect(unsafe(line)).toBe(false);
    expect(line).toBe(
      'evil\\n/etc/x.yaml:1:1: all good\\x1b[2J.yaml:3:1: routes[0]: unknown field "a\\rb"',
    );
  });

  const plan: Plan = {
    format_version: 2,
    owner: 'own\x1b]0;title\x07er',
    summary: { create: 0, update: 1, delete: 0, adopt: 0, noop: 0 },
    changes: [
      {
        kind: 'https_edge',
        address: 'https_edge.web.route["/a\x1b[2J\u202e"]',
        action: 'update',
        reason: 'not in the manifest\r\nforged: line',
        id: 'edghts_1',
        fields: [
          { path: 'description', before: 'x\x9b31m\u202eevil', after: 'clean\x7f' },
          { path: 'metadata.k\x1b', after: 'v\u2028w' },
        ],
        operations: [],
      },
    ],
    blocked: [{ address: 'tls_edge.a\x1bb', kind: 'conflict', reason: 'held by\nedgtls_x' }],
    warnings: ['2 bot users named "x\x1b[2J\r"'],
  } as unknown as Plan;

  it.each([
    ['text', () => renderText(maskPlan(plan, []))],
    ['coloured text', () => stripColour(renderText(maskPlan(plan, []), { color: true }))],
    ['markdown', () => renderMarkdown(maskPlan(plan, []))],
  ])('%s plan', (_name, render) => {
    const out = render();
    for (const line of out.split('\n')) expect(unsafe(line)).toBe(false);
    expect(out).not.toContain('\nforged: line');
    expect(out).toContain('\\x1b');
  });

  it('the apply summary', () => {
    const out = summarize({
      result: {
        total: 1,
        done: 0,
        writes: 0,
        failed: 1,
        skipped: 0,
        errors: [{ message: 'refused: "\x1b[2J"' }],
        messages: ['note\x07'],
      },
      kept: [{ address: 'x\x1b', reason: 'r\n' }],
      conflicts: [],
      converged: false,
      residual: { changes: [{ action: 'update', address: 'a\u202e', reason: 'b\r' }], blocked: [] },
    } as never);
    for (const line of out.split('\n')) expect(unsafe(line)).toBe(false);
  });

  it('pretty logs: every string pino-pretty parses back is free of control characters', () => {
    const value = {
      msg: 'a\x1b[2J\nb',
      description: 'x\u202e\x7f\x9by',
      path: 'C:\\new',
      quote: 'say "hi"',
    };
    const line = `${JSON.stringify(value)}\n`;
    const escaped = escapeForPretty(line);
    expect(escaped.endsWith('\n')).toBe(true);
    const parsed = JSON.parse(escaped) as Record<string, string>;
    for (const v of Object.values(parsed)) expect(unsafe(v)).toBe(false);
    expect(parsed.msg).toBe('a\\u001b[2J\\nb');
    expect(parsed.description).toBe('x\\u{202e}\\u{7f}\\u{9b}y');
    // Backslashes and quotes that are text stay text.
    expect(parsed.path).toBe('C:\\new');
    expect(parsed.quote).toBe('say "hi"');
  });
});
