/**
 * The single exit-code map (Terraform-compatible): only `main` turns these into process.exit.
 */
import { ManifestDirError, ManifestError, UsageError } from '../errors.js';

export const ExitCode = {
  /** Success, or nothing to change. */
  ok: 0,
  /** Any error. */
  error: 1,
  /** `plan --detailed-exitcode`: changes are present. */
  changes: 2,
  /** Command-line usage error (sysexits EX_USAGE). */
  usage: 64,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof UsageError) return ExitCode.usage;
  if (err instanceof ManifestError || err instanceof ManifestDirError) return ExitCode.error;
  return ExitCode.error;
}
