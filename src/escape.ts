/**
 * Output hygiene: text from manifests, file names and the live API may hold control characters
 * and terminal escape sequences. Every text output (diagnostics, text and Markdown plans, apply
 * progress and summaries, import messages, pretty logs, error lines) shows them escaped, so a
 * file name cannot forge a diagnostic line, clear the terminal or reorder what is shown. JSON
 * output is left to JSON's own escaping. Pure.
 *
 * Escaped: C0 controls (ESC, CR, LF, BEL, NUL, ...), DEL, C1 controls (U+0080..U+009F, which
 * some terminals read as CSI), the bidirectional and zero-width formatting characters that can
 * make a line read differently from its bytes (U+200B..U+200F, U+202A..U+202E, U+2066..U+2069,
 * U+FEFF), and the Unicode line and paragraph separators.
 */

/** The unsafe characters above, as regular-expression class ranges (LF on its own). */
const RANGES = [
  '\\u0000-\\u0009',
  '\\u000b-\\u001f',
  '\\u007f-\\u009f',
  '\\u200b-\\u200f',
  '\\u2028\\u2029',
  '\\u202a-\\u202e',
  '\\u2066-\\u2069',
  '\\ufeff',
].join('');
const UNSAFE = new RegExp(`[${RANGES}\\u000a]`, 'g');
const UNSAFE_BUT_NEWLINE = new RegExp(`[${RANGES}]`, 'g');

/** Whether `text` holds a character that `escapeControl` would escape.
 *
 * @internal
 */
export function hasControl(text: string): boolean {
  return new RegExp(`[${RANGES}\\u000a]`).test(text);
}

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** One line of text, safe for a terminal: every unsafe character shown as an escape. */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/** Like `escapeControl`, but newlines stay (for messages that are several lines on purpose). */
export function escapeControlKeepNewlines(text: string): string {
  return text.replace(UNSAFE_BUT_NEWLINE, escapeChar);
}
