/**
 * `edgesync reconcile [--url URL]`: asks a running daemon for a cycle now (`POST /-/reconcile`,
 * what git-sync's webhook calls), with its control token. The daemon runs it as soon as its
 * resync budget allows; `edgesync status` shows the result.
 */
import type { CliContext } from '../context.js';
import { requestReconcile, runDaemonCommand } from '../daemon-client.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';

export const summary = 'ask a running daemon for a reconcile now';

export const USAGE = commandUsage('reconcile', {
  synopsis: 'reconcile [options]',
  about: `
Asks a running daemon for a reconcile now (POST /-/reconcile). The daemon runs it as soon as its
resync budget allows; "edgesync status" shows the result.
`,
});

export const OPTIONS = commandOptions('reconcile');

export async function run(ctx: CliContext): Promise<number> {
  return runDaemonCommand(ctx, USAGE, async (target, where) => {
    if (!(await requestReconcile(target))) {
      ctx.stderr.write(`${where} is stopping: no reconcile was requested\n`);
      return ExitCode.error;
    }
    ctx.stderr.write(`reconcile requested from ${where}; "edgesync status" shows its result\n`);
    return ExitCode.ok;
  });
}
