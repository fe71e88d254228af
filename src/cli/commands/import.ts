/**
 * `edgesync import [--out DIR] [--all] [--owner ID] [--force]`: writes one manifest file per
 * live edge and cloud endpoint this owner manages (with `--all`, unmanaged ones too, carrying
 * `id:` so that applying them adopts them), per bot user and per resource of every other
 * registered kind it can claim (src/apply/import.ts), and `.edgesync-owner` with the
 * owner they were imported for (so `plan`, `apply`, `run` and CI read the one owner from where
 * the manifests are). Secrets the API echoes are written as
 * `{ env: NAME }` references, never as values; the variables to set are listed on stderr.
 * Existing files are never overwritten without `--force`: nothing is written if any exists. The
 * files are written all or none (../write-set.ts): a full disk leaves the directory as it was.
 */
import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { observe } from '../../api/index.js';
import { type ImportResult, importLive } from '../../engine/index.js';
import { EdgesyncError, UsageError } from '../../errors.js';
import { escapeControl } from '../../escape.js';
import { findRepositoryRoot } from '../../manifest/git.js';
import { manifestJsonSchemaText } from '../../manifest/jsonschema.js';
import { createAccountClient, requireApiConfig } from '../client.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { clientBudget, parseCommandArgs, rateLimitFlag } from '../flags.js';
import { chosenOwner, OWNER_FILE, ownerOrDefault } from '../owner.js';
import { writeFileSet } from '../write-set.js';

export const summary =
  'write manifests for the live edges, cloud endpoints, bot users and every other managed kind';

/** The schema copy `import` writes beside the manifests when the package's is out of reach. */
const SCHEMA_FILE = 'edgesync.schema.json';

export const USAGE = commandUsage('import', {
  synopsis: 'import [options]',
  about: `
Writes one manifest file per live edge and cloud endpoint owned by OWNER, per bot user, and per
resource of every other kind that OWNER's mark or its key claims, in the manifest format (agent
endpoints are never imported), and ${OWNER_FILE} holding OWNER, which
plan, apply and run then read from the directory. Secrets are written as { env: NAME }
references; the variables to set are printed.
`,
});

export const OPTIONS = commandOptions('import');

/** A file `import` writes into the output directory. */
interface OutFile {
  readonly file: string;
  readonly text: string;
  readonly adopts?: string | undefined;
}

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `import takes no arguments (use --out DIR)\nRun "edgesync import --help" for its options.`,
    );
  }
  const schemaUrl = values['schema-url'];
  // It ends up on the first line of every file: a line break would inject YAML.
  if (schemaUrl !== undefined && (schemaUrl === '' || /\p{Cc}/u.test(schemaUrl))) {
    throw new UsageError('--schema-url must be a non-empty URL without control characters');
  }
  const api = requireApiConfig(
    { apiUrl: values['api-url'], apiKey: values['api-key'] },
    ctx.env,
    ctx.cwd,
  );
  const out = path.resolve(ctx.cwd, values.out ?? '.');
  const owner = ownerOrDefault(await chosenOwner(values.owner, ctx.env, out)).id;

  const client = createAccountClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    budget: clientBudget(rateLimitFlag(values['rate-limit']), ctx.env, false),
  });
  let live: Awaited<ReturnType<typeof observe>>;
  try {
    live = await observe(client, { signal: ctx.signal });
  } finally {
    await client.close();
  }
  const schema = schemaUrl === undefined ? await defaultSchema(out) : undefined;
  const result = importLive(live, {
    owner,
    all: values.all === true,
    schemaUrl: schemaUrl ?? schema?.url ?? `./${SCHEMA_FILE}`,
  });
  const files = await filesToWrite(out, result, schema?.copy === true, owner);
  const force = values.force === true;
  const existing = files.filter((f) => existsSync(path.join(out, f.file)));
  if (existing.length > 0 && !force) {
    ctx.stderr.write(
      `Not imported: ${existing.length} file(s) already exist in ${out} (pass --force to overwrite):\n${existing.map((f) => `  ${escapeControl(f.file)}`).join('\n')}\n`,
    );
    return ExitCode.error;
  }
  await writeFiles(ctx, out, files, force);
  reportImport(ctx, out, result);
  return ExitCode.ok;
}

