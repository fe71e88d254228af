/**
 * `edgesync release KIND/NAME... [--dry-run]`: stop managing edges without deleting them. Lists
 * the account, finds each named edge this owner manages, and PATCHes its metadata once to the
 * user's labels alone (the `edgesync/` keys removed), so a later plan without its manifest
 * deletes nothing. All or nothing before the first write: an unknown target, or one another owner
 * manages, means no PATCH at all.
 *
 * Exit codes: 0 released (or, with --dry-run, would release); 1 a target names no edge this owner
 * manages, or a PATCH failed; 64 usage errors.
 */
import path from 'node:path';
import { type ApiClient, observe } from '../../api/index.js';
import {
  parseReleaseTarget,
  planRelease,
  RELEASE_MANIFEST_KINDS,
  RELEASE_PLAN_KINDS,
  type ReleaseTarget,
} from '../../apply/release.js';
import { EdgesyncError, errorMessage, UsageError } from '../../errors.js';
import { escapeControl } from '../../escape.js';
import { kindNamed } from '../../kinds/index.js';
import { createAccountClient, requireApiConfig } from '../client.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { clientBudget, manifestDirArg, parseCommandArgs, rateLimitFlag } from '../flags.js';
import { chosenOwner, ownerOrDefault, requireOwner } from '../owner.js';

export const summary =
  'stop managing edges or cloud endpoints without deleting them (removes the edgesync/ keys)';

/** `TLSEdge, HTTPSEdge or CloudEndpoint (or tls_edge, https_edge, cloud_endpoint)`. */
function kindList(): string {
  const names = RELEASE_MANIFEST_KINDS;
  const either =
    names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return `${either} (or ${RELEASE_PLAN_KINDS.join(', ')})`;
}

export const USAGE = `usage: edgesync release KIND/NAME... [options]

Stops managing the named edges without deleting them: removes the edgesync/ keys (owner, name,
protect) from each edge's live metadata, one PATCH per edge, and keeps every other label. A
later plan without their manifests deletes nothing. NAME is the manifest name; KIND is
${kindList()}.
Nothing is written unless every target is an edge this owner manages.

options:
  --owner ID         owner id that manages the edges; required (unless --dry-run), or
                     EDGESYNC_OWNER, or .edgesync-owner in $EDGESYNC_DIR (else the current
                     directory)
  --dry-run          show what would be released; write nothing
  --rate-limit N/Ws  client-side budget, or none (default 120/60s; EDGESYNC_RATE_LIMIT)
  --api-url URL      Edge API base URL (or EDGESYNC_API_URL)
  --api-key KEY      Edge API key (or EDGESYNC_API_KEY)
  -h, --help         show this help

exit codes: 0 released, 1 unknown target or failed PATCH (see the messages), 64 usage error
`;

export const OPTIONS = {
  owner: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'rate-limit': { type: 'string' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Updater = (
  id: string,
  body: { readonly metadata: string },
  options: { readonly signal?: AbortSignal | undefined },
) => Promise<unknown>;

/** The client's update method for a kind, as its definition names it (the route table's row). */
function updaterOf(client: ApiClient, kind: string): Updater {
  const name = kindNamed(kind).api.update;
  const method =
    name === undefined
      ? undefined
      : (client as unknown as Readonly<Record<string, Updater | undefined>>)[name];
  if (method === undefined) {
    throw new EdgesyncError('ES_INTERNAL', `the client cannot update a ${kind}`);
  }
  return method.bind(client);
}

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
    const live = await observe(client, { signal: ctx.signal });
    const { releases, problems } = planRelease(targets, live, owner);
    if (problems.length > 0) {
      for (const p of problems) ctx.stderr.write(`error: ${escapeControl(p)}\n`);
      ctx.stderr.write('Nothing released.\n');
      return ExitCode.error;
    }
    let failed = 0;
    for (const r of releases) {
      const shown = escapeControl(`${r.address} (${r.id})`);
      if (dryRun) {
        ctx.stderr.write(`would release ${shown}\n`);
        continue;
      }
      try {
        await updaterOf(client, r.kind)(r.id, { metadata: r.metadata }, { signal: ctx.signal });
        ctx.stderr.write(`released ${shown}\n`);
      } catch (err) {
        failed += 1;
        ctx.stderr.write(`error: ${shown}: ${escapeControl(errorMessage(err))}\n`);
      }
    }
    const n = releases.length;
    const edges = `${n} edge${n === 1 ? '' : 's'}`;
    if (dryRun) {
      ctx.stderr.write(`Dry run: would release ${edges}; nothing was written.\n`);
      return ExitCode.ok;
    }
    if (failed > 0) {
      ctx.stderr.write(`${failed} of ${edges} not released (see the errors above).\n`);
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
