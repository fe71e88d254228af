/**
 * `edgesync resume [--url URL]`: lets a suspended daemon write again (`POST /-/resume`),
 * with its control token.
 */
import type { CliContext } from '../context.js';
import {
  DAEMON_OPTIONS,
  DAEMON_USAGE,
  daemonTarget,
  setSuspended,
  shownUrl,
} from '../daemon-client.js';
import { ExitCode } from '../exit.js';
import { parseCommandArgs } from '../flags.js';

export const summary = 'let a suspended daemon write again';

export const USAGE = `usage: edgesync resume [options]

Lets a suspended daemon write again (POST /-/resume); it reconciles at its next cycle.

options:
${DAEMON_USAGE}
`;

export const OPTIONS = DAEMON_OPTIONS;

export async function run(ctx: CliContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS, USAGE, { positionals: false });
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const target = await daemonTarget(ctx, values);
  const { changed } = await setSuspended(target, 'resume');
  const where = shownUrl(target.base);
  ctx.stderr.write(
    changed ? `${where}: resumed\n` : `${where} was not suspended: nothing changed\n`,
  );
  return ExitCode.ok;
}
