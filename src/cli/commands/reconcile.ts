/**
 * `edgesync reconcile [--url URL]`: asks a running daemon for a cycle now (`POST /-/reconcile`,
 * what git-sync's webhook calls), with its control token. The daemon runs it as soon as its
 * resync budget allows; `edgesync status` shows the result.
 */
import type { CliContext } from '../context.js';
import {
  DAEMON_OPTIONS,
  DAEMON_USAGE,
  daemonTarget,
  requestReconcile,
  shownUrl,
} from '../daemon-client.js';
import { ExitCode } from '../exit.js';
import { parseCommandArgs } from '../flags.js';

export const summary = 'ask a running daemon for a reconcile now';

export const USAGE = `usage: edgesync reconcile [options]

Asks a running daemon for a reconcile now (POST /-/reconcile). The daemon runs it as soon as its
resync budget allows; "edgesync status" shows the result.

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
  const where = shownUrl(target.base);
  if (!(await requestReconcile(target))) {
    ctx.stderr.write(`${where} is stopping: no reconcile was requested\n`);
    return ExitCode.error;
  }
  ctx.stderr.write(`reconcile requested from ${where}; "edgesync status" shows its result\n`);
  return ExitCode.ok;
}
