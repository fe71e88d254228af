/**
 * The command as shipped (bin/edgesync.js running dist/bundle/): the YAML reader it carries is
 * `yaml`'s build without the per-token environment switch, and nothing but diagnostics reaches
 * stderr for input yaml would warn about.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'edgesync.js');

let dir: string;
beforeAll(() => assertFreshBuild());
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bundle-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the CLI bundle', () => {
  it("carries yaml's parser without its per-token read of process.env", async () => {
    const bundle = path.join(ROOT, 'dist', 'bundle');
    const chunks = await Promise.all(
      (await readdir(bundle))
        .filter((f) => f.endsWith('.js'))
        .map((f) => readFile(path.join(bundle, f), 'utf8')),
    );
    const parser = chunks.filter((text) => text.includes('Not a YAML token'));
    expect(parser).toHaveLength(1);
    // yaml's Node build asks the environment for LOG_TOKENS at every token it parses.
    expect(parser[0]).not.toMatch(/LOG_TOKENS|LOG_STREAM/);
  });

  it('prints only the diagnostic for a collection used as a key (no yaml warning)', async () => {
    await writeFile(
      path.join(dir, 'e.yaml'),
      'kind: TLSEdge\nname: a\nhostports: [a.example.com:443]\n? [x, y]\n: 1\n',
    );
    const r = spawnSync(process.execPath, [BIN, 'validate', dir], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'e.yaml:1:1: unknown field "[ x, y ]"\n1 error in 1 file: the manifests are invalid\n',
    );
  });
});
