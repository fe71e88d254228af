/**
 * `edgesync plan [DIR] [options]`: the dry run. Loads the manifests, lists the live account,
 * and prints what `apply` would do: text like `terraform plan` (the default), the versioned
 * JSON plan, or Markdown for a pull-request comment, all on stdout (the plan is this command's
 * product, as with terraform); diagnostics and notes go to stderr. `--out FILE` also saves the
 * masked plan with the fingerprints of the live state and manifests it saw, for `apply FILE`.
 * The engine's run makes, assesses and masks the plan (src/engine/run.ts: a run without a
 * confirmation only plans); this command parses the flags and renders what it planned.
 *
 * Exit codes: 0 nothing to do (and without --detailed-exitcode, any successful plan); 2 with
 * --detailed-exitcode when there are changes or blocked resources; 1 any error (invalid
 * manifests, unknown directory, API or listing failure); 64 usage errors.
 */

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type Assessment,
  checkMaxDeletes,
  pipeline,
  run as runEngine,
} from '../../engine/index.js';
import { ConfigError, errorMessage, ManifestError, UsageError } from '../../errors.js';
import {
  DIAGNOSTICS_FORMAT_VERSION,
  diagnosticToJson,
  formatDiagnostic,
  invalidSetLine,
} from '../../manifest/diagnostics.js';
import { heldCredentials } from '../../manifest/own-credentials.js';
import { createValueMask } from '../../manifest/secrets.js';
import type { MaskedPlan } from '../../plan/mask.js';
import type { Plan } from '../../plan/model.js';
import { renderJson } from '../../plan/render/json.js';
import { renderMarkdown } from '../../plan/render/markdown.js';
import { renderText } from '../../plan/render/text.js';
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
  rateLimitFlag,
  secretDirs,
  targetFlag,
  wholeNumber,
} from '../flags.js';
import { chosenOwner, howToChooseOwner, ownerOrDefault, requireOwner } from '../owner.js';

export const summary = 'show what apply would change (dry run), as text, JSON or Markdown';

export const USAGE = commandUsage('plan', {
  synopsis: 'plan [DIR] [options]',
  about: `
Compares the manifests under DIR (default: $EDGESYNC_DIR, else the current directory) with the
live account and shows the changes apply would make. Nothing is written to the API.
`,
  footer: `
exit codes: 0 no changes, 2 changes (with --detailed-exitcode), 1 error, 64 usage error
`,
});

const OUTPUTS = ['text', 'json', 'markdown'] as const;
type Output = (typeof OUTPUTS)[number];

export const OPTIONS = commandOptions('plan');

type PlanValues = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const output = (values.output ?? 'text') as Output;
  if (!OUTPUTS.includes(output)) {
    throw new UsageError(`--output must be one of ${OUTPUTS.join(', ')}, got "${values.output}"`);
  }
  if (positionals.length > 1)
    throw new UsageError(`expected at most one DIR\nRun "edgesync plan --help" for its options.`);
  const maxDeletes = wholeNumber('max-deletes', values['max-deletes'], undefined, 0);
  const targets = targetFlag(values.target);
  if (targets !== undefined && values.out !== undefined) {
    throw new UsageError(
      '--target and --out do not go together: a saved plan is applied whole; apply --target plans and applies the targeted resources at once',
    );
  }
  const dirArg = manifestDirArg(ctx, positionals[0]);
  const dir = path.resolve(ctx.cwd, dirArg);
  const api = requireApiConfig(
    { apiUrl: values['api-url'], apiKey: values['api-key'] },
    ctx.env,
    ctx.cwd,
  );
  const owner = await planOwner(ctx, values, dir);

  // The secret values, once known: in every output, the API's messages and the error line too.
  const secretMask = ctx.mask ?? createValueMask();
  const assessment = await preparedOrReported(ctx, output, () =>
    planWith(ctx, values, { dir, api, owner, maxDeletes, output, mask: secretMask, targets }),
  );
  if (assessment === undefined) return ExitCode.error;
  const { plan } = assessment.prepared;
  // Values read from env or file and the secret fields' values (live ones too) stay out of
  // every output, whichever field holds them (a name in an address, a hostport in a conflict
  // reason): the run's masked copy, made before any renderer escapes them.
  if (values.out !== undefined)
    await savePlan(ctx, values.out, assessment.show(planWithDir(plan, dir, ctx, values.out)));
  ctx.stdout.write(rendered(ctx, values, output, assessment.show()));
  // A protected edge whose manifest is gone is kept on purpose, for good: it is no change, and
  // must not make --detailed-exitcode report changes forever.
  const { fatal, conflicts, kept } = assessment.verdict;
  if (kept.length > 0) {
    ctx.stderr.write(
      assessment.mask(
        `${kept.length} protected edge${kept.length === 1 ? '' : 's'} kept (manifest gone; protect: true keeps ${kept.length === 1 ? 'it' : 'them'}): ${kept.map((b) => b.address).join(', ')}\n`,
      ),
    );
  }
  const changes =
    plan.changes.some((c) => c.action !== 'noop') || fatal.length > 0 || conflicts.length > 0;
  return values['detailed-exitcode'] && changes ? ExitCode.changes : ExitCode.ok;
}

