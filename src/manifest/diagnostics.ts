/**
 * Diagnostics: the one text form (`file:line:column: field.path: message`), deterministic order,
 * and the versioned JSON form of `edgesync validate --output json`. Pure.
 */
import { compareCodeUnits } from '../compare.js';
import type { Diagnostic } from '../errors.js';
import { escapeControl } from '../escape.js';

export type { Diagnostic };

export const DIAGNOSTICS_FORMAT_VERSION = 1;

/** `edges/shop.yaml:12:18: routes[0].oauth.provider: exactly one provider must be set` */
export function formatDiagnostic(d: Diagnostic): string {
  const path = d.path === '' ? '' : `${d.path}: `;
  const severity = d.severity === 'warning' ? 'warning: ' : '';
  // File names, paths and messages quote the user's text: escaped, so none can forge a line.
  return escapeControl(`${d.file}:${d.line}:${d.column}: ${severity}${path}${d.message}`);
}

/** Sorted by file, line, column, then path and message; exact duplicates removed. */
/**
 * The closing line's count of findings, in the same words wherever an invalid set stops a
 * command (validate, plan, apply, migrate) or a daemon cycle: "2 errors in 1 file", with the
 * warnings counted apart when there are any.
 */
export function diagnosticsSummary(list: readonly Diagnostic[]): string {
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  const errors = list.filter((d) => d.severity === 'error');
  const warnings = list.length - errors.length;
  const files = new Set((errors.length > 0 ? errors : list).map((d) => d.file)).size;
  const counted = `${plural(errors.length, 'error')} in ${plural(files, 'file')}`;
  return warnings === 0 ? counted : `${counted} (and ${plural(warnings, 'warning')})`;
}

/** What an invalid set stops, said after the summary: "...: the manifests are invalid, so ...". */
export function invalidSetLine(list: readonly Diagnostic[], consequence?: string): string {
  const line = `${diagnosticsSummary(list)}: the manifests are invalid`;
  return consequence === undefined ? line : `${line}, so ${consequence}`;
}

export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  const sorted = [...list].sort(
    (a, b) =>
      compareCodeUnits(a.file, b.file) ||
      a.line - b.line ||
      a.column - b.column ||
      compareCodeUnits(a.path, b.path) ||
      compareCodeUnits(a.message, b.message),
  );
  return sorted.filter((d, i) => {
    const prev = sorted[i - 1];
    return (
      prev === undefined ||
      prev.file !== d.file ||
      prev.line !== d.line ||
      prev.column !== d.column ||
      prev.path !== d.path ||
      prev.message !== d.message
    );
  });
}

/** The JSON shape of one diagnostic (stable field order). */
export function diagnosticToJson(d: Diagnostic): {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
  severity: 'error' | 'warning';
} {
  return {
    file: d.file,
    line: d.line,
    column: d.column,
    path: d.path,
    message: d.message,
    severity: d.severity,
  };
}
