/**
 * `edgesync apply [DIR | PLANFILE] [options]`: computes the plan (or recomputes a saved one and
 * refuses it when stale), shows it on stderr, asks for confirmation on a terminal unless
 * `--yes`, executes it, then observes again and reports `converged` or the residual drift. The
 * engine's run does all of that (src/engine/run.ts); this command parses the flags, hands the
 * run its checks and its confirmation, and renders how it ended.
 *
 * Exit codes: 0 converged (or nothing to do); 1 invalid manifests, guard refusal, stale plan,
 * declined or impossible confirmation, failed operations, or residual drift; 64 usage errors.
 * Without a terminal and without `--yes`, nothing is applied (like `terraform apply` without
 * `-auto-approve` in CI): an unattended apply must say so explicitly.
 */

import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { ApiClient } from '../../api/index.js';
import {
  type ApplyResultJson,
  appliedResult,
  type Budget,
  DEFAULT_CONCURRENCY,
  formatDuration,
  notAppliedResult,
  pipeline,
  progressLine,
  progressSteps,
  type RunEnding,
  renderApplyResult,
  run as runEngine,
  summarize,
} from '../../engine/index.js';
import {
  EdgesyncError,
  errorMessage,
  ManifestError,
  StalePlanError,
  UsageError,
} from '../../errors.js';
import { createLogger, type Logger, parseLogLevel, silentLogger } from '../../log.js';
import { formatDiagnostic, invalidSetLine } from '../../manifest/diagnostics.js';
import { heldCredentials } from '../../manifest/own-credentials.js';
import { createValueMask, maskJson, type ValueMask } from '../../manifest/secrets.js';
import {
  DEFAULT_MAX_DELETES,
  operationCount,
  PLAN_FORMAT_VERSION,
  type Plan,
  type PlanFile,
  planFileSchema,
  renderText,
} from '../../plan/index.js';
import { createAccountClient, requireApiConfig } from '../client.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import {
  clientBudget,
  excludeGlobs,
  manifestDirArg,
  manifestEnv,
  parseCommandArgs,
  type RateLimitChoice,
  rateLimitFlag,
  secretDirs,
  targetFlag,
  wholeNumber,
} from '../flags.js';
import { chosenOwner, requireOwner } from '../owner.js';

export const summary = 'apply the changes: make the live account match the manifests';

export const USAGE = commandUsage('apply', {
  synopsis: 'apply [DIR | PLANFILE] [options]',
  about: `
Computes the plan for the manifests under DIR (default: $EDGESYNC_DIR, else the current
directory), shows it, asks for confirmation, applies it, and checks that the live state
converged. Given a plan file written by "edgesync plan --out", recomputes the plan and refuses
it if the live state or the manifests changed since.
`,
  footer: `
exit codes: 0 converged or nothing to do, 1 error or not converged, 64 usage error
`,
});

interface Options {
  /** DIR or PLANFILE as given; undefined: --dir, else $EDGESYNC_DIR, else the current directory. */
  readonly target: string | undefined;
  readonly yes: boolean;
  readonly owner: string | undefined;
  readonly concurrency: number;
  readonly rateLimit: RateLimitChoice;
  readonly maxDeletes: number;
  readonly allowEmpty: boolean;
  /** False: `--no-wait-for-domains` (create what waits for a domain that is not ready). */
  readonly waitForReady: boolean;
  /** `--target`: the only resources to plan and apply (all without it). */
  readonly targets: ReadonlySet<string> | undefined;
  readonly dir: string | undefined;
  readonly secretDirs: string[];
  /** `--secret-digest-key-file`: the key of the secrets' digests (else the variables). */
  readonly secretDigestKeyFile: string | undefined;
  readonly exclude: string[];
  readonly json: boolean;
  readonly apiUrl: string | undefined;
  readonly apiKey: string | undefined;
}

export async function run(ctx: CliContext): Promise<number> {
  const options = parseOptions(ctx);
  if (options === 'help') {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const api = requireApiConfig(
    { apiUrl: options.apiUrl, apiKey: options.apiKey },
    ctx.env,
    ctx.cwd,
  );
  const tty = ctx.stderr.isTTY === true;
  // The secret values, known once the manifests are read and the account listed: masked in
  // every line, in the API's messages and in the error line.
  const mask = ctx.mask ?? createValueMask();
  // On a terminal the progress line speaks; elsewhere one JSON log line per operation.
  const logger: Logger = tty
    ? silentLogger()
    : createLogger({
        level: parseLogLevel(ctx.env.EDGESYNC_LOG_LEVEL, 'EDGESYNC_LOG_LEVEL'),
        destination: { write: (line: string) => ctx.stderr.write(mask.apply(line)) },
      });
  const budget = clientBudget(options.rateLimit, ctx.env, false);
  const client = createAccountClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    logger,
    budget,
    mask: mask.apply,
  });
  try {
    return await applyWith(ctx, options, client, logger, tty, api.apiKey, budget, mask);
  } finally {
    await client.close();
  }
}

