/**
 * `edgesync validate [DIR] [--output text|json] [--owner ID] [--secret-dir DIR]...`: loads and
 * validates every manifest under DIR (default: $EDGESYNC_DIR, else the current directory) and reports every
 * diagnostic at once. Exit 0 when valid, 1 otherwise (and when DIR is missing or unreadable).
 * Text goes to stderr; `--output json` prints the versioned report on stdout.
 */
import path from 'node:path';
import { UsageError } from '../../errors.js';
import {
  DIAGNOSTICS_FORMAT_VERSION,
  diagnosticToJson,
  formatDiagnostic,
  invalidSetLine,
} from '../../manifest/diagnostics.js';
import { loadManifests } from '../../manifest/loader.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { excludeGlobs, manifestDirArg, parseCommandArgs, secretDirs } from '../flags.js';
import { chosenOwner, ownerOrDefault } from '../owner.js';

export const summary = 'check the manifests (shape and semantics) without talking to the API';

export const USAGE = `usage: edgesync validate [DIR] [options]

Validates every *.yaml / *.yml manifest under DIR (default: $EDGESYNC_DIR, else the current
directory).

options:
  --output text|json   text diagnostics on stderr (default), or a versioned JSON report on stdout
  --owner ID           owner id stored in edge metadata (else EDGESYNC_OWNER, else
                       DIR/.edgesync-owner, else "default"; counts towards its 4096-byte limit)
  --secret-dir DIR     a directory outside DIR that { file: ... } references may read (repeatable)
  --exclude GLOB       skip files and directories matching GLOB, relative to DIR (repeatable;
                       also $EDGESYNC_EXCLUDE, comma-separated), e.g. "k8s/**", "**/*.ci.yaml"
  -h, --help           show this help
`;

export const OPTIONS = {
  output: { type: 'string', short: 'o' },
  owner: { type: 'string' },
  'secret-dir': { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

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
    throw new UsageError(
      `expected at most one DIR\nRun "edgesync validate --help" for its options.`,
    );
  const dir = path.resolve(ctx.cwd, manifestDirArg(ctx, positionals[0]));

  const result = await loadManifests(dir, {
    env: ctx.env,
    secretDirs: secretDirs(ctx, values['secret-dir']),
    exclude: excludeGlobs(ctx, values.exclude),
    owner: ownerOrDefault(await chosenOwner(values.owner, ctx.env, dir)).id,
  });

  if (output === 'json') {
    const report = {
      format_version: DIAGNOSTICS_FORMAT_VERSION,
      valid: result.ok,
      diagnostics: result.diagnostics.map(diagnosticToJson),
      resources: result.counts,
    };
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return result.ok ? ExitCode.ok : ExitCode.error;
  }

  const c = result.counts;
  if (result.ok) {
    const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
    ctx.stderr.write(
      `${plural(c.documents, 'manifest')} valid (${plural(c.tls_edges, 'TLS edge')}, ${plural(c.https_edges, 'HTTPS edge')} with ${plural(c.routes, 'route')}, ${plural(c.bot_users, 'bot user')}${c.cloud_endpoints > 0 ? `, ${plural(c.cloud_endpoints, 'cloud endpoint')}` : ''}) in ${plural(c.files, 'file')}\n`,
    );
    return ExitCode.ok;
  }
  for (const d of result.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
  ctx.stderr.write(`${invalidSetLine(result.diagnostics)}\n`);
  return ExitCode.error;
}
