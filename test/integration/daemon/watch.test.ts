import fs from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import { logCapture, makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

let tmp: string;
let dir: string;
let daemon: Daemon | undefined;
let rec: ReturnType<typeof recorder>;
let log: ReturnType<typeof logCapture>;

beforeEach(async () => {
  tmp = await makeTempDir('daemon-watch');
  dir = path.join(tmp, 'manifests');
  await fs.mkdir(path.join(dir, 'team'), { recursive: true });
  await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a\n');
  await fs.writeFile(path.join(dir, 'team', 'b.yml'), 'kind: TLSEdge\nname: b\n');
  rec = recorder();
  log = logCapture();
});

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await removeDir(tmp);
});

async function start(debounceMs = 30): Promise<void> {
  daemon = createDaemon({
    dir,
    reconcile: rec.reconcile,
    listen: false,
    debounceMs,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    logger: pino({ level: 'debug' }, log.destination),
  });
  await daemon.start();
  await waitFor('the startup cycle', () => rec.calls.length === 1);
  // Let the startup cycle finish so later cycles are the change's own.
  await waitFor('idle', () => daemon?.status().in_flight === false);
}

const fileCycles = () => rec.calls.filter((c) => c.reason === 'file').length;
/** The files whose changes the watcher reported (debug log "manifest change seen"). */
const seenFiles = () =>
  log.lines.filter((l) => l.msg === 'manifest change seen').map((l) => String(l.file));
const idle = () => daemon?.status().in_flight === false;