/**
 * The manifests, the owner file and the schema copy when one is due; each checked to land
 * inside `out`.
 */
async function filesToWrite(
  out: string,
  result: ImportResult,
  copySchema: boolean,
  owner: string,
): Promise<OutFile[]> {
  const files: OutFile[] = [...result.files];
  // The owner the manifests were imported for, written once where every command reads it. The
  // same owner already there is no conflict; another one is (a different --owner), as any file.
  const ownerNow = await readFile(path.join(out, OWNER_FILE), 'utf8').catch(() => undefined);
  if (ownerNow?.trim() !== owner) files.push({ file: OWNER_FILE, text: `${owner}\n` });
  if (copySchema) {
    const text = manifestJsonSchemaText();
    const existing = await readFile(path.join(out, SCHEMA_FILE), 'utf8').catch(() => undefined);
    // The same schema already there is no conflict: a second import into the directory is one.
    if (existing !== text) files.push({ file: SCHEMA_FILE, text });
  }
  for (const f of files) {
    // importLive only makes names of [a-z0-9._-]; this keeps that promise checked at the door.
    if (path.dirname(path.join(out, f.file)) !== out) {
      throw new EdgesyncError(
        'ES_INTERNAL',
        `refusing to write ${JSON.stringify(f.file)} outside ${out}`,
      );
    }
  }
  return files;
}

/** All the files or none (a partial set would validate, and applying it delete the rest). */
async function writeFiles(
  ctx: CliContext,
  out: string,
  files: readonly OutFile[],
  force: boolean,
): Promise<void> {
  await writeFileSet(out, files, { overwrite: force, shown: out, fs: ctx.writeFs });
  for (const f of files) {
    const adopts = f.adopts === undefined ? '' : ` (adopts ${f.adopts} when applied)`;
    ctx.stderr.write(`wrote ${escapeControl(path.join(out, f.file))}${adopts}\n`);
  }
}

/** The notes, warnings and secret variables to set, after the files are written. */
function reportImport(ctx: CliContext, out: string, result: ImportResult): void {
  for (const note of result.notes) ctx.stderr.write(`note: ${escapeControl(note)}\n`);
  for (const w of result.warnings) ctx.stderr.write(`warning: ${escapeControl(w)}\n`);
  if (result.secrets.length > 0) {
    ctx.stderr.write(
      'The imported manifests read these secrets from the environment; set them before "edgesync plan":\n',
    );
    for (const s of result.secrets) {
      ctx.stderr.write(`  ${s.env}  (${escapeControl(`${s.address} ${s.path}`)})\n`);
    }
  }
  ctx.stderr.write(`imported ${result.files.length} resource(s) into ${escapeControl(out)}\n`);
}

/**
 * The `$schema` of the imported files. It must still resolve once the directory is committed
 * and checked out elsewhere, and the package publishes no schema URL, so: this package's
 * committed schema as a path relative to the output directory when both live in one repository
 * (an edgesync clone, or edgesync installed under the repository's node_modules), or outside
 * any repository; otherwise (a global install, npx) a copy of the schema written into the
 * output directory, which travels with the manifests.
 */
async function defaultSchema(out: string): Promise<{ url: string; copy: boolean }> {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'schema'))) break;
    dir = path.dirname(dir);
  }
  const schema = realOrSelf(path.join(dir, 'schema', SCHEMA_FILE));
  const target = realOrSelf(out);
  const repo = await findRepositoryRoot(nearestExisting(target));
  const rel = path.relative(repo ?? target, schema);
  const inside = rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
  if (repo !== undefined && !inside) return { url: `./${SCHEMA_FILE}`, copy: true };
  return { url: path.relative(target, schema).split(path.sep).join('/'), copy: false };
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** `--out` may not exist yet: its repository is that of its nearest existing ancestor. */
function nearestExisting(p: string): string {
  let current = p;
  while (!existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}
