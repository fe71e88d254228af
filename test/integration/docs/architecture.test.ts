/**
 * ARCHITECTURE.md stays a map a newcomer reads in ten minutes: at most 3,000 words, its sections
 * there, every room of src/ in its table, every dependency of package.json named with its job,
 * and every decision record listed, both there and in docs/decisions/README.md. A record a later
 * one replaced names that record, and the record exists.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../../..');
const read = (p: string) => readFileSync(path.join(repo, p), 'utf8');
const architecture = read('ARCHITECTURE.md');

/** Words as `wc -w` counts them: runs of non-whitespace. */
const wordCount = (text: string) => text.split(/\s+/).filter((w) => w !== '').length;

/** The part of ARCHITECTURE.md under `## title`, up to the next `## ` heading. */
function section(title: string): string {
  const start = architecture.indexOf(`\n## ${title}\n`);
  expect(start, `section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = architecture.indexOf('\n## ', start + 1);
  return architecture.slice(start, end === -1 ? undefined : end);
}

const RECORDS = readdirSync(path.join(repo, 'docs/decisions'))
  .filter((name) => /^\d{4}-.+\.md$/.test(name))
  .sort();

describe('ARCHITECTURE.md', () => {
  it('is at most 3,000 words', () => {
    expect(wordCount(architecture)).toBeLessThanOrEqual(3000);
  });

  it.each([
    'Rooms',
    "The data's path",
    'Adding a field',
    'Adding a kind',
    'Dependencies',
    'Decisions',
  ])('has its section "%s"', (title) => {
    expect(section(title).length).toBeGreaterThan(100);
  });

  it('names every folder of src/ in its table of rooms', () => {
    const rooms = section('Rooms');
    const folders = readdirSync(path.join(repo, 'src')).filter((name) =>
      statSync(path.join(repo, 'src', name)).isDirectory(),
    );
    expect(folders.length).toBeGreaterThan(5);
    expect(folders.filter((folder) => !rooms.includes(`| \`src/${folder}/\``))).toEqual([]);
  });

  it('names every runtime and development dependency of package.json', () => {
    const pkg = JSON.parse(read('package.json')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const listed = section('Dependencies');
    const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
    expect(names.filter((name) => !listed.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('decision records', () => {
  it('are found', () => {
    expect(RECORDS.length).toBeGreaterThan(20);
  });

  it.each(RECORDS)('%s is listed in docs/decisions/README.md and in ARCHITECTURE.md', (name) => {
    expect(read('docs/decisions/README.md')).toContain(`](${name})`);
    expect(section('Decisions')).toContain(`](docs/decisions/${name})`);
  });

  it.each(RECORDS)('%s: a record it says superseded it exists', (name) => {
    const text = read(`docs/decisions/${name}`);
    const named = [...text.matchAll(/Superseded by \[(\d{4})\]/g)].map((m) => m[1]);
    for (const num of named) expect(RECORDS.some((r) => r.startsWith(`${num}-`))).toBe(true);
  });
});
