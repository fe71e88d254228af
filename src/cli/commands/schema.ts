/**
 * `edgesync schema`: prints the JSON Schema (draft 2020-12) of one manifest document, generated
 * from the zod schemas. schema/edgesync.schema.json is this output, committed for editors
 * (`# yaml-language-server: $schema=...`); a test keeps the two identical.
 */
import { UsageError } from '../../errors.js';
import { manifestJsonSchemaText } from '../../manifest/jsonschema.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';

export const summary = 'print the JSON Schema of the manifests';

export async function run(ctx: CliContext): Promise<number> {
  if (ctx.argv.includes('--help') || ctx.argv.includes('-h')) {
    ctx.stderr.write(
      'usage: edgesync schema\n\nPrints the JSON Schema (draft 2020-12) of a manifest document on stdout.\n',
    );
    return ExitCode.ok;
  }
  if (ctx.argv.length > 0) throw new UsageError(`schema takes no arguments, got "${ctx.argv[0]}"`);
  ctx.stdout.write(manifestJsonSchemaText());
  return ExitCode.ok;
}
