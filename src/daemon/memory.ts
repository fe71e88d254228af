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
 * The collector needs Node started with `--expose-gc` (`npm start`, the Docker image, or
 * `NODE_OPTIONS=--expose-gc`): the flag is passed at process start, never switched on at run
 * time (Node's documentation warns against `v8.setFlagsFromString` after start-up). Without it
 * the daemon runs the same, with a higher resident-memory plateau, and says so once at start.
 */

/** A function running a full collection, or undefined when Node was not started with --expose-gc. */
export function fullGarbageCollector(): (() => void) | undefined {
  const exposed: unknown = (globalThis as { gc?: unknown }).gc;
  return typeof exposed === 'function' ? () => exposed() : undefined;
}
