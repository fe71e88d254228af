/**
 * How an apply talks to people: the progress line on a terminal, and the summary after it.
 * Text only, built from the executor's events and results, which carry addresses, methods, IDs
 * and statuses, never a body: nothing here can print a secret.
 */
import type { Writable } from 'node:stream';
import { escapeControl } from '../escape.js';
import type { Blocked } from '../plan/model.js';
import type { CycleOutcome } from './cycle.js';
import type { ProgressEvent } from './executor.js';

/** A single, updating `[done/total] address` line (terminals only). */
export function progressLine(out: Writable): {
  update: (e: ProgressEvent) => void;
  end: () => void;
} {
  let shown = false;
  return {
    update(e) {
      const mark = e.outcome === 'failed' ? ' (failed)' : '';
      out.write(`\r\x1b[2K[${e.done}/${e.total}] ${escapeControl(e.address)}${mark}`);
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
  lines.push(...blockedLines('Kept (protected, manifest removed):', outcome.kept));
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
