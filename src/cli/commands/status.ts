/**
 * `edgesync status [--url URL] [-o text|json]`: a running daemon's state, read from its
 * `GET /status`, printed as `flux get` and `argocd app get` print theirs: the daemon (directory,
 * revision, readiness, mode, the last cycle and the last error), one line per managed resource
 * with its sync state and why it is not in sync (field paths, never values), then the manifest
 * errors with file:line:column. The resources come from `GET /status/resources`, a page at a
 * time. `-o json` prints the `/status` document itself (versioned by its `format_version`; the
 * resources counted by kind and state). Exit 0 when the daemon answered, 1 when it could not be
 * reached.
 */
import { UsageError } from '../../errors.js';
import { escapeControl } from '../../escape.js';
import type { CliContext } from '../context.js';
import {
  type DaemonStatusAnswer,
  daemonTarget,
  fetchResources,
  fetchStatus,
  type ResourcePageAnswer,
  shownUrl,
} from '../daemon-client.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { parseCommandArgs } from '../flags.js';

export const summary = "show a running daemon's sync state per resource, drift and errors";

export const USAGE = commandUsage('status', {
  synopsis: 'status [options]',
  about: `
Shows a running daemon's state (GET /status): its directory and revision, readiness, mode, the
last cycle and error, each managed resource's sync state (in_sync, out_of_sync, conflict,
blocked, suspended, error) with the fields that differ, and manifest errors with file:line.
`,
});

export const OPTIONS = commandOptions('status');

export async function run(ctx: CliContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS, USAGE, { positionals: false });
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    throw new UsageError(`--output must be "text" or "json", got "${output}"`);
  }
  const target = await daemonTarget(ctx, values);
  const { raw, status } = await fetchStatus(target);
  if (output === 'json') ctx.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);
  else {
    const resources = await fetchResources(target);
    ctx.stdout.write(renderStatusText(status, resources, shownUrl(target.base)));
  }
  return ExitCode.ok;
}

/** Rows as columns padded to their widest cell (the last column unpadded). */
function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

const yesNo = (b: boolean) => (b ? 'True' : 'False');

/** The text form: the daemon, its resources, its errors. Pure; every daemon-given text escaped. */
export function renderStatusText(
  s: DaemonStatusAnswer,
  resources: ResourcePageAnswer['resources'],
  where: string,
): string {
  const last = s.last_reconcile;
  const lastLine =
    last === null
      ? 'none yet'
      : `${last.result} at ${last.at} (${last.reason}, ${last.duration_ms} ms, ${last.writes} write${last.writes === 1 ? '' : 's'}${last.out_of_sync === null ? '' : `, ${last.out_of_sync} out of sync`})`;
  const head = table([
    ['Daemon:', where],
    [
      'Directory:',
      s.dir + (s.resolved_dir !== null && s.resolved_dir !== s.dir ? ` -> ${s.resolved_dir}` : ''),
    ],
    ['Revision:', s.revision ?? '-'],
    ['Ready:', yesNo(s.ready)],
    [
      'Mode:',
      `${s.mode}${s.suspended ? ' (suspended: "edgesync resume" lets it write again)' : ''}`,
    ],
    ['Last cycle:', `${lastLine}${s.in_flight ? '; a cycle is running' : ''}`],
    ['Last success:', s.last_success_at ?? '-'],
    ['Last error:', s.last_error === null ? '-' : `${s.last_error.message} (${s.last_error.at})`],
    [
      'Next resync:',
      `${s.next_resync_at ?? '-'}${s.consecutive_failures > 0 ? ` (${s.consecutive_failures} failure${s.consecutive_failures === 1 ? '' : 's'} in a row, backing off ${s.backoff_ms} ms)` : ''}`,
    ],
  ]);
  const lines = [...head, ''];
  if (resources.length === 0) {
    lines.push('No managed resources known yet (no cycle has planned).');
  } else {
    const drift = resources.filter((r) => r.state !== 'in_sync').length;
    lines.push(
      ...table([
        ['KIND', 'ADDRESS', 'ID', 'STATE', 'REASON'],
        ...resources.map((r) => [
          r.kind,
          r.address,
          r.id ?? '-',
          r.state,
          [r.reason ?? '', r.fields.length > 0 ? `(${r.fields.join(', ')})` : '']
            .filter((x) => x !== '')
            .join(' '),
        ]),
      ]),
      '',
      `${resources.length} resource${resources.length === 1 ? '' : 's'}: ${resources.length - drift} in sync, ${drift} not`,
    );
  }
  const files = Object.keys(s.diagnostics_by_file).sort();
  if (files.length > 0) {
    lines.push('', 'Manifest errors:');
    for (const file of files) {
      for (const d of s.diagnostics_by_file[file] ?? []) {
        const severity = d.severity === 'warning' ? 'warning: ' : '';
        lines.push(
          `  ${file}:${d.line}:${d.column}: ${severity}${d.path === '' ? '' : `${d.path}: `}${d.message}`,
        );
      }
    }
  }
  if (s.warnings.length > 0) {
    lines.push('', 'Warnings:', ...s.warnings.map((w) => `  ${w}`));
  }
  return `${lines.map((l) => escapeControl(l)).join('\n')}\n`;
}
