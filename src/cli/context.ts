/**
 * What a command receives from `main`: its arguments, the streams and the environment.
 * Commands never touch `process` directly, so they can be run in-process by tests.
 */
import type { Readable, Writable } from 'node:stream';
import type { ParseArgsConfig } from 'node:util';
import type { ValueMask } from '../manifest/secrets.js';
import type { WriteFs } from './write-set.js';

/** A command's flags, as node:util parseArgs declares them (./flags.ts parses with them). */
export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

export interface CliContext {
  /** Arguments after the command name. */
  readonly argv: readonly string[];
  /** Machine output (JSON, plans for piping). */
  readonly stdout: Writable & { isTTY?: boolean };
  /** People's output: progress, summaries, diagnostics. */
  readonly stderr: Writable & { isTTY?: boolean };
  /**
   * Where a command may ask a person (apply's confirmation). Absent: no one to ask, as when run
   * in-process or unattended; a command then needs its explicit flag (`--yes`).
   */
  readonly stdin?: Readable & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Fires on SIGINT/SIGTERM for long-running commands. */
  readonly signal: AbortSignal;
  /**
   * Set by `main`: a command sets the secret values it learns (from the manifests and the live
   * account) here, and `main` masks the error line of a failed command with them.
   */
  readonly mask?: ValueMask | undefined;
  /**
   * The file-system calls that write a command's output files (`import`, `migrate`); tests
   * inject a failing one (a full disk). Default: Node's.
   */
  readonly writeFs?: WriteFs | undefined;
}

/** A command: a plain async function returning its exit code. */
export type Command = (ctx: CliContext) => Promise<number>;

export interface CommandModule {
  readonly run: Command;
  /** One line for `edgesync --help`. */
  readonly summary: string;
  /** Its `--help` text, its options rendered from the flag table (./flag-help.ts). */
  readonly USAGE: string;
  /** Its flags as node:util parseArgs takes them, generated from the flag table (./flag-table.ts). */
  readonly OPTIONS: OptionsConfig;
}
