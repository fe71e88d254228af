#!/usr/bin/env node
// The executable: runs the bundled CLI from dist/bundle/ (scripts/bundle.mjs, which `npm ci` runs
// through `prepare` and `npm run build`).
import { main, watchParent } from '../dist/bundle/main.js';

const controller = new AbortController();
/**
 * One Ctrl-C can arrive twice: the terminal signals the whole foreground process group, and
 * `npm start` (npm, its shell) forwards the same signal to us again a moment later. A repeat
 * within this window is that same Ctrl-C, not a person's second one.
 */
const SAME_SIGNAL_MS = 1_000;
let firstSignalAt;
const stop = (reason) => {
  const now = Date.now();
  if (firstSignalAt === undefined) {
    firstSignalAt = now;
    controller.abort(new Error(reason));
    return;
  }
  // A second signal means "now": skip the graceful path.
  if (now - firstSignalAt >= SAME_SIGNAL_MS) process.exit(130);
};
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => stop(sig));
// A parent that goes away (npx killed with SIGTERM, which it does not pass on) stops us as
// SIGTERM would: see src/cli/parent.ts.
watchParent({ onGone: () => stop('parent process exited') });

// The reader of stdout went away (`edgesync schema | head`, `edgesync run | head`): what was left
// to print has no reader, so the command ends quietly, the way a pipeline expects, instead of
// dying on an unhandled EPIPE with a stack trace. A daemon stops as it would on a signal.
let stdoutClosed = false;
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
  stdoutClosed = true;
  controller.abort(new Error('EPIPE'));
});

const code = await main({
  argv: process.argv.slice(2),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
// Flush what is buffered for a pipe, then exit: lingering keep-alive sockets or timers must not
// keep a finished command alive.
if (!stdoutClosed) {
  await new Promise((resolve) => process.stdout.write('', () => process.stderr.write('', resolve)));
}
process.exit(stdoutClosed ? 0 : code);
