#!/usr/bin/env node
// The executable: runs the bundled CLI from dist/bundle/ (scripts/bundle.mjs, which `npm ci` runs
// through `prepare` and `npm run build`).
import { main } from '../dist/bundle/main.js';

const controller = new AbortController();
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    signals += 1;
    // A second signal means "now": skip the graceful path.
    if (signals > 1) process.exit(130);
    controller.abort(new Error(sig));
  });
}

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
