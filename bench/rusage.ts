/**
 * Preloaded into a measured command (`node --import`, see ./plan.ts): when the process exits,
 * writes its CPU time (user + system, every thread), the main thread's share of it and its peak
 * RSS to the file named by `EDGESYNC_BENCH_RUSAGE`. The command itself is the real one,
 * bin/edgesync.js, unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface Rusage {
  readonly cpuMs: number;
  /** The main (JavaScript) thread's CPU; the rest is V8's and libuv's helper threads. */
  readonly mainThreadCpuMs: number | undefined;
  readonly maxRssMb: number;
}

/** Clock ticks per second of /proc's times: 100 on Linux (USER_HZ). */
const TICKS_PER_S = 100;

/** The main thread's user + system time from /proc (Linux), else undefined. */
function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

const file = process.env.EDGESYNC_BENCH_RUSAGE;
if (file !== undefined && file !== '') {
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const usage: Rusage = {
      cpuMs: (cpu.user + cpu.system) / 1000,
      mainThreadCpuMs: mainThreadCpuMs(),
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    };
    writeFileSync(file, JSON.stringify(usage));
  });
}
