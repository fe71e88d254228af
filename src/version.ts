/**
 * The package version, read from package.json (the one place it is written) rather than copied
 * into the code. Found by walking up from this module: `src/` in tests, `dist/src/` when built.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function readVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'edgesync' && typeof pkg.version === 'string') return pkg.version;
    }
    dir = path.dirname(dir);
  }
  return '0.0.0-unknown';
}

export const VERSION = readVersion();
