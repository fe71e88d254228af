/**
 * Benchmark suite `errors`: `edgesync validate` on a directory holding a backup copy of itself
 * (the plan benchmark's 10,000-edge corpus twice: every name and hostport is a duplicate), as a
 * whole process. Each error is located without reading or parsing its file again per error.
 * Budget: under 5 s and 300 MB for the 20,000 duplicated edges.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generate } from './corpus.js';
import type { BenchSuite } from './run.js';
import type { Rusage } from './rusage.js';

const RUNS = 3;
const BUDGET = { wallMs: 5_000, rssMb: 300 };
const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, '../../bin/edgesync.js');
const RUSAGE = pathToFileURL(path.join(here, 'rusage.js')).href;
/** RSS is read in MiB (2^20 bytes); the budget is in MB (10^6 bytes). */
const MB_PER_MIB = 2 ** 20 / 1e6;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Runs `edgesync validate DIR`: exit code 1 and its diagnostics on stderr are the expected end. */
function validate(dir: string, usageFile: string): Promise<{ ms: number; errors: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', RUSAGE, BIN, 'validate', dir],
      { env: { ...process.env, EDGESYNC_BENCH_RUSAGE: usageFile }, maxBuffer: 256 << 20 },
      (err, _stdout, stderr) => {
        const ms = performance.now() - start;
        if (err === null || err.code !== 1) {
          reject(
            new Error(`validate should fail with exit code 1: ${err?.message ?? 'it passed'}`),
          );
          return;
        }
        const summary = /^(\d+) errors? in \d+ files?/m.exec(stderr);
        resolve({ ms, errors: Number(summary?.[1] ?? Number.NaN) });
      },
    );
  });
}

export const suite: BenchSuite = {
  name: 'errors',
  description: `validate 2 x 10,000 edges with duplicate names (a backup copy), median of ${RUNS}`,
  async run() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-bench-errors-'));
    const usageFile = `${dir}.rusage.json`;
    try {
      await generate(dir);
      await generate(path.join(dir, 'backup'));
      const walls: number[] = [];
      const usage: Rusage[] = [];
      let errors = 0;
      for (let i = 0; i < RUNS; i++) {
        const run = await validate(dir, usageFile);
        walls.push(run.ms);
        errors = run.errors;
        usage.push(JSON.parse(await readFile(usageFile, 'utf8')) as Rusage);
      }
      const wall = median(walls);
      const cpu = median(usage.map((u) => u.cpuMs));
      const rss = median(usage.map((u) => u.maxRssMb)) * MB_PER_MIB;
      process.stdout.write(
        [
          `errors reported: ${errors}`,
          `whole "edgesync validate" process: wall ${wall.toFixed(0)} ms (budget < ${BUDGET.wallMs} ms) ${wall < BUDGET.wallMs ? 'OK' : 'OVER BUDGET'}; CPU ${cpu.toFixed(0)} ms; peak RSS ${rss.toFixed(0)} MB (budget < ${BUDGET.rssMb} MB) ${rss < BUDGET.rssMb ? 'OK' : 'OVER BUDGET'}`,
          `per error: ${(wall / errors).toFixed(2)} ms, ${((rss * 1e3) / errors).toFixed(1)} KB of peak RSS`,
          '',
        ].join('\n'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(usageFile, { force: true });
    }
  },
};
