/**
 * The command line's one way to read flags: `node:util` parseArgs (strict), every failure a
 * UsageError (exit 64) with the command's usage text, "did you mean" for a mistyped flag; and
 * the parsers every command shares (whole numbers, durations, rate limits, the manifest
 * directory default, `--secret-dir`).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '../duration.js';
import { ConfigError, errorMessage, UsageError } from '../errors.js';
import { HOSTED_RATE_LIMIT } from '../hosted/rate-limit.js';
import { DIGEST_KEY_ENV, DIGEST_KEY_FILE_ENV } from '../manifest/digest.js';
import { didYouMean } from '../manifest/suggest.js';
import { resolveTargets } from '../plan/targets.js';
import { parseRateLimit, type RateLimitSpec } from '../rate-limit-notation.js';
import type { CliContext, OptionsConfig } from './context.js';

/**
 * Parses a command's flags. A parse failure is a usage error of one line, with a pointer to the
 * command's --help: the parser's own advice (about `--` and positionals) and the whole usage
 * text buried the one thing that was wrong.
 */
export function parseCommandArgs<const O extends OptionsConfig>(
  argv: readonly string[],
  options: O,
  usage: string,
  { positionals = true }: { positionals?: boolean } = {},
) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: positionals, strict: true });
  } catch (err) {
    const command = /^usage: (edgesync \S+)/.exec(usage)?.[1] ?? 'edgesync';
    const message = errorMessage(err).replace(/\. To specify a positional argument[\s\S]*$/, '');
    throw new UsageError(
      `${message}${suggestFlag(err, options)}\nRun "${command} --help" for its options.`,
      { cause: err },
    );
  }
}

/** `; did you mean --max-deletes?` for an unknown option close to a known one. */
function suggestFlag(err: unknown, options: OptionsConfig): string {
  if ((err as { code?: unknown }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return '';
  const given = /'(-{1,2}[^'=\s]+)/.exec(errorMessage(err))?.[1];
  if (given === undefined) return '';
  const hint = didYouMean(given.replace(/^-+/, ''), Object.keys(options));
  return hint === '' ? '' : hint.replace(/"([^"]+)"/g, '--$1');
}

/** A whole number flag (`--concurrency 4`): digits only, at least `min`. */
export function wholeNumber(
  flag: string,
  text: string | undefined,
  fallback: number,
  min: number,
): number;
export function wholeNumber(
  flag: string,
  text: string | undefined,
  fallback: undefined,
  min: number,
): number | undefined;
export function wholeNumber(
  flag: string,
  text: string | undefined,
  fallback: number | undefined,
  min: number,
): number | undefined {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`--${flag} must be a whole number >= ${min}, got "${text}"`);
  }
  return n;
}

/** A share in (0, 1] (`--resync-budget 0.25`). */
export function shareFlag(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d*\.?\d+$/.test(text.trim()) || !(n > 0 && n <= 1)) {
    throw new UsageError(`--${flag} must be a number in (0, 1], got "${text}"`);
  }
  return n;
}

/** A duration flag (`--interval 60s`), see ./duration.ts; at least `min` milliseconds. */
export function durationFlag(
  flag: string,
  text: string | undefined,
  fallback: number,
  min = 0,
): number {
  if (text === undefined) return fallback;
  const ms = parseDuration(text, `--${flag}`);
  if (ms < min) {
    throw new UsageError(
      `--${flag} must be ${min === 1 ? 'greater than 0' : `at least ${min} ms`}`,
    );
  }
  return ms;
}

/** A `--rate-limit` choice: a budget, `none`, or nothing said (the default applies). */
export type RateLimitChoice = RateLimitSpec | 'none' | undefined;

/** `--rate-limit N/Ws` or `none` (src/rate-limit-notation.ts); undefined when the flag is absent. */
export function rateLimitFlag(text: string | undefined): RateLimitChoice {
  if (text === undefined) return undefined;
  if (text.trim() === 'none') return 'none';
  const spec = parseRateLimit(text);
  if (spec === undefined) {
    throw new UsageError(`--rate-limit must look like 120/60s (or none), got "${text}"`);
  }
  return spec;
}

/**
 * The client's budget: the flag, else `EDGESYNC_RATE_LIMIT`, else the hosted service's 120 per
 * rolling 60 s, except against the embedded in-process server (no limit there). `none` turns
 * it off.
 */
export function clientBudget(
  choice: RateLimitChoice,
  env: Readonly<Record<string, string | undefined>>,
  embedded: boolean,
): RateLimitSpec | undefined {
  let picked = choice;
  const fromEnv = env.EDGESYNC_RATE_LIMIT?.trim();
  if (picked === undefined && fromEnv !== undefined && fromEnv !== '') {
    picked = fromEnv === 'none' ? 'none' : parseRateLimit(fromEnv);
    if (picked === undefined) {
      throw new ConfigError(
        `EDGESYNC_RATE_LIMIT must look like 120/60s (or none), got "${fromEnv}"`,
      );
    }
  }
  if (picked === 'none') return undefined;
  return picked ?? (embedded ? undefined : HOSTED_RATE_LIMIT);
}

/** The manifest directory: the positional, else `EDGESYNC_DIR`, else the working directory. */
export function manifestDirArg(ctx: CliContext, positional: string | undefined): string {
  return positional ?? (ctx.env.EDGESYNC_DIR || '.');
}

/** `--secret-dir DIR` (repeatable), absolute. */
export function secretDirs(ctx: CliContext, values: readonly string[] | undefined): string[] {
  return (values ?? []).map((d) => path.resolve(ctx.cwd, d));
}

/**
 * The environment the loader reads references and the secret digest key from: `--secret-digest-key-file`
 * (absolute) wins over both variables (the loader reads the file named by
 * `EDGESYNC_SECRET_DIGEST_KEY_FILE`, src/manifest/digest.ts).
 */
export function manifestEnv(
  ctx: CliContext,
  keyFile: string | undefined,
): Readonly<Record<string, string | undefined>> {
  if (keyFile === undefined) return ctx.env;
  const { [DIGEST_KEY_ENV]: _inline, ...rest } = ctx.env;
  return { ...rest, [DIGEST_KEY_FILE_ENV]: path.resolve(ctx.cwd, keyFile) };
}

/** The environment variable `--exclude` adds to (comma-separated globs). */
const EXCLUDE_ENV = 'EDGESYNC_EXCLUDE';

/**
 * `--exclude GLOB` (repeatable) plus $EDGESYNC_EXCLUDE (comma-separated): globs relative to the
 * manifest directory. Both apply: the variable is a deployment's standing setting, the flag an
 * addition for one run. An absolute glob, or one climbing out with `..`, can never match.
 */
export function excludeGlobs(ctx: CliContext, values: readonly string[] | undefined): string[] {
  const fromEnv = (ctx.env[EXCLUDE_ENV] ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  const globs = [...(values ?? []), ...fromEnv];
  for (const glob of globs) {
    if (glob.trim() === '') throw new UsageError('--exclude needs a glob, e.g. "k8s/**"');
    if (path.isAbsolute(glob) || glob.split('/').includes('..')) {
      throw new UsageError(
        `--exclude ${glob}: globs are relative to the manifest directory (e.g. "k8s/**")`,
      );
    }
  }
  return globs;
}

/**
 * `--target ADDRESS` (repeatable, plan and apply): the resources to plan, or undefined for all
 * (src/plan/targets.ts). Not with a saved plan: its file is what it is.
 */
export function targetFlag(values: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const resolved = resolveTargets(values);
  if (!resolved.ok) throw new UsageError(resolved.problem);
  return resolved.targets;
}
