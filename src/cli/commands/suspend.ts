/**
 * `edgesync suspend [--url URL]`: stops a running daemon's writes (`POST /-/suspend`),
 * with its control token; the daemon keeps observing and reports what differs.
 */
import type { CliContext } from '../context.js';
import { runDaemonCommand, setSuspended } from '../daemon-client.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';

export const summary = "stop a running daemon's writes (it keeps observing and reporting drift)";

export const USAGE = commandUsage('suspend', {
  synopsis: 'suspend [options]',
  about: `
Stops every write of a running daemon at once (POST /-/suspend): it keeps reading, planning
and reporting drift ("edgesync status" shows it), and writes again after "edgesync resume".
`,
});

export const OPTIONS = commandOptions('suspend');

export async function run(ctx: CliContext): Promise<number> {
  return runDaemonCommand(ctx, USAGE, async (target, where) => {
    const { changed } = await setSuspended(target, 'suspend');
    ctx.stderr.write(
      changed ? `${where}: suspended\n` : `${where} was already suspended: nothing changed\n`,
    );
    return ExitCode.ok;
  });
}
