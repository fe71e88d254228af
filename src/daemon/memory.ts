/**
 * Memory hygiene of the long-running daemon: a full garbage collection once a cycle has ended,
 * when that cycle left much more heap in use than the last collection kept.
 *
 * Why: V8 sizes the old generation after the allocation rate, not after what is kept. A cycle
 * over 10,000 edges allocates several hundred MB of short-lived objects (file text, YAML and JSON
 * pages, zod outputs, the plan) yet keeps well under 100 MB, and with resyncs every few seconds
 * V8 let the garbage of successive cycles pile up to 450-560 MiB resident before collecting it
 * (bench `daemon`). Collecting once the cycle is over, when nothing of it is referenced any more,
 * costs tens of milliseconds for a live set this size and starts the next cycle from the live set,
 * with V8's next limit derived from it; resident memory then stays near a single cycle's peak.
 * An edit's incremental cycle allocates a few MB: collecting after it bought nothing, yet cost
 * about 100 ms of each edit at 10,000 edges (the whole live set is marked). So the collection
 * runs only when the heap in use grew by `COLLECT_GROWTH` of what the last one kept (at least
 * `COLLECT_MIN_BYTES`): after a full cycle, a resync, or a run of edits (`collectWhenGrown`).
 * The same check runs between a cycle's writes and the check that reads them back: after the
 * start-up cycle's 25,000 writes at 10,000 edges, what the apply left is garbage, and collecting
 * it there sizes the old generation from what is live before the check lists the account.
 *
 * The collector needs Node started with `--expose-gc` (`npm start`, the Docker image, or
 * `NODE_OPTIONS=--expose-gc`): the flag is passed at process start, never switched on at run
 * time (Node's documentation warns against `v8.setFlagsFromString` after start-up). Without it
 * the daemon runs the same, with a higher resident-memory plateau, and says so once at start.
 *
 * The peak inside a cycle is V8's to decide: it lets the old generation grow to about twice what
 * its last full collection kept before it collects again (a throughput setting), and keeps up to
 * 3 × 16 MiB of young generation. A daemon is a long-lived process whose memory is budgeted by
 * its peak, so it starts with `DAEMON_NODE_FLAGS`: measured over the daemon benchmark at 10,000
 * edges (`bench/README.md`), they take the peak of the seeding cycle from about 397 to under
 * 286 MiB, with resyncs no slower.
 */

/**
 * The Node flags the daemon is started with: `npm start`, the Docker image's ENTRYPOINT and the
 * daemon benchmark pass exactly these (a test holds them together).
 * - `--expose-gc`: the collection after a cycle that grew the heap (`collectWhenGrown`).
 * - `--heap-growing-percent=25`: the old generation grows to 1.25 × what the last full
 *   collection kept (instead of up to about 2 ×) before the next one. 10 held the peak lower
 *   still but collected so often that a save took 150 ms longer to reach its PATCH; 25 costs
 *   nothing measurable. V8 only; not allowed in `NODE_OPTIONS`, so it is given on the command
 *   line.
 * - `--max-semi-space-size=8`: at most 8 MiB per semi-space of the young generation (16 by
 *   default); 4 halved the resyncs' speed, 8 does not slow them.
 */
export const DAEMON_NODE_FLAGS = [
  '--expose-gc',
  '--heap-growing-percent=25',
  '--max-semi-space-size=8',
] as const;

/**
 * The `DAEMON_NODE_FLAGS` this process was not started with: from the command line
 * (`execArgv`), or from `NODE_OPTIONS` for those Node allows there.
 */
export function missingDaemonFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)]);
  return DAEMON_NODE_FLAGS.filter((flag) => !given.has(flag));
}

/** Growth of the heap in use, as a share of what the last collection kept, that asks for one. */
export const COLLECT_GROWTH = 0.25;
/** ...and at least this much: a small live set is not collected after every edit either. */
export const COLLECT_MIN_BYTES = 32 * 1024 * 1024;

/**
 * The after-cycle hook: runs `collect` when the heap in use (`heapUsed`, read after the cycle)
 * exceeds what the last collection left by `COLLECT_GROWTH` (at least `COLLECT_MIN_BYTES`). The
 * first cycle always collects (nothing was kept yet); V8's own collections in between lower
 * the reading, so they count too.
 */
export function collectWhenGrown(collect: () => void, heapUsed: () => number): () => boolean {
  let kept: number | undefined;
  return () => {
    const used = heapUsed();
    if (kept !== undefined && used - kept < Math.max(COLLECT_MIN_BYTES, kept * COLLECT_GROWTH)) {
      // V8 collected by itself since: what it kept is the new floor.
      if (used < kept) kept = used;
      return false;
    }
    collect();
    kept = heapUsed();
    return true;
  };
}

/** A function running a full collection, or undefined when Node was not started with --expose-gc. */
export function fullGarbageCollector(): (() => void) | undefined {
  const exposed: unknown = (globalThis as { gc?: unknown }).gc;
  return typeof exposed === 'function' ? () => exposed() : undefined;
}
