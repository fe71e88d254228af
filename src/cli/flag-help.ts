/**
 * A flag as a command's `--help` text describes it: the value it takes (`FILE`, `text|json`)
 * and its description, read from the USAGE beside the parser's table (`OPTIONS`). The one
 * reader of USAGE texts: the CLI flags reference (scripts/docs.mjs) and shell completion
 * (`edgesync completion`) both come from it.
 */

export interface FlagHelp {
  /** What follows the flag's name on its line: `FILE`, `text|json`, or empty. */
  readonly value: string;
  /** The description: the rest of its line, plus the continuation lines indented deeper. */
  readonly text: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** How `--name` is described in `usage`, or undefined when it is not. */
export function flagHelp(usage: string, name: string): FlagHelp | undefined {
  const lines = usage.split('\n');
  const re = new RegExp(
    `^(\\s+)(?:-\\w, )?--${escapeRegExp(name)}(?![\\w-])(.*?)(\\s{2,})(\\S.*)$`,
  );
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i] as string);
    if (m === null) continue;
    const indent = (m[1] as string).length;
    const text = [m[4] as string];
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j] as string;
      if (next.trim() === '' || next.length - next.trimStart().length <= indent) break;
      text.push(next.trim());
    }
    return { value: (m[2] as string).trim(), text: text.join(' ') };
  }
  return undefined;
}

/** The values a flag's help lists as `a|b|c` (a fixed set), else none. */
export function flagChoices(help: FlagHelp | undefined): string[] {
  if (help === undefined || !/^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)+$/.test(help.value)) return [];
  return help.value.split('|');
}
