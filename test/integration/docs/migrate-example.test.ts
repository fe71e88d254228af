/**
 * docs/migrate.md's worked example is a golden test: its commands are run as written (the built
 * CLI, from the repository's root, `/tmp/endpoints` swapped for a temporary directory), and what
 * they print and write must be what the guide shows. A change to the translation or to the
 * shipped examples that the guide does not follow fails here.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';

const repo = path.resolve(import.meta.dirname, '../../..');
const DOCUMENTED_OUT = '/tmp/endpoints';
const SECTION = 'Worked example: the shipped manifests';

interface Fence {
  readonly lang: string;
  readonly text: string;
}

/** The fenced blocks of the worked example, in order, and the section's prose. */
async function example(): Promise<{ fences: Fence[]; prose: string }> {
  const tokens = new MarkdownIt().parse(
    await readFile(path.join(repo, 'docs/migrate.md'), 'utf8'),
    {},
  );
  const fences: Fence[] = [];
  let prose = '';
  let inside = false;
  for (const [i, token] of tokens.entries()) {
    if (token.type === 'heading_open' && token.tag === 'h2')
      inside = tokens[i + 1]?.content === SECTION;
    else if (inside && token.type === 'fence')
      fences.push({ lang: token.info.trim(), text: token.content });
    else if (inside && token.type === 'inline') prose += `${token.content}\n`;
  }
  return { fences, prose };
}

function run(command: string, out: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', command.replaceAll(DOCUMENTED_OUT, out)],
      {
        cwd: repo,
        env: {
          ...process.env,
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
        },
      },
      (error, _stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stderr: stderr.replaceAll(out, DOCUMENTED_OUT) });
      },
    );
  });
}

let out: string;
beforeAll(() => {
  assertFreshBuild();
});
beforeEach(async () => {
  out = path.join(await mkdtemp(path.join(tmpdir(), 'edgesync-migrate-doc-')), 'endpoints');
});
afterEach(async () => {
  await rm(path.dirname(out), { recursive: true, force: true });
});

describe('docs/migrate.md, worked example', () => {
  it('shows two commands, each with its output, then the beginning of the file written', async () => {
    const { fences } = await example();
    expect(fences.map((f) => f.lang)).toEqual(['sh', 'text', 'sh', 'text', 'yaml']);
  });

  it('the whole directory: the documented diagnostics, exactly, and nothing written', async () => {
    const { fences, prose } = await example();
    const r = await run(fences[0]!.text, out);
    expect(r.stderr).toBe(fences[1]!.text);
    expect(r.code).toBe(1);
    await expect(readFile(path.join(out, 'storefront.yaml'))).rejects.toThrow(/ENOENT/);
    const errors = /^(\d+) error\(s\): nothing written$/m.exec(r.stderr)?.[1];
    const words = [
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
    expect(prose).toContain(`stops with ${words[Number(errors)]} errors`);
  });

  it('the storefront alone with --allow-lossy: the documented output, and the file starts as shown', async () => {
    const { fences } = await example();
    const r = await run(fences[2]!.text, out);
    expect(r.stderr).toBe(fences[3]!.text);
    expect(r.code).toBe(0);
    const written = await readFile(path.join(out, 'storefront.yaml'), 'utf8');
    expect(written.startsWith(fences[4]!.text)).toBe(true);
    expect(await readFile(path.join(out, 'bots.yaml'), 'utf8')).toBe(
      await readFile(path.join(repo, 'config-examples/edges/bots.yaml'), 'utf8'),
    );
  });
});
