/**
 * Benchmark suite `startup`: the start-up of a short command, `edgesync validate` of a directory
 * holding one TLS edge (no cloud endpoint, so no CEL), as a whole process from spawn to exit:
 * wall time, and CPU (user + system, every thread) read by the exit hook preloaded with
 * `node --import` (./rusage.ts). `EDGESYNC_BENCH_STARTUP_RUNS` runs (default 21), alternating
 * with the build at `EDGESYNC_BENCH_BASELINE` (another build's `bin/edgesync.js`) when given, so
 * both meet the same machine. Medians.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BIN } from './harness.js';
import type { BenchSuite } from './run.js';
import type { Rusage } from './rusage.js';

const RUNS = Number(process.env.EDGESYNC_BENCH_STARTUP_RUNS ?? 21);
const RUSAGE = path.join(import.meta.dirname, 'rusage.js');

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

export const suite: BenchSuite = {
  name: 'startup',
  description: 'edgesync validate of a one-edge directory: the start-up of a short command',
  async run() {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-startup-'));
    try {
      const dir = path.join(tmp, 'm');
      await mkdir(dir);
      await writeFile(
        path.join(dir, 'edge.yaml'),
        'kind: TLSEdge\nname: a\nhostports: [a.example.com:443]\n',
      );
      const builds = [
        ...(process.env.EDGESYNC_BENCH_BASELINE === undefined
          ? []
          : [{ label: 'baseline', bin: path.resolve(process.env.EDGESYNC_BENCH_BASELINE) }]),
        { label: 'this build', bin: BIN },
      ];
      const figures = new Map(
        builds.map((b) => [b.label, { wall: [] as number[], cpu: [] as number[] }]),
      );
      const usageFile = path.join(tmp, 'rusage.json');
      for (let i = 0; i < RUNS; i++) {
        for (const build of builds) {
          const started = performance.now();
          const r = spawnSync(process.execPath, ['--import', RUSAGE, build.bin, 'validate', dir], {
            encoding: 'utf8',
            env: { PATH: process.env.PATH ?? '', EDGESYNC_BENCH_RUSAGE: usageFile },
          });
          const wall = performance.now() - started;
          if (r.status !== 0) throw new Error(`${build.label}: validate failed: ${r.stderr}`);
          const usage = JSON.parse(await readFile(usageFile, 'utf8')) as Rusage;
          const f = figures.get(build.label);
          f?.wall.push(wall);
          f?.cpu.push(usage.cpuMs);
        }
      }
      for (const build of builds) {
        const f = figures.get(build.label);
        if (f === undefined) continue;
        process.stdout.write(
          `${build.label}: "edgesync validate" of one TLS edge, median of ${RUNS}: wall ${median(f.wall).toFixed(0)} ms (min ${Math.min(...f.wall).toFixed(0)}), CPU ${median(f.cpu).toFixed(0)} ms (min ${Math.min(...f.cpu).toFixed(0)})\n`,
        );
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  },
};