/** How `apply` speaks: people's lines on stderr (masked), and the JSON result with `--output json`. */
interface Voice {
  readonly say: (text: string) => void;
  readonly report: (result: ApplyResultJson) => void;
}

function voiceOf(
  ctx: CliContext,
  options: Options,
  mask: ValueMask,
  secrets: () => readonly string[],
): Voice {
  return {
    // Every people's line after the manifests are read goes through the mask too.
    say: (text) => ctx.stderr.write(mask.apply(text)),
    report: (result) => {
      if (options.json) ctx.stdout.write(maskJson(renderApplyResult(result), secrets()));
    },
  };
}

async function applyWith(
  ctx: CliContext,
  options: Options,
  client: ApiClient,
  logger: Logger,
  tty: boolean,
  fingerprintKey: string,
  budget: Budget | undefined,
  mask: ValueMask,
): Promise<number> {
  let secrets: readonly string[] = [];
  const voice = voiceOf(ctx, options, mask, () => secrets);
  const { savedPlan, dir, owner } = await applyTarget(ctx, options);
  if (savedPlan !== undefined && options.targets !== undefined) {
    throw new UsageError(
      '--target does not go with a saved plan: it is applied whole (apply DIR --target ADDRESS plans and applies the targeted resources)',
    );
  }
  const color = tty && ctx.env.NO_COLOR === undefined;
  const progress = progressOf(voice, tty, budget);
  const planOptions = {
    owner: owner.id,
    maxDeletes: options.maxDeletes,
    allowEmpty: options.allowEmpty,
    waitForReady: options.waitForReady,
    targets: options.targets,
  };
  // The engine's run: load + observe + plan (+ fingerprints), assess, confirm, apply, verify.
  const ending = await endingOrReported(ctx, voice, () =>
    runEngine<never>({
      prepare: pipeline({
        dir,
        client,
        owner: owner.id,
        fingerprintKey,
        allowEmpty: options.allowEmpty,
        waitForReady: options.waitForReady,
        maxDeletes: options.maxDeletes,
        targets: options.targets,
        env: manifestEnv(ctx, options.secretDigestKeyFile),
        secretDirs: secretDirs(ctx, options.secretDirs),
        credentials: heldCredentials({ apiKey: fingerprintKey }),
        exclude: options.exclude,
        signal: ctx.signal,
      }),
      client,
      maxDeletes: options.maxDeletes,
      allowEmpty: options.allowEmpty,
      planOptions: () => planOptions,
      mask,
      hold: async (assessment) => {
        secrets = assessment.values;
        if (savedPlan !== undefined) checkFresh(savedPlan, assessment.prepared.plan, dir);
        voice.say(renderText(assessment.show(), { color }));
        voice.say('\n');
        return undefined;
      },
      confirm: (assessment) => confirm(ctx, options.yes, operationCount(assessment.prepared.plan)),
      signal: ctx.signal,
      concurrency: options.concurrency,
      logger,
      onProgress: progress.onProgress,
    }).finally(() => progress.end()),
  );
  return ending === undefined ? ExitCode.error : rendered(ctx, voice, ending);
}

/** How the run ended, said on stderr (and as JSON with `--output json`), and its exit code. */
function rendered(ctx: CliContext, voice: Voice, ending: RunEnding<never>): number {
  const { verdict, prepared } = ending.run;
  const operations = operationCount(prepared.plan);
  switch (ending.ending) {
    case 'refused':
      voice.say(
        `Refusing to apply (a safety guard blocked part of the plan; nothing was written):\n${verdict.refusals.map((r) => `  - ${r}`).join('\n')}\n`,
      );
      voice.report(
        notAppliedResult('refused', {
          operations,
          refusals: verdict.refusals,
          conflicts: verdict.conflicts,
        }),
      );
      return ExitCode.error;
    case 'blocked':
      ctx.stderr.write(
        'Nothing to apply, but the live state cannot match the manifests (see the blocked resources above).\n',
      );
      voice.report(notAppliedResult('blocked', { conflicts: verdict.conflicts }));
      return ExitCode.error;
    case 'converged':
      ctx.stderr.write('converged: nothing to apply.\n');
      voice.report(notAppliedResult('converged'));
      return ExitCode.ok;
    case 'declined':
      ctx.stderr.write(`${ending.reason}\n`);
      voice.report(notAppliedResult('not_confirmed', { operations, reason: ending.reason }));
      return ExitCode.error;
    case 'applied': {
      const { outcome } = ending.applied;
      voice.say(summarize(outcome));
      voice.report(appliedResult(outcome));
      return outcome.converged ? ExitCode.ok : ExitCode.error;
    }
    default:
      // `planned` and `held`: this run confirms, and holds nothing back.
      throw new EdgesyncError('ES_INTERNAL', `apply ended ${ending.ending}`);
  }
}

