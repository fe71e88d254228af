/**
 * A command's `--help` text: its synopsis and description as the command writes them, and its
 * options rendered from the flag table (./flag-table.ts), one column for the flags and their
 * descriptions wrapped beside it, then each group of flags (run's leader election) under its
 * own title. No command writes its own option lines.
 */
import { type CommandFlag, type CommandName, FLAG_GROUPS, flagsOf } from './flag-table.js';

/** Where descriptions start, and the width they wrap at. */
const COLUMN = 24;
const WIDTH = 100;

/** `-o, --output text|json`: a flag as its help line names it. */
export function flagSignature(f: Pick<CommandFlag, 'name' | 'short' | 'value'>): string {
  const short = f.short === undefined ? '' : `-${f.short}, `;
  return `${short}--${f.name}${f.value === '' ? '' : ` ${f.value}`}`;
}

/** Words into lines of at most `width` characters (a longer word has a line of its own). */
function wrap(text: string, first: number, rest: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const width = lines.length === 0 ? first : rest;
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** One flag's lines: its signature, then its description from the column (or after it). */
function flagLines(f: CommandFlag): string[] {
  const head = `  ${flagSignature(f)}`;
  const start = Math.max(COLUMN, head.length + 2);
  const [first = '', ...rest] = wrap(f.help, WIDTH - start, WIDTH - COLUMN);
  return [`${head.padEnd(start)}${first}`, ...rest.map((l) => `${' '.repeat(COLUMN)}${l}`)];
}

/** The options part of `command`'s help: `options:` and then each group. */
export function optionsHelp(command: CommandName): string {
  const flags = flagsOf(command);
  const sections = [['options:', ...flags.filter((f) => f.group === undefined).flatMap(flagLines)]];
  for (const [group, { title, note }] of Object.entries(FLAG_GROUPS)) {
    const inGroup = flags.filter((f) => f.group === group);
    if (inGroup.length === 0) continue;
    sections.push([
      title,
      ...inGroup.flatMap(flagLines),
      ...wrap(note, WIDTH - 2, WIDTH - 2).map((l) => `  ${l}`),
    ]);
  }
  return sections.map((s) => s.join('\n')).join('\n\n');
}

/**
 * A command's whole `--help`: `usage: edgesync ...`, what it does (already wrapped, as the
 * command writes it), its options from the table, and what follows them (exit codes, notes).
 */
export function commandUsage(
  command: CommandName,
  parts: { readonly synopsis: string; readonly about?: string; readonly footer?: string },
): string {
  const blocks = [`usage: edgesync ${parts.synopsis}`];
  if (parts.about !== undefined) blocks.push(parts.about.trim());
  blocks.push(optionsHelp(command));
  if (parts.footer !== undefined) blocks.push(parts.footer.trim());
  return `${blocks.join('\n\n')}\n`;
}

/** The values a flag's help lists as `a|b|c` (a fixed set), else none. */
export function flagChoices(value: string): string[] {
  if (!/^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)+$/.test(value)) return [];
  return value.split('|');
}
