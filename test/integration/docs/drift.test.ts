/**
 * Facts the hand-written reference states about the code, held to the code: validate's JSON
 * report, the number of lists a plan makes, the kinds release takes, the file names import
 * writes, and the metrics a scrape sample shows. A change to any of them fails here until the
 * page says the same.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { NO_CALLS } from '../../../src/api/index.js';
import { RELEASE_MANIFEST_KINDS, RELEASE_PLAN_KINDS } from '../../../src/apply/release.js';
import { main } from '../../../src/cli/main.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';

const repo = path.resolve(import.meta.dirname, '../../..');
const page = (p: string) => readFile(path.join(repo, p), 'utf8');

/** The part of a page from the heading `title` to the next heading of its level or higher. */
function section(text: string, title: string): string {
  const start = text.indexOf(`\n## ${title}`);
  expect(start, `section ${title}`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
];

describe('docs/reference/cli.md', () => {
  it("states validate's JSON report as validate writes it", async () => {
    const stdout = new Capture();
    await main({
      argv: ['validate', 'config-examples/edges', '--output', 'json'],
      stdout,
      stderr: new Capture(),
      env: {},
      cwd: repo,
      signal: new AbortController().signal,
    });
    const report = JSON.parse(stdout.text) as Record<string, unknown>;
    const text = section(await page('docs/reference/cli.md'), '`edgesync validate');
    const documented = /resources: \{([^}]*)\}/.exec(text)?.[1]?.split(', ');
    expect(documented).toEqual(Object.keys(report.resources as object));
    const top = /`\{(format_version)[^`]*`/.exec(text)?.[0] ?? '';
    for (const key of Object.keys(report)) expect(top).toContain(key);
  });

  it('states how many lists a plan makes', async () => {
    const text = section(await page('docs/reference/cli.md'), '`edgesync plan');
    const kinds = Object.keys(NO_CALLS).length;
    expect(text).toContain(`exactly ${NUMBER_WORDS[kinds]} paginated lists`);
  });

  it('names every kind release takes', async () => {
    const text = section(await page('docs/reference/cli.md'), '`edgesync release');
    for (const kind of [...RELEASE_MANIFEST_KINDS, ...RELEASE_PLAN_KINDS])
      expect(text).toContain(`\`${kind}\``);
  });

  it("names import's files as import names them", async () => {
    const text = section(await page('docs/reference/cli.md'), '`edgesync import');
    const source = await page('src/apply/import.ts');
    const prefixes = [...source.matchAll(/file: `([a-z]*)(?:\$\{slug\})?-\$\{/g)].map((m) => m[1]);
    // The edge kinds share one template (`${slug}-`): tls and https.
    const expected = ['tls', 'https', ...prefixes.filter((p) => p !== '')].sort();
    const documented = [...text.matchAll(/`([a-z]+)-<name>\.yaml`/g)].map((m) => m[1]).sort();
    expect(documented).toEqual(expected);
  });
});

describe('docs/reference/metrics.md', () => {
  it('shows only metrics the daemon exports, each in its table', async () => {
    const text = await page('docs/reference/metrics.md');
    const sample = /```text\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
    const names = sample
      .split('\n')
      .filter((l) => l.startsWith('edgesync_'))
      .map((l) => /^([a-z_]+)/.exec(l)?.[1] ?? '');
    expect(names.length).toBeGreaterThan(3);
    const exported = await createDaemonMetrics({ defaultMetrics: false }).render();
    for (const name of names) {
      expect(exported).toContain(`# TYPE ${name} `);
      expect(text).toContain(`| \`${name}\` |`);
    }
  });
});
