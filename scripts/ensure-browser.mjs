/**
 * Makes sure the browser the status page's test drives is installed: Debian's `chromium`, at
 * /usr/bin/chromium (EDGESYNC_CHROMIUM names another). The tests never download a browser build;
 * on a machine without it, this installs the distribution's package with apt-get (as root, as CI
 * runs), and otherwise says what to install. Run before the tests (`npm test`'s `pretest`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const browser = process.env.EDGESYNC_CHROMIUM ?? '/usr/bin/chromium';
if (existsSync(browser)) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = existsSync('/usr/bin/apt-get');
if (!isRoot || !hasApt || process.env.EDGESYNC_CHROMIUM !== undefined) {
  console.error(
    `ensure-browser: ${browser} is missing; the status page's test needs Chromium. ` +
      'Install it (Debian: `apt-get install chromium`) or set EDGESYNC_CHROMIUM to its path.',
  );
  process.exit(1);
}
console.error('ensure-browser: installing chromium (Debian package) for the status page test');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [
  ['update', '-qq'],
  ['install', '-y', '-qq', 'chromium'],
]) {
  const r = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (r.status !== 0) {
    console.error(`ensure-browser: apt-get ${args.join(' ')} failed (status ${r.status})`);
    process.exit(1);
  }
}
if (!existsSync(browser)) {
  console.error(`ensure-browser: chromium installed, but ${browser} is still missing`);
  process.exit(1);
}