/**
 * The owner this plan is for: a saved plan carries its owner to `apply`, so it needs one chosen
 * on purpose; otherwise the default, with a note that `apply` would refuse.
 */
async function planOwner(ctx: CliContext, values: PlanValues, dir: string) {
  const chosen = await chosenOwner(values.owner, ctx.env, dir);
  const owner =
    values.out === undefined ? ownerOrDefault(chosen) : requireOwner(chosen, 'plan --out', dir);
  if (chosen === undefined) {
    ctx.stderr.write(
      `note: no owner chosen, so this plan is for the owner "${owner.id}"; apply refuses until one is: ${howToChooseOwner(dir)}\n`,
    );
  }
  return owner;
}

/**
 * The engine's run without a confirmation: loads, observes, plans and assesses, through a client
 * closed afterwards.
 */
async function planWith(
  ctx: CliContext,
  values: PlanValues,
  opts: {
    readonly dir: string;
    readonly api: ReturnType<typeof requireApiConfig>;
    readonly owner: { readonly id: string };
    readonly maxDeletes: number | undefined;
    readonly output: Output;
    readonly mask: ReturnType<typeof createValueMask>;
    readonly targets: ReadonlySet<string> | undefined;
  },
): Promise<Assessment> {
  const { dir, api } = opts;
  const client = createAccountClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    budget: clientBudget(rateLimitFlag(values['rate-limit']), ctx.env, false),
    mask: opts.mask.apply,
  });
  try {
    const ending = await runEngine<never>({
      prepare: pipeline({
        dir,
        client,
        owner: opts.owner.id,
        allowEmpty: values['allow-empty'],
        waitForReady: values['no-wait-for-domains'] !== true,
        maxDeletes: opts.maxDeletes,
        env: manifestEnv(ctx, values['secret-digest-key-file']),
        secretDirs: secretDirs(ctx, values['secret-dir']),
        credentials: heldCredentials({ apiKey: api.apiKey }),
        exclude: excludeGlobs(ctx, values.exclude),
        signal: ctx.signal,
        fingerprint: values.out !== undefined || opts.output === 'json',
        fingerprintKey: api.apiKey,
        targets: opts.targets,
      }),
      client,
      maxDeletes: checkMaxDeletes(opts.maxDeletes),
      allowEmpty: values['allow-empty'],
      // A plan is never applied: the run's re-plan does not happen.
      planOptions: () => ({ owner: opts.owner.id }),
      mask: opts.mask,
      signal: ctx.signal,
      concurrency: 1,
    });
    return ending.run;
  } finally {
    await client.close();
  }
}

/**
 * Invalid manifests: the diagnostics on stderr (and validate's JSON report on stdout for a
 * pipeline reading JSON), and undefined: no plan was made.
 */
async function preparedOrReported<T>(
  ctx: CliContext,
  output: Output,
  prepare: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await prepare();
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    if (output === 'json') {
      const report = {
        format_version: DIAGNOSTICS_FORMAT_VERSION,
        valid: false,
        diagnostics: err.diagnostics.map(diagnosticToJson),
      };
      ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    }
    for (const d of err.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
    ctx.stderr.write(`${invalidSetLine(err.diagnostics, 'no plan was made')}\n`);
    return undefined;
  }
}

/** The plan to save with `--out`: with the manifest directory relative to the file. */
function planWithDir(plan: Plan, dir: string, ctx: CliContext, out: string): Plan {
  const file = path.resolve(ctx.cwd, out);
  const manifestDir = path.relative(path.dirname(file), dir).split(path.sep).join('/') || '.';
  return { ...plan, manifest_dir: manifestDir };
}

async function savePlan(ctx: CliContext, out: string, masked: MaskedPlan) {
  const file = path.resolve(ctx.cwd, out);
  try {
    await writeFile(file, renderJson(masked));
  } catch (err) {
    throw new ConfigError(`cannot write the plan to ${file}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  ctx.stderr.write(`Saved the plan to ${out}; apply it with "edgesync apply ${out}".\n`);
}

/** The plan in the chosen format (text in colour only on a terminal, without NO_COLOR). */
function rendered(ctx: CliContext, values: PlanValues, output: Output, masked: MaskedPlan): string {
  if (output === 'json') return renderJson(masked);
  if (output === 'markdown') return renderMarkdown(masked);
  const color = !values['no-color'] && ctx.env.NO_COLOR === undefined && ctx.stdout.isTTY === true;
  return renderText(masked, { color });
}
