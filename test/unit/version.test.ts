/** The version comes from package.json, the one place it is written. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';

it('reads the version from package.json', () => {
  const pkg = JSON.parse(
    readFileSync(path.join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
  ) as { version: string };
  expect(VERSION).toBe(pkg.version);
});

it('has a CHANGELOG section for that version', () => {
  const root = path.join(import.meta.dirname, '..', '..');
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
  };
  const changelog = readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
  expect(changelog).toContain(`\n## [${pkg.version}] - `);
});
