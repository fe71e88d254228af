/**
 * Stopping with the parent process. `npx edgesync run` runs the CLI as a child of npm, and npm
 * does not pass SIGTERM on: killed, it leaves the daemon running, reparented to init (or to a
 * subreaper). The executable (bin/edgesync.js) watches its parent and, once it is gone, stops
 * exactly as on SIGTERM (the cycle in flight finishes its API call, then the process exits).
 *
 * The parent is polled (`process.ppid` is read from the kernel each time): Node has no event for
 * it, and stdin cannot tell (a daemon's stdin is often /dev/null). Not watched when there is
 * nothing to lose: started by init itself (a container's or systemd's child: ppid 1), as pid 1
 * (ppid 0), or under `nohup` (SIGHUP ignored, Linux: `/proc/self/status`), which asks to outlive
 * the session on purpose.
 */
import { readFileSync } from 'node:fs';

/** How often the parent is looked at: a stop within about a second, at no measurable cost. */
const POLL_MS = 1000;

export interface ParentWatchOptions {
  /** Called once, when the parent the process started with is gone. */
  readonly onGone: (parentPid: number) => void;
  /** The current parent pid. Default: `process.ppid`. */
  readonly ppid?: () => number;
  /** Whether SIGHUP is ignored (nohup). Default: read from /proc/self/status. */
  readonly hangupIgnored?: () => boolean;
  /** Polls `check` until the returned function is called. Default: an unref'd setInterval. */
  readonly every?: (ms: number, check: () => void) => () => void;
}

/** Starts watching; returns the function that stops it. */
export function watchParent(options: ParentWatchOptions): () => void {
  const ppid = options.ppid ?? (() => process.ppid);
  const parent = ppid();
  if (parent <= 1 || (options.hangupIgnored ?? hangupIgnored)()) return () => undefined;
  const every = options.every ?? pollEvery;
  const stop = every(POLL_MS, () => {
    if (ppid() === parent) return;
    stop();
    options.onGone(parent);
  });
  return stop;
}

function pollEvery(ms: number, check: () => void): () => void {
  const timer = setInterval(check, ms);
  // Never what keeps a finished command alive.
  timer.unref();
  return () => clearInterval(timer);
}

/** SIGHUP (signal 1, the lowest bit of SigIgn) is ignored: started under nohup. */
function hangupIgnored(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false;
  }
}
