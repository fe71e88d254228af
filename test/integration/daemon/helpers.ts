/**
 * Shared helpers for the daemon's integration tests: temp directories, bounded polling, a
 * recording fake reconcile step, and a log capture.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import { EMPTY_SUMMARY, type ReconcileReport } from '../../../src/daemon/types.js';
import type { ReconcileInput } from '../../../src/engine/index.js';

export async function makeTempDir(prefix: string): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), `edgesync-${prefix}-`)));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
}

/** The one bounded poll, shared with the end-to-end tests and the benchmarks. */
export { waitFor } from '../../../bench/harness.js';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface RecordedCall {
  readonly dir: string;
  readonly revision: string | undefined;
  readonly reason: ReconcileInput['reason'];
  readonly at: number;
  readonly signal: AbortSignal;
  readonly generation: number | undefined;
  readonly changed: readonly string[] | undefined;
}

export const CONVERGED: ReconcileReport = {
  result: 'converged',
  summary: { ...EMPTY_SUMMARY, noop: 3 },
  writes: 0,
  managed: { tls_edge: 1, https_edge: 2, bot_user: 0, cloud_endpoint: 0 },
  outOfSync: 0,
};

/** A fake reconcile step that records its calls; `respond` decides each answer. */
export function recorder(
  respond: (
    input: ReconcileInput,
    index: number,
  ) => Promise<ReconcileReport> | ReconcileReport = () => CONVERGED,
) {
  const calls: RecordedCall[] = [];
  const reconcile = async (input: ReconcileInput): Promise<ReconcileReport> => {
    calls.push({
      dir: input.dir,
      revision: input.revision,
      reason: input.reason,
      at: Date.now(),
      signal: input.signal,
      generation: input.generation,
      changed: input.changed,
    });
    return respond(input, calls.length - 1);
  };
  return { calls, reconcile };
}

/** A pino destination keeping every line, parsed. */
export function logCapture(): { destination: DestinationStream; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    destination: {
      write(chunk: string) {
        for (const line of chunk.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      },
    },
  };
}

/** A promise plus its resolver, to hold a fake reconcile until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
