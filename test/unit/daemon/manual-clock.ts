/**
 * A hand-driven clock implementing the daemon's `Timers`: tests advance time explicitly and
 * every due timer runs in order, with pending promise continuations flushed in between.
 */
import type { Timers } from '../../../src/daemon/types.js';

interface Entry {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/** Lets every queued promise continuation run (setImmediate fires after the microtask queue). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class ManualClock implements Timers {
  private t = 0;
  private seq = 0;
  private readonly entries = new Map<number, Entry>();

  readonly now = (): number => this.t;

  readonly setTimeout = (fn: () => void, ms: number): unknown => {
    this.seq += 1;
    this.entries.set(this.seq, { id: this.seq, at: this.t + Math.max(0, ms), fn });
    return this.seq;
  };

  readonly clearTimeout = (handle: unknown): void => {
    this.entries.delete(handle as number);
  };

  /** Number of armed timers. */
  pending(): number {
    return this.entries.size;
  }

  /** Moves time forward by `ms`, running every timer that falls due, earliest first. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flush();
      let next: Entry | undefined;
      for (const e of this.entries.values()) {
        if (e.at <= target && (next === undefined || e.at < next.at)) next = e;
      }
      if (next === undefined) break;
      this.entries.delete(next.id);
      this.t = next.at;
      next.fn();
    }
    this.t = target;
    await flush();
  }
}
