/**
 * `edgesync validate [DIR | FILE...] [--output text|json] [--owner ID] [--secret-dir DIR]...`:
 * loads and validates every manifest under DIR (default: $EDGESYNC_DIR, else the current
 * directory), or only the files named, and reports every diagnostic at once. Exit 0 when valid,
 * 1 otherwise (and when DIR is missing or unreadable). Text goes to stderr; `--output json`
 * prints the versioned report on stdout.
 *
 * Like `terraform validate`, it needs no secret value: a `{ env }` / `{ file }` reference whose
 * value is not there is checked for its form and listed as left for later; the checks of its
 * value run where values are resolved (plan, apply, run).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { escapeControl } from '../../escape.js';
import { GENERIC_KINDS, type KindDefinition } from '../../kinds/index.js';
import type { ResourceCounts } from '../../manifest/build.js';
import {
  DIAGNOSTICS_FORMAT_VERSION,
  diagnosticToJson,
  formatDiagnostic,
  invalidSetLine,
} from '../../manifest/diagnostics.js';
import { inside, loadManifests, SKIPPED_DIRECTORIES } from '../../manifest/loader.js';
import type { DeferredCheck } from '../../manifest/shape.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { excludeGlobs, manifestDirArg, parseCommandArgs, secretDirs } from '../flags.js';
import { chosenOwner, ownerOrDefault } from '../owner.js';

export const summary = 'check the manifests (shape and semantics) without talking to the API';

export const USAGE = commandUsage('validate', {
  synopsis: 'validate [DIR | FILE...] [options]',
  about: `
Validates every *.yaml / *.yml manifest under DIR (default: $EDGESYNC_DIR, else the current
directory; names starting with "." and ${SKIPPED_DIRECTORIES.join(', ')} are skipped), or only
the files named (for editors and pre-commit hooks: the rules across files then see those files).
No secret value is needed: a { env } or { file } reference whose value is not there is checked
for its form and listed as left for later (plan, apply and run check its value).
`,
});

export const OPTIONS = commandOptions('validate');

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
  const { dir, files: named } = await whatToRead(ctx, positionals);

  const result = await loadManifests(dir, {
    env: ctx.env,
    secretDirs: secretDirs(ctx, values['secret-dir']),
    exclude: excludeGlobs(ctx, values.exclude),
    owner: ownerOrDefault(await chosenOwner(values.owner, ctx.env, dir)).id,
    deferUnresolved: true,
    ...(named === undefined ? {} : { files: named }),
  });

  if (output === 'json') {
    const report = {
      format_version: DIAGNOSTICS_FORMAT_VERSION,
      valid: result.ok,
      diagnostics: result.diagnostics.map(diagnosticToJson),
      resources: result.counts,
      deferred: result.deferred.map((d) => ({ ...d, checked_by: LATER })),
    };
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return result.ok ? ExitCode.ok : ExitCode.error;
  }

  const c = result.counts;
  for (const d of result.deferred) ctx.stderr.write(`${formatDeferred(d)}\n`);
  const later =
    result.deferred.length === 0
      ? ''
      : `; ${plural(result.deferred.length, 'reference')} left for later (its value is checked by ${LATER.join(', ')})`;
  if (result.ok) {
    ctx.stderr.write(
      `${plural(c.documents, 'manifest')} valid (${plural(c.tls_edges, 'TLS edge')}, ${plural(c.https_edges, 'HTTPS edge')} with ${plural(c.routes, 'route')}, ${plural(c.bot_users, 'bot user')}${c.cloud_endpoints > 0 ? `, ${plural(c.cloud_endpoints, 'cloud endpoint')}` : ''}${otherKindCounts(c)}) in ${plural(c.files, 'file')}${later}\n`,
    );
    return ExitCode.ok;
  }
  for (const d of result.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
  ctx.stderr.write(`${invalidSetLine(result.diagnostics)}\n`);
  return ExitCode.error;
}

/** Where the values of references left for later are checked. */
const LATER = ['plan', 'apply', 'run'] as const;

/**
 * `, 2 reserved domains, 1 vault`: the count of every other kind declared (a kind planned
 * generically, counted by its plural), in the registry's order; nothing for a kind not declared.
 */
export function otherKindCounts(
  counts: ResourceCounts,
  kinds: readonly KindDefinition[] = GENERIC_KINDS,
): string {
  let out = '';
  for (const kind of kinds) {
    const n = counts[kind.plural] ?? 0;
    if (n > 0) out += `, ${n} ${(n === 1 ? kind.kind : kind.plural).replaceAll('_', ' ')}`;
  }
  return out;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** `portal.yaml:29:35: note: traffic_policy...client_secret: { env: NAME } not set here; ...` */
function formatDeferred(d: DeferredCheck): string {
  const [kind, ...rest] = d.reference.split(' ');
  const name = rest.join(' ');
  const why = kind === 'env' ? 'is not set here' : 'is not found here';
  return escapeControl(
    `${d.file}:${d.line}:${d.column}: note: ${d.path}: { ${kind}: ${name} } ${why}: its value is checked by ${LATER.join(', ')}`,
  );
}

/**
 * The directory, or the files named: one positional that is a directory (or none: the default
 * directory), else every positional a file, read relative to their deepest common directory.
 */
async function whatToRead(
  ctx: CliContext,
  positionals: readonly string[],
): Promise<{ dir: string; files?: string[] }> {
  const first = positionals[0];
  if (positionals.length <= 1) {
    const dir = path.resolve(ctx.cwd, manifestDirArg(ctx, first));
    const info = await stat(dir).catch(() => undefined);
    // A missing path is the loader's to report (as a directory: the desired state unknown).
    if (first === undefined || info === undefined || info.isDirectory()) return { dir };
  }
  const absolute = positionals.map((p) => path.resolve(ctx.cwd, p));
  for (const [i, abs] of absolute.entries()) {
    const info = await stat(abs).catch(() => undefined);
    if (info?.isDirectory() === true) {
      throw new UsageError(
        `${positionals[i]} is a directory: give one DIR, or files only\nRun "edgesync validate --help" for its options.`,
      );
    }
  }
  const dir = commonDirectory(absolute.map((abs) => path.dirname(abs)));
  return { dir, files: absolute.map((abs) => path.relative(dir, abs).split(path.sep).join('/')) };
}

function commonDirectory(dirs: readonly string[]): string {
  let common = dirs[0] as string;
  for (const d of dirs) {
    while (common !== path.dirname(common) && !inside(common, d)) {
      common = path.dirname(common);
    }
  }
  return common;
}
