/**
 * `edgesync test [DIR] [--output text|json]`: runs the policy tests (`tests:`) of every cloud
 * endpoint under DIR and reports each case with the rule that decided it and where the case is
 * written. Exit 0 when every case passes, 1 when one fails or the manifests are invalid (their
 * diagnostics are reported as `validate` reports them). Text goes to stderr; `--output json`
 * prints the versioned report on stdout.
 */
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { diagnosticToJson, formatDiagnostic } from '../../manifest/diagnostics.js';
import { loadManifests } from '../../manifest/loader.js';
import { maskValues, sensitiveValues } from '../../manifest/secrets.js';
import { runCase } from '../../policy-eval/cases.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { excludeGlobs, manifestDirArg, parseCommandArgs, secretDirs } from '../flags.js';
import { chosenOwner, ownerOrDefault } from '../owner.js';

export const summary = "run the cloud endpoints' policy tests (tests:) without talking to the API";

/** 1: `cases` with endpoint, name, place, passed, expected, actual, decided_by. */
export const TEST_REPORT_FORMAT_VERSION = 1;

export const USAGE = commandUsage('test', {
  synopsis: 'test [DIR] [options]',
  about: `
Runs the policy tests (tests:) of every CloudEndpoint under DIR (default: $EDGESYNC_DIR, else
the current directory): each case's request through the endpoint's traffic policy, its outcome
held to what the case expects. Exit 1 when a case fails or the manifests are invalid.
`,
});

export const OPTIONS = commandOptions('test');

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    throw new UsageError(`--output must be "text" or "json", got "${output}"`);
  }
  if (positionals.length > 1)
    throw new UsageError(`expected at most one DIR\nRun "edgesync test --help" for its options.`);
  const dir = path.resolve(ctx.cwd, manifestDirArg(ctx, positionals[0]));

  // The cases run here, not in validation, so that every case is reported, passing or not.
  const result = await loadManifests(dir, {
    env: ctx.env,
    secretDirs: secretDirs(ctx, values['secret-dir']),
    exclude: excludeGlobs(ctx, values.exclude),
    owner: ownerOrDefault(await chosenOwner(values.owner, ctx.env, dir)).id,
    policyTests: false,
  });
  if (!result.ok) {
    if (output === 'json') {
      const report = {
        format_version: TEST_REPORT_FORMAT_VERSION,
        passed: false,
        diagnostics: result.diagnostics.map(diagnosticToJson),
        cases: [],
      };
      ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      for (const d of result.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
      ctx.stderr.write('the manifests are invalid: no policy test was run\n');
    }
    return ExitCode.error;
  }

  const secrets = sensitiveValues(result.set);
  const mask = (text: string) => (secrets.length === 0 ? text : maskValues(text, secrets));
  const cases = result.set.cloudEndpoints.flatMap((endpoint) =>
    (endpoint.tests ?? []).map((test) => {
      const r = runCase(endpoint, test);
      return {
        endpoint: endpoint.name,
        name: r.name,
        file: test.source.file,
        line: test.source.line,
        column: test.source.column,
        passed: r.passed,
        expected: mask(r.expected),
        actual: mask(r.actual),
        decided_by: r.decidedBy,
      };
    }),
  );
  const failed = cases.filter((c) => !c.passed).length;

  if (output === 'json') {
    const report = {
      format_version: TEST_REPORT_FORMAT_VERSION,
      passed: failed === 0,
      diagnostics: [],
      cases,
    };
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return failed === 0 ? ExitCode.ok : ExitCode.error;
  }
  for (const c of cases) {
    const at = `${c.file}:${c.line}:${c.column}`;
    const by = c.decided_by === '' ? '' : ` (decided by ${c.decided_by})`;
    const what = c.passed ? `${c.actual}${by}` : `expected ${c.expected}; got ${c.actual}${by}`;
    ctx.stderr.write(`${c.passed ? 'PASS' : 'FAIL'} ${at}: ${c.endpoint}: ${c.name}: ${what}\n`);
  }
  const n = cases.length;
  ctx.stderr.write(
    n === 0
      ? 'no policy tests found\n'
      : `${n} policy test${n === 1 ? '' : 's'}, ${n - failed} passed, ${failed} failed\n`,
  );
  return failed === 0 ? ExitCode.ok : ExitCode.error;
}