/**
 * What `apply TARGET` applies: a directory, or a saved plan with its manifest directory (`--dir`,
 * else the one `plan --out` recorded, else the default) and the owner it was planned for.
 */
async function applyTarget(ctx: CliContext, options: Options) {
  // `apply --dir DIR` alone applies DIR: the cut-over's recovery advice says exactly that.
  const target = path.resolve(
    ctx.cwd,
    options.target ?? options.dir ?? manifestDirArg(ctx, undefined),
  );
  const savedPlan = await readPlanFile(target);
  if (savedPlan === undefined) await sameDirectory(ctx, options, target);
  else if (options.target === undefined && options.dir !== undefined) {
    throw new UsageError(
      `--dir ${options.dir} is a file: --dir takes the manifest directory; give a plan file as the argument (edgesync apply PLANFILE --dir DIR)`,
    );
  }
  const dir =
    savedPlan === undefined
      ? target
      : options.dir !== undefined
        ? path.resolve(ctx.cwd, options.dir)
        : savedPlan.manifest_dir !== undefined
          ? // Recorded by `plan --out`, relative to the plan file.
            path.resolve(path.dirname(target), savedPlan.manifest_dir)
          : path.resolve(ctx.cwd, manifestDirArg(ctx, undefined));
  // A saved plan names the owner `plan --out` was given on purpose: applying it needs no repeat,
  // and it outranks the standing settings (a different --owner makes the plan stale).
  const owner = requireOwner(
    options.owner === undefined && savedPlan !== undefined
      ? { id: savedPlan.owner, from: 'the saved plan' }
      : await chosenOwner(options.owner, ctx.env, dir),
    'apply',
    dir,
  );
  return { savedPlan, dir, owner };
}

/**
 * `apply DIR --dir OTHER`: two manifest directories, and applying either one could delete what
 * the other declares; refused rather than guessed. The same directory twice is no conflict.
 */
async function sameDirectory(ctx: CliContext, options: Options, target: string): Promise<void> {
  if (options.target === undefined || options.dir === undefined) return;
  const real = (p: string) => realpath(p).catch(() => p);
  const other = path.resolve(ctx.cwd, options.dir);
  if ((await real(other)) === (await real(target))) return;
  throw new UsageError(
    `apply ${options.target} --dir ${options.dir} names two manifest directories: give one (--dir is for a PLANFILE's directory, or on its own)`,
  );
}

/** Invalid manifests: every diagnostic, the `invalid` result, and undefined (nothing written). */
async function endingOrReported<T>(
  ctx: CliContext,
  voice: Voice,
  runIt: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await runIt();
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    for (const d of err.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
    ctx.stderr.write(
      `${invalidSetLine(err.diagnostics, 'nothing was applied (no write happens while any manifest is invalid)')}\n`,
    );
    voice.report(notAppliedResult('invalid', { diagnostics: err.diagnostics }));
    return undefined;
  }
}

/**
 * Progress: an updating line on a terminal; otherwise a line per tenth done. Both carry an ETA
 * computed from the client's budget when it has one (a long cold apply under 120/60s).
 */
function progressOf(voice: Voice, tty: boolean, budget: Budget | undefined) {
  const line = tty ? progressLine({ write: voice.say }, budget) : undefined;
  const steps =
    line === undefined
      ? progressSteps(budget, (done, total, eta) =>
          voice.say(
            `progress: ${done}/${total} operations${eta === undefined ? '' : `, ETA ${formatDuration(eta)} at the API budget`}\n`,
          ),
        )
      : undefined;
  return { onProgress: line?.update ?? steps, end: () => line?.end() };
}

