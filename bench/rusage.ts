/**
 * Preloaded into a measured command (`node --import`, see ./plan.ts): when the process exits,
 * writes its CPU time (user + system, every thread) and peak RSS to the file named by
 * `EDGESYNC_BENCH_RUSAGE`. The command itself is the real one, bin/edgesync.js, unchanged.
 */
import { writeFileSync } from 'node:fs';

export interface Rusage {
  readonly cpuMs: number;
  readonly maxRssMb: number;
}

const file = process.env.EDGESYNC_BENCH_RUSAGE;
if (file !== undefined && file !== '') {
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const usage: Rusage = {
      cpuMs: (cpu.user + cpu.system) / 1000,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    };
    writeFileSync(file, JSON.stringify(usage));
  });
}
