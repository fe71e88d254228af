/**
 * The daemon's control token as the command line reads it: `--control-token-file` (a mounted
 * Secret), else `EDGESYNC_CONTROL_TOKEN`. `run` serves the control endpoints with it; `status`,
 * `reconcile`, `suspend` and `resume` send it. The value never appears in a message.
 */
import path from 'node:path';
import { controlTokenProblem } from '../daemon/control.js';
import { ConfigError, errorMessage } from '../errors.js';
import { CONTROL_TOKEN_ENV } from '../manifest/own-credentials.js';
import type { CliContext } from './context.js';
import { readSmallTextFile } from './small-file.js';

/**
 * The control token: `--control-token-file` (a mounted Secret), else EDGESYNC_CONTROL_TOKEN.
 * Surrounding whitespace (a trailing newline) is not part of it. The value never appears in a
 * message.
 */
export async function controlTokenFrom(
  ctx: CliContext,
  file: string | undefined,
): Promise<string | undefined> {
  if (file === undefined) {
    const fromEnv = ctx.env[CONTROL_TOKEN_ENV]?.trim();
    if (fromEnv === undefined || fromEnv === '') return undefined;
    const problem = controlTokenProblem(fromEnv);
    if (problem !== undefined) throw new ConfigError(`${CONTROL_TOKEN_ENV}: ${problem}`);
    return fromEnv;
  }
  const abs = path.resolve(ctx.cwd, file);
  let text: string;
  try {
    text = await readSmallTextFile(abs);
  } catch (err) {
    throw new ConfigError(`--control-token-file ${abs}: cannot read it: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const token = text.trim();
  if (token === '') throw new ConfigError(`--control-token-file ${abs}: the file is empty`);
  const problem = controlTokenProblem(token);
  if (problem !== undefined) throw new ConfigError(`--control-token-file ${abs}: ${problem}`);
  return token;
}
