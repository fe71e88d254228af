/**
 * `edgesync resume [--url URL]`: lets a suspended daemon write again (`POST /-/resume`),
 * with its control token.
 */
import type { CliContext } from '../context.js';
import { runDaemonCommand, setSuspended } from '../daemon-client.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';

export const summary = 'let a suspended daemon write again';

export const USAGE = commandUsage('resume', {
  synopsis: 'resume [options]',
  about: `
Lets a suspended daemon write again (POST /-/resume); it reconciles at its next cycle.
`,
});

export const OPTIONS = commandOptions('resume');

export async function run(ctx: CliContext): Promise<number> {
  return runDaemonCommand(ctx, USAGE, async (target, where) => {
    const { changed } = await setSuspended(target, 'resume');
    ctx.stderr.write(
      changed ? `${where}: resumed\n` : `${where} was not suspended: nothing changed\n`,
    );
    return ExitCode.ok;
  });
}
