/**
 * How an apply talks to people: the progress line on a terminal, and the summary after it.
 * Text only, built from the executor's events and results, which carry addresses, methods, IDs
 * and statuses, never a body: nothing here can print a secret.
 */
import { escapeControl } from '../escape.js';
import type { Blocked } from '../plan/model.js';
import type { CycleOutcome } from './cycle.js';
import type { ProgressEvent } from './executor.js';

/** Requests per window: the client's budget, when it has one. */
export interface Budget {
  readonly limit: number;
  readonly windowMs: number;
}

/** `1h02m`, `3m20s`, `45s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

/**
 * The time the remaining operations need at the budget's pace (each is one request; the
 * verification reads add one per touched resource, not counted). Undefined without a budget.
 */
export function etaMs(remaining: number, budget: Budget | undefined): number | undefined {
  if (budget === undefined) return undefined;
  return (remaining * budget.windowMs) / budget.limit;
}

/** Calls `emit` at each tenth of the operations done, with the ETA the budget gives. */
export function progressSteps(
  budget: Budget | undefined,
  emit: (done: number, total: number, eta: number | undefined) => void,
): (e: ProgressEvent) => void {
  let lastTenth = 0;
  return (e) => {
    const tenth = Math.floor((10 * e.done) / Math.max(1, e.total));
    if (tenth <= lastTenth || e.total < 20) return;
    lastTenth = tenth;
    emit(e.done, e.total, etaMs(e.total - e.done, budget));
  };
}

/** A single, updating `[done/total] address` line (terminals only), with the ETA of a budget. */
export function progressLine(
  out: { write(text: string): unknown },
  budget?: Budget,
): {
  update: (e: ProgressEvent) => void;
  end: () => void;
} {
  let shown = false;
  return {
    update(e) {
      const mark = e.outcome === 'failed' ? ' (failed)' : '';
      const eta = etaMs(e.total - e.done, budget);
      const tail = eta === undefined || e.done === e.total ? '' : ` · ETA ${formatDuration(eta)}`;
      out.write(`\r\x1b[2K[${e.done}/${e.total}]${tail} ${escapeControl(e.address)}${mark}`);
      shown = true;
    },
    end() {
      if (shown) out.write('\r\x1b[2K');
      shown = false;
    },
  };
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function blockedLines(title: string, list: readonly Blocked[]): string[] {
  if (list.length === 0) return [];
  return [title, ...list.map((b) => `  ${escapeControl(`${b.address}: ${b.reason}`)}`)];
}

/** The report after an apply: counts, errors, notes, then `converged` or the residual drift. */
export function summarize(outcome: CycleOutcome): string {
  const r = outcome.result;
  const lines: string[] = [
    `Apply: ${plural(r.total, 'operation')}: ${r.done} done (${plural(r.writes, 'write')}), ${r.failed} failed, ${r.skipped} skipped.`,
  ];
  for (const e of r.errors) lines.push(`  error: ${escapeControl(e.message)}`);
  for (const m of r.messages) lines.push(`  note: ${escapeControl(m)}`);
  lines.push(
    ...blockedLines(
      'Kept as they are (protected with the manifest removed, or suspend: true):',
      outcome.kept,
    ),
  );
  lines.push(
    ...blockedLines('Not attempted (held by an edge edgesync does not own):', outcome.conflicts),
  );
  if (outcome.verifyError !== undefined) {
    lines.push(`Not verified: ${escapeControl(outcome.verifyError)}`);
  } else if (outcome.converged) {
    lines.push('converged: the live state matches the manifests.');
  } else if (outcome.residual !== undefined) {
    const { changes, blocked } = outcome.residual;
    const n = changes.length + blocked.length;
    lines.push(
      `Not converged: ${plural(n, 'difference')} ${n === 1 ? 'remains' : 'remain'} (the next run retries them):`,
    );
    for (const c of changes)
      lines.push(`  ${c.action} ${escapeControl(`${c.address}: ${c.reason}`)}`);
    for (const b of blocked) lines.push(`  blocked ${escapeControl(`${b.address}: ${b.reason}`)}`);
  }
  return `${lines.join('\n')}\n`;
}
