#!/usr/bin/env node
// The executable: runs the bundled CLI from dist/bundle/ (scripts/bundle.mjs, which `npm ci` runs
// through `prepare` and `npm run build`).
import { main, watchParent } from '../dist/bundle/main.js';

const controller = new AbortController();
let signals = 0;
const stop = (reason) => {
  signals += 1;
  // A second signal means "now": skip the graceful path.
  if (signals > 1) process.exit(130);
  controller.abort(new Error(reason));
};
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => stop(sig));
// A parent that goes away (npx killed with SIGTERM, which it does not pass on) stops us as
// SIGTERM would: see src/cli/parent.ts.
watchParent({ onGone: () => stop('parent process exited') });

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
await new Promise((resolve) => process.stdout.write('', () => process.stderr.write('', resolve)));
process.exit(code);