describe('file-system triggers (real chokidar)', () => {
  it.each<[string, (d: string) => Promise<void>]>([
    ['editing a file', (d) => fs.writeFile(path.join(d, 'a.yaml'), 'kind: TLSEdge\nname: a2\n')],
    ['adding a .yml file', (d) => fs.writeFile(path.join(d, 'c.yml'), 'kind: BotUser\nname: c\n')],
    ['removing a file', (d) => fs.unlink(path.join(d, 'a.yaml'))],
    [
      'a rename-style save (write a temp file, rename over)',
      async (d) => {
        await fs.writeFile(path.join(d, '.a.yaml.swp'), 'kind: TLSEdge\nname: a3\n');
        await fs.rename(path.join(d, '.a.yaml.swp'), path.join(d, 'a.yaml'));
      },
    ],
    [
      'a backup-style save (rename away, write anew, delete backup)',
      async (d) => {
        await fs.rename(path.join(d, 'a.yaml'), path.join(d, 'a.yaml~'));
        await fs.writeFile(path.join(d, 'a.yaml'), 'kind: TLSEdge\nname: a4\n');
        await fs.unlink(path.join(d, 'a.yaml~'));
      },
    ],
    [
      'adding a file in a new sub-directory',
      async (d) => {
        await fs.mkdir(path.join(d, 'new', 'deep'), { recursive: true });
        await fs.writeFile(path.join(d, 'new', 'deep', 'x.yaml'), 'kind: TLSEdge\nname: x\n');
      },
    ],
    ['removing a sub-directory', (d) => fs.rm(path.join(d, 'team'), { recursive: true })],
    ['editing an upper-case .YAML file', (d) => fs.writeFile(path.join(d, 'UPPER.YAML'), 'x: 1\n')],
  ])('%s triggers a cycle', async (_name, change) => {
    await start();
    await change(dir);
    await waitFor('a file-triggered cycle', () => fileCycles() >= 1);
    expect(rec.calls.at(-1)?.dir).toBe(dir);
  });

  it('hands each cycle the paths seen changed since the last one (none known at start-up)', async () => {
    await start();
    expect(rec.calls[0]?.changed).toBeUndefined();
    const a = path.join(dir, 'a.yaml');
    // Saved whole (a hidden file renamed over it): a save in place may be seen truncated, and
    // the watcher's second look would then rightly report `a` again, in a later cycle.
    const temp = path.join(dir, '.a.yaml.tmp');
    await fs.writeFile(temp, 'kind: TLSEdge\nname: a2\n');
    await fs.rename(temp, a);
    await waitFor('a file-triggered cycle', () => fileCycles() >= 1 && idle());
    expect(rec.calls.at(-1)?.changed).toEqual([a]);
    // A link that is no manifest file (dangling: chokidar sees only a raw rename) wakes no cycle
    // of its own, but the next cycle is told of it, so that its read lists the tree again.
    const link = path.join(dir, 'team-x');
    await fs.symlink(path.join(dir, 'gone'), link);
    await waitFor('the link seen', () =>
      log.lines.some((l) => l.msg === 'manifest tree entry seen' && l.file === link),
    );
    const b = path.join(dir, 'team', 'b.yml');
    await fs.writeFile(b, 'kind: TLSEdge\nname: b2\n');
    await waitFor('the cycle of b.yml', () => rec.calls.at(-1)?.changed?.includes(b) === true);
    const all = rec.calls.slice(2).flatMap((c) => c.changed ?? []);
    expect(all).toContain(link);
    expect(all).not.toContain(a);
  });

  it('ignores other files, hidden files, hidden directories and node_modules', async () => {
    await start();
    await fs.writeFile(path.join(dir, 'notes.txt'), 'hello');
    await fs.writeFile(path.join(dir, '.hidden.yaml'), 'x: 1\n');
    await fs.mkdir(path.join(dir, '.git'));
    await fs.writeFile(path.join(dir, '.git', 'inside.yaml'), 'x: 1\n');
    // The loader skips it (a project's installed packages): so does the watcher.
    await fs.mkdir(path.join(dir, 'node_modules', 'pkg'), { recursive: true });
    await fs.writeFile(path.join(dir, 'node_modules', 'pkg', 'action.yml'), 'on: push\n');
    await fs.writeFile(path.join(dir, 'team', 'README.md'), '# team');
    // Positive control, written last: once its event is seen, the watcher has reported (or
    // dropped) the events of everything written before it. No waiting for time.
    await fs.writeFile(path.join(dir, 'team', 'c.yaml'), 'x: 1\n');
    await waitFor('the control file seen', () => seenFiles().some((f) => f.endsWith('c.yaml')));
    await waitFor('a file-triggered cycle', () => fileCycles() === 1);
    // (A write may be seen as an add and a change: the set of files is what matters.)
    expect([...new Set(seenFiles().map((f) => path.basename(f)))]).toEqual(['c.yaml']);
  });

  it('debounces a burst of writes into few cycles', async () => {
    await start(150);
    for (let i = 0; i < 20; i++) {
      await fs.writeFile(path.join(dir, `burst-${i}.yaml`), `kind: BotUser\nname: b${i}\n`);
    }
    await waitFor('every write seen', () => new Set(seenFiles()).size === 20);
    await waitFor('the cycles of the burst done', () => fileCycles() >= 1 && idle());
    // Debounced: far fewer cycles than writes. (Not "at most 2": on a loaded machine the 20
    // writes themselves can spread over more than one debounce window.)
    expect(fileCycles()).toBeGreaterThanOrEqual(1);
    expect(fileCycles()).toBeLessThanOrEqual(10);
  });

  it('sees a Kubernetes ConfigMap-style ..data swap inside the directory', async () => {
    await fs.mkdir(path.join(dir, '..2024_01'));
    await fs.mkdir(path.join(dir, '..2024_02'));
    await fs.writeFile(path.join(dir, '..2024_01', 'cm.yaml'), 'v: 1\n');
    await fs.writeFile(path.join(dir, '..2024_02', 'cm.yaml'), 'v: 2\n');
    await fs.symlink('..2024_01', path.join(dir, '..data'));
    await fs.symlink('..data/cm.yaml', path.join(dir, 'cm.yaml'));
    await start();
    await fs.symlink('..2024_02', path.join(dir, '..data_tmp'));
    await fs.rename(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    await waitFor('a link-triggered cycle', () => rec.calls.some((c) => c.reason === 'link'));
  });

  it('re-watches a directory deleted and created again at the same path', async () => {
    await start();
    await fs.rm(dir, { recursive: true });
    await fs.mkdir(dir);
    await waitFor('a cycle for the recreated directory', () => rec.calls.length >= 2);
    await waitFor('idle', () => daemon?.status().in_flight === false);
    const before = rec.calls.length;
    await fs.writeFile(path.join(dir, 'fresh.yaml'), 'x: 1\n');
    await waitFor('a cycle for a file in the new directory', () => rec.calls.length > before);
  });
});

describe('--exclude in the watcher', () => {
  it('a change under an excluded path wakes no cycle', async () => {
    await fs.mkdir(path.join(dir, 'k8s'), { recursive: true });
    await fs.writeFile(path.join(dir, 'k8s', 'deploy.yaml'), 'kind: Deployment\n');
    daemon = createDaemon({
      dir,
      reconcile: rec.reconcile,
      listen: false,
      debounceMs: 30,
      exclude: ['k8s/**'],
      metrics: createDaemonMetrics({ defaultMetrics: false }),
      logger: pino({ level: 'debug' }, log.destination),
    });
    await daemon.start();
    await waitFor('the startup cycle', () => rec.calls.length === 1);
    await waitFor('idle', idle);
    // The excluded change first, then a watched one: once the watched one is seen, the other
    // (written before it) would have been seen too.
    await fs.writeFile(path.join(dir, 'k8s', 'deploy.yaml'), 'kind: Deployment\nx: 1\n');
    await fs.writeFile(path.join(dir, 'k8s', 'new.yaml'), 'kind: Service\n');
    await fs.writeFile(path.join(dir, 'a.yaml'), 'kind: TLSEdge\nname: a5\n');
    await waitFor('the watched change', () => seenFiles().some((f) => f.endsWith('a.yaml')));
    expect(seenFiles().filter((f) => f.includes(`${path.sep}k8s`))).toEqual([]);
  });
});
