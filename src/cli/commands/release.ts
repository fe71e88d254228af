/**
 * `edgesync release KIND/NAME... [--dry-run]`: stop managing edges or cloud endpoints without
 * deleting them. Lists the account, finds each named edge or endpoint this owner manages (never
 * an agent endpoint), and PATCHes its metadata once to the user's labels alone (the `edgesync/`
 * keys removed), so a later plan without its manifest deletes nothing. All or nothing before the first write: an unknown target, or one another owner
 * manages, means no PATCH at all.
 *
 * Exit codes: 0 released (or, with --dry-run, would release); 1 a target names no edge or endpoint
 * this owner manages, or a PATCH failed; 64 usage errors.
 *
 * The engine runs it (src/engine/release.ts), through the same executor as every apply.
 */
import path from 'node:path';
import {
  parseReleaseTarget,
  RELEASE_MANIFEST_KINDS,
  RELEASE_PLAN_KINDS,
  type ReleaseTarget,
  runRelease,
} from '../../engine/index.js';
import { UsageError } from '../../errors.js';
import { escapeControl } from '../../escape.js';
import { createAccountClient, requireApiConfig } from '../client.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { clientBudget, manifestDirArg, parseCommandArgs, rateLimitFlag } from '../flags.js';
import { chosenOwner, ownerOrDefault, requireOwner } from '../owner.js';

export const summary =
  'stop managing edges or cloud endpoints without deleting them (removes the edgesync/ keys)';

export const USAGE = commandUsage('release', {
  synopsis: 'release KIND/NAME... [options]',
  about: `
Stops managing the named resources without deleting them: removes the edgesync/ keys (owner,
name, protect) from each one's live metadata, one PATCH each, and keeps every other label. A
later plan without their manifests deletes nothing. KIND is ${RELEASE_MANIFEST_KINDS.join(', ')}
(or ${RELEASE_PLAN_KINDS.join(', ')}); NAME is the manifest name. Nothing is written unless
every target is one this owner manages.
`,
  footer: `
exit codes: 0 released, 1 unknown target or failed PATCH (see the messages), 64 usage error
`,
});

export const OPTIONS = commandOptions('release');

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  if (positionals.length === 0)
    throw new UsageError(
      `name at least one KIND/NAME\nRun "edgesync release --help" for its options.`,
    );
  const targets: ReleaseTarget[] = [];
  for (const text of positionals) {
    const target = parseReleaseTarget(text);
    if (typeof target === 'string') throw new UsageError(escapeControl(target));
    targets.push(target);
  }
  const dryRun = values['dry-run'] === true;
  const ownerDir = path.resolve(ctx.cwd, manifestDirArg(ctx, undefined));
  const chosen = await chosenOwner(values.owner, ctx.env, ownerDir);
  // A dry run writes nothing: it may look as the default owner.
  const owner = (dryRun ? ownerOrDefault(chosen) : requireOwner(chosen, 'release', ownerDir)).id;
  const api = requireApiConfig(
    { apiUrl: values['api-url'], apiKey: values['api-key'] },
    ctx.env,
    ctx.cwd,
  );

  const client = createAccountClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    budget: clientBudget(rateLimitFlag(values['rate-limit']), ctx.env, false),
  });
  try {
    const shown = (r: { readonly address: string; readonly id: string }) =>
      escapeControl(`${r.address} (${r.id})`);
    const ending = await runRelease({
      client,
      targets,
      owner,
      dryRun,
      signal: ctx.signal,
      onRelease: (r, error) =>
        ctx.stderr.write(
          error === undefined
            ? `released ${shown(r)}\n`
            : `error: ${shown(r)}: ${escapeControl(error)}\n`,
        ),
    });
    if (ending.ending === 'problems') {
      for (const p of ending.problems) ctx.stderr.write(`error: ${escapeControl(p)}\n`);
      ctx.stderr.write('Nothing released.\n');
      return ExitCode.error;
    }
    const n = ending.releases.length;
    const edges = `${n} edge${n === 1 ? '' : 's'}`;
    if (ending.ending === 'dry_run') {
      for (const r of ending.releases) ctx.stderr.write(`would release ${shown(r)}\n`);
      ctx.stderr.write(`Dry run: would release ${edges}; nothing was written.\n`);
      return ExitCode.ok;
    }
    if (ending.failed > 0) {
      ctx.stderr.write(`${ending.failed} of ${edges} not released (see the errors above).\n`);
      return ExitCode.error;
    }
    ctx.stderr.write(
      `Released ${edges}: edgesync no longer manages ${n === 1 ? 'it' : 'them'}. Remove ${n === 1 ? 'its manifest' : 'their manifests'} now: a manifest left in place would plan ${n === 1 ? 'a new edge' : 'new edges'} on the released hostports (a conflict).\n`,
    );
    return ExitCode.ok;
  } finally {
    await client.close();
  }
}