async function confirm(ctx: CliContext, yes: boolean, operations: number): Promise<true | string> {
  if (yes) return true;
  const stdin = ctx.stdin;
  if (stdin?.isTTY !== true || ctx.stderr.isTTY !== true) {
    return 'Not applied: not on a terminal, so no one can confirm. Pass --yes to apply without asking.';
  }
  const rl = createInterface({ input: stdin, output: ctx.stderr });
  try {
    const answer = await rl.question(
      `Apply these changes (${operations} operation${operations === 1 ? '' : 's'})? Only "yes" is accepted. (yes/no) `,
      { signal: ctx.signal },
    );
    return answer.trim() === 'yes' ? true : 'Apply cancelled.';
  } catch {
    return 'Apply cancelled.';
  } finally {
    rl.close();
  }
}

/** A saved plan, when the target is a file (not a manifest directory). */
async function readPlanFile(target: string): Promise<PlanFile | undefined> {
  let isFile = false;
  try {
    isFile = (await stat(target)).isFile();
  } catch {
    return undefined; // not there: loadManifests reports the missing directory
  }
  if (!isFile) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(await readFile(target, 'utf8'));
  } catch (err) {
    // Not JSON.parse's message: it quotes the file's first bytes, and a secret file given by
    // mistake would be printed.
    const reason = err instanceof SyntaxError ? 'not valid JSON' : errorMessage(err);
    throw new UsageError(`${target} is not a plan file: ${reason}`, { cause: err });
  }
  const parsed = planFileSchema.safeParse(data);
  if (!parsed.success) {
    const version = (data as { format_version?: unknown } | null)?.format_version;
    if (typeof version === 'number' && version !== PLAN_FORMAT_VERSION) {
      throw new UsageError(
        `${target} has plan format_version ${version}; this edgesync reads ${PLAN_FORMAT_VERSION}: make the plan again with "edgesync plan --out"`,
      );
    }
    throw new UsageError(
      `${target} is not an edgesync plan file of format_version ${PLAN_FORMAT_VERSION}`,
    );
  }
  if (parsed.data.fingerprint === undefined) {
    throw new UsageError(`${target} carries no fingerprint; write it with "edgesync plan --out"`);
  }
  return parsed.data;
}

function checkFresh(saved: PlanFile, fresh: Plan, dir: string): void {
  const a = saved.fingerprint;
  const b = fresh.fingerprint;
  if (a === undefined || b === undefined) {
    throw new StalePlanError('cannot compare the saved plan with the current state');
  }
  const stale: string[] = [];
  if (a.live !== b.live) stale.push('the live state');
  if (a.manifests !== b.manifests) stale.push('the manifests');
  if (saved.owner !== fresh.owner) stale.push('the owner');
  if (stale.length > 0) {
    // The plan format records no path: a plan made for another directory looks stale too.
    const where = a.manifests === b.manifests ? '' : ` (manifests read from ${dir}; --dir sets it)`;
    throw new StalePlanError(
      `the saved plan is stale: ${stale.join(' and ')} changed since it was made; run "edgesync plan" again${where}`,
    );
  }
}

function parseOptions(ctx: CliContext): Options | 'help' {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) return 'help';
  if (positionals.length > 1)
    throw new UsageError(
      `expected at most one DIR or PLANFILE\nRun "edgesync apply --help" for its options.`,
    );
  return {
    target: positionals[0],
    yes: values.yes === true,
    owner: values.owner,
    concurrency: wholeNumber('concurrency', values.concurrency, DEFAULT_CONCURRENCY, 1),
    rateLimit: rateLimitFlag(values['rate-limit']),
    maxDeletes: wholeNumber('max-deletes', values['max-deletes'], DEFAULT_MAX_DELETES, 0),
    allowEmpty: values['allow-empty'] === true,
    waitForReady: values['no-wait-for-domains'] !== true,
    targets: targetFlag(values.target),
    dir: values.dir,
    secretDirs: values['secret-dir'] ?? [],
    secretDigestKeyFile: values['secret-digest-key-file'],
    exclude: excludeGlobs(ctx, values.exclude),
    json: outputJson(values.output),
    apiUrl: values['api-url'],
    apiKey: values['api-key'],
  };
}

export const OPTIONS = commandOptions('apply');

/** `--output text|json` (json: the result on stdout, see src/apply/report.ts). */
function outputJson(text: string | undefined): boolean {
  if (text === undefined || text === 'text') return false;
  if (text === 'json') return true;
  throw new UsageError(`--output must be "text" or "json", got "${text}"`);
}
