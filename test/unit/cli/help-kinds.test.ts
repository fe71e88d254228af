/**
 * The help of the commands that act on every managed kind names cloud endpoints where they
 * count: `import` writes them, and the deletion guards of `plan`, `apply` and `run` count them
 * with the edges (a help that said "edges" only would mislead an account of endpoints alone).
 */
import { describe, expect, it } from 'vitest';
import * as apply from '../../../src/cli/commands/apply.js';
import * as importCommand from '../../../src/cli/commands/import.js';
import * as plan from '../../../src/cli/commands/plan.js';
import * as run from '../../../src/cli/commands/run.js';

/** The help text of one flag: its line and the indented lines that continue it. */
function flagHelp(usage: string, flag: string): string {
  const lines = usage.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith(flag));
  if (at < 0) throw new Error(`no ${flag} in the help`);
  const out = [lines[at] ?? ''];
  for (const l of lines.slice(at + 1)) {
    if (!/^\s{6,}\S/.test(l)) break;
    out.push(l);
  }
  return out.join(' ').replace(/\s+/g, ' ');
}

describe('help texts name cloud endpoints', () => {
  it('import writes edges, cloud endpoints and bot users, and --owner picks both kinds', () => {
    expect(importCommand.summary).toContain('cloud endpoints');
    expect(importCommand.USAGE.replace(/\s+/g, ' ')).toContain(
      'per live edge and cloud endpoint owned by OWNER, per bot user, and per resource of every other kind',
    );
    expect(flagHelp(importCommand.USAGE, '--owner')).toContain('edges and cloud endpoints');
  });

  it.each([
    ['plan', plan.USAGE],
    ['apply', apply.USAGE],
    ['run', run.USAGE],
  ])('%s: --max-deletes and --allow-empty count cloud endpoints', (_name, usage) => {
    expect(flagHelp(usage, '--max-deletes')).toContain('edges and cloud endpoints (together)');
    expect(flagHelp(usage, '--allow-empty')).toContain('edges and cloud endpoints it owns');
  });
});
