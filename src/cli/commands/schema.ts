/**
 * `edgesync schema`: prints the JSON Schema (draft 2020-12) of one manifest document, generated
 * from the zod schemas. schema/edgesync.schema.json is this output, committed for editors
 * (`# yaml-language-server: $schema=...`); a test keeps the two identical.
 */
import { UsageError } from '../../errors.js';
import { manifestJsonSchemaText } from '../../manifest/jsonschema.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { parseCommandArgs } from '../flags.js';

export const summary = 'print the JSON Schema of the manifests';

export const USAGE = commandUsage('schema', {
  synopsis: 'schema',
  about: `
Prints the JSON Schema (draft 2020-12) of a manifest document on stdout.
`,
});

export const OPTIONS = commandOptions('schema');

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  if (positionals.length > 0) {
    throw new UsageError(`schema takes no arguments, got "${positionals[0]}"`);
  }
  ctx.stdout.write(manifestJsonSchemaText());
  return ExitCode.ok;
}
