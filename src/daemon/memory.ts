/**
 * Memory hygiene of the long-running daemon: a full garbage collection once a cycle has ended.
 *
 * Why: V8 sizes the old generation after the allocation rate, not after what is kept. A cycle
 * over 10,000 edges allocates several hundred MB of short-lived objects (file text, YAML and JSON
 * pages, zod outputs, the plan) yet keeps well under 100 MB, and with resyncs every few seconds
 * V8 let the garbage of successive cycles pile up to 450-560 MiB resident before collecting it
 * (bench `daemon`). Collecting once the cycle is over, when nothing of it is referenced any more,
 * costs tens of milliseconds for a live set this size and starts the next cycle from the live set,
 * with V8's next limit derived from it; resident memory then stays near a single cycle's peak.
 *
 * The collector is reached without asking users for `node --expose-gc`: the flag is set at
 * runtime, read through a fresh context's global, then cleared again.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A function running a full collection, or undefined if this runtime offers none. */
export function fullGarbageCollector(): (() => void) | undefined {
  const existing: unknown = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return () => existing();
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    v8.setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? () => gc() : undefined;
  } catch {
    return undefined;
  }
}
