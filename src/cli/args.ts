/**
 * Flag parsing shared by the commands: `node:util` parseArgs, strict, positionals allowed, and
 * any parse failure turned into a UsageError (exit 64) carrying the command's usage text.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { errorMessage, UsageError } from '../errors.js';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

export function parseCommandArgs<const O extends OptionsConfig>(
  argv: readonly string[],
  options: O,
  usage: string,
) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${errorMessage(err)}\n${usage}`, { cause: err });
  }
}
