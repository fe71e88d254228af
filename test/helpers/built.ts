/**
 * Tests that spawn the CLI run the compiled code in dist/. A stale dist/ must never be tested
 * silently: fail, with the remedy, when dist/ is missing or older than any source file (`npm
 * test` builds first, through `pretest`). Nothing here rebuilds: a build in the middle of a run
 * would rewrite dist/ under other test files' child processes.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

export function assertFreshBuild(): void {
  const main = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(main)) {
    throw new Error('dist/ is missing: run `npm run build` before these tests (npm test does)');
  }
  const built = statSync(main).mtimeMs;
  const source = newestMtime(path.join(ROOT, 'src'));
  if (source > built) {
    throw new Error(
      'dist/ is older than src/: these tests would run stale code. Run `npm run build` first (npm test does)',
    );
  }
}
