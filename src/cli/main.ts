/**
 * The CLI entry point: picks the command, runs it, and maps every outcome to an exit code.
 * This is the only place that calls `process.exit` (via the returned code in bin/).
 */

import { errorMessage, isEdgesyncError, knownSystemError } from '../errors.js';
import { escapeControl, escapeControlKeepNewlines } from '../escape.js';
import { createValueMask } from '../manifest/secrets.js';
import { didYouMean } from '../manifest/suggest.js';
import { VERSION } from '../version.js';
import { commands } from './commands.js';
import type { CliContext } from './context.js';
import { ExitCode, exitCodeFor } from './exit.js';

// The executable's own helper, bundled with `main` (bin/edgesync.js imports only this module).
export { watchParent } from './parent.js';

export async function main(ctx: CliContext): Promise<number> {
  // `edgesync help plan` is `edgesync plan --help`.
  if (ctx.argv[0] === 'help' && ctx.argv[1] !== undefined && ctx.argv.length === 2) {
    return main({ ...ctx, argv: [ctx.argv[1], '--help'] });
  }
  const [name, ...rest] = ctx.argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    // Asked for, help is the command's output (stdout, for a pager); a bare `edgesync` is a
    // usage error, and its usage a diagnostic.
    await printHelp(name === undefined ? ctx.stderr : ctx.stdout);
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version' || name === '-v') {
    ctx.stdout.write(`${VERSION}\n`);
    return ExitCode.ok;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (load === undefined) {
    const hint = didYouMean(name, Object.keys(commands));
    ctx.stderr.write(
      `edgesync: unknown command "${escapeControl(name)}"${escapeControl(hint)}; run "edgesync --help"\n`,
    );
    return ExitCode.usage;
  }
  const mask = ctx.mask ?? createValueMask();
  try {
    const mod = await load();
    return await mod.run({ ...ctx, argv: rest, mask });
  } catch (thrown) {
    const err = knownSystemError(thrown);
    const code = exitCodeFor(err);
    // Masked before it is escaped: an escaped secret would no longer be recognised.
    const say = (text: string) => escapeControlKeepNewlines(mask.apply(text));
    if (isEdgesyncError(err)) {
      ctx.stderr.write(`edgesync ${name}: ${say(err.message)}\n`);
    } else {
      // An unexpected error is a bug: say so, but never dump internals beyond the message.
      ctx.stderr.write(`edgesync ${name}: internal error: ${say(errorMessage(err))}\n`);
      if (ctx.env.EDGESYNC_DEBUG) ctx.stderr.write(`${mask.apply((err as Error)?.stack ?? '')}\n`);
    }
    return code;
  }
}

async function printHelp(out: CliContext['stdout']): Promise<void> {
  const lines = ['usage: edgesync <command> [options]', '', 'commands:'];
  for (const [name, load] of Object.entries(commands)) {
    const mod = await load();
    lines.push(`  ${name.padEnd(10)} ${mod.summary}`);
  }
  lines.push('', 'Run "edgesync help <command>" (or "edgesync <command> --help") for its options.');
  out.write(`${lines.join('\n')}\n`);
}
