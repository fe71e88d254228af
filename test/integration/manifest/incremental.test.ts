/**
 * The daemon's incremental load: after a file event only the touched files are read (and
 * `stat`ed); a path the kept listing does not hold lists the tree again; not knowing what
 * changed reads everything. Equality with a full load: ./incremental.property.test.ts.
 */
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileCache } from '../../../src/manifest/build.js';
import { type LoaderFs, nodeFs } from '../../../src/manifest/listing.js';
import { loadManifests, touchManifests } from '../../../src/manifest/loader.js';

const tls = (name: string, description = 'x') =>
  `kind: TLSEdge\nname: ${name}\ndescription: ${description}\nhostports: [${name}.example.com:443]\n`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-incremental-'));
  await mkdir(path.join(dir, 'team'));
  for (let i = 0; i < 20; i++) await writeFile(path.join(dir, 'team', `e${i}.yaml`), tls(`e${i}`));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `nodeFs`, counting the files it `stat`s and reads and the directories it lists. */
function countingFs() {
  const counts = { stat: 0, readFile: 0, readdir: 0 };
  const fs: LoaderFs = {
    ...nodeFs,
    stat: (p) => {
      counts.stat += 1;
      return nodeFs.stat(p);
    },
    readFile: (p) => {
      counts.readFile += 1;
      return nodeFs.readFile(p);
    },
    readdir: (p) => {
      counts.readdir += 1;
      return nodeFs.readdir(p);
    },
  };
  return { fs, counts };
}

async function first(cache: FileCache) {
  const loaded = await loadManifests(dir, { cache, incremental: true });
  expect(loaded.read.size).toBe(20);
}

describe('incremental load', () => {
  it('reads and stats only the touched file, and lists nothing', async () => {
    const cache = new FileCache();
    await first(cache);
    const file = path.join(dir, 'team', 'e3.yaml');
    await writeFile(file, tls('e3', 'edited'));
    touchManifests(cache, [file]);
    const { fs, counts } = countingFs();
    const loaded = await loadManifests(dir, { cache, incremental: true, fs });
    expect(counts).toEqual({ stat: 1, readFile: 1, readdir: 0 });
    expect([...loaded.read.values()].map((s) => s.file)).toEqual(['team/e3.yaml']);
    expect(loaded.stamps.size).toBe(20);
    if (!loaded.ok) throw new Error('invalid');
    expect(loaded.set.tlsEdges.find((e) => e.name === 'e3')?.description).toBe('edited');
    // Nothing touched since: nothing read.
    const again = await loadManifests(dir, { cache, incremental: true, fs });
    expect(again.read.size).toBe(0);
  });

  it('lists the tree again for a path it does not hold (a new file), and drops a removed one', async () => {
    const cache = new FileCache();
    await first(cache);
    const added = path.join(dir, 'team', 'new.yaml');
    await writeFile(added, tls('new'));
    await unlink(path.join(dir, 'team', 'e0.yaml'));
    touchManifests(cache, [added, path.join(dir, 'team', 'e0.yaml')]);
    const { fs, counts } = countingFs();
    const loaded = await loadManifests(dir, { cache, incremental: true, fs });
    expect(counts.readdir).toBeGreaterThan(0);
    expect(counts.readFile).toBe(1);
    if (!loaded.ok) throw new Error('invalid');
    const names = loaded.set.tlsEdges.map((e) => e.name);
    expect(names).toContain('new');
    expect(names).not.toContain('e0');
    expect(loaded.files).toHaveLength(20);
  });

  it('reads every file when what changed is not known, and without `incremental`', async () => {
    const cache = new FileCache();
    await first(cache);
    touchManifests(cache, undefined);
    expect((await loadManifests(dir, { cache, incremental: true })).read.size).toBe(20);
    expect((await loadManifests(dir, { cache, incremental: true })).read.size).toBe(0);
    expect((await loadManifests(dir, { cache })).read.size).toBe(20);
  });

  it('reports a conflict a touched file makes with a kept one, located in both', async () => {
    const cache = new FileCache();
    await first(cache);
    const file = path.join(dir, 'team', 'e5.yaml');
    await writeFile(file, tls('e7'));
    touchManifests(cache, [file]);
    const loaded = await loadManifests(dir, { cache, incremental: true });
    expect(loaded.read.size).toBe(1);
    expect(loaded.diagnostics.map((d) => `${d.file}:${d.line}:${d.path}: ${d.message}`)).toEqual([
      'team/e7.yaml:2:name: duplicate TLSEdge name "e7" (first defined at team/e5.yaml:2:7)',
      'team/e7.yaml:4:hostports[0]: hostport "e7.example.com:443" is already served by TLSEdge "e7" (team/e5.yaml:4:13)',
    ]);
  });
});
