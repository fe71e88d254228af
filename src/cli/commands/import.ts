/**
 * `edgesync import [--out DIR] [--all] [--owner ID] [--force]`: writes one manifest file per
 * live edge this owner manages (with `--all`, unmanaged edges too, carrying `id:` so that
 * applying them adopts them) and per bot user. Secrets the API echoes are written as
 * `{ env: NAME }` references, never as values; the variables to set are listed on stderr.
 * Existing files are never overwritten without `--force`: nothing is written if any exists.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createApiClient, observe, resolveApiConfig } from '../../api/index.js';
import { importLive } from '../../apply/import.js';
import { ConfigError, errorMessage, UsageError } from '../../errors.js';
import { DEFAULT_OWNER } from '../../manifest/metadata.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';

export const summary = 'write manifests for the live edges and bot users';

const USAGE = `usage: edgesync import [options]

Writes one manifest file per live edge owned by OWNER and per bot user, in the manifest format.
Secrets are written as { env: NAME } references; the variables to set are printed.

options:
  --out DIR          where to write the files (default: the current directory)
  --all              also edges edgesync does not manage, with id: so that applying adopts them
  --owner ID         owner id whose edges to import (default "${DEFAULT_OWNER}")
  --force            overwrite existing files
  --schema-url URL   the $schema of the yaml-language-server line (default: this package's schema)
  --api-url URL      Edge API base URL (or EDGESYNC_API_URL)
  --api-key KEY      Edge API key (or EDGESYNC_API_KEY)
  -h, --help         show this help
`;

export async function run(ctx: CliContext): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(ctx.argv);
  } catch (err) {
    throw new UsageError(`${errorMessage(err)}\n${USAGE}`, { cause: err });
  }
  const { values, positionals } = parsed;
  if (values.help) {
    ctx.stderr.write(USAGE);
    return ExitCode.ok;
  }
  if (positionals.length > 0) {
    throw new UsageError(`import takes no arguments (use --out DIR)\n${USAGE}`);
  }
  const api = resolveApiConfig({
    flags: { apiUrl: values['api-url'], apiKey: values['api-key'] },
    env: ctx.env,
  });
  if (api === undefined) {
    throw new ConfigError(
      'no Edge API configured: pass --api-url and --api-key, or set EDGESYNC_API_URL and EDGESYNC_API_KEY',
    );
  }
  const out = path.resolve(ctx.cwd, values.out ?? '.');
  const owner = values.owner ?? DEFAULT_OWNER;

  const client = createApiClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
  let live: Awaited<ReturnType<typeof observe>>;
  try {
    live = await observe(client, { signal: ctx.signal });
  } finally {
    await client.close();
  }
  const result = importLive(live, {
    owner,
    all: values.all === true,
    schemaUrl: values['schema-url'] ?? defaultSchemaUrl(out),
  });

  const existing = result.files.filter((f) => existsSync(path.join(out, f.file)));
  if (existing.length > 0 && values.force !== true) {
    ctx.stderr.write(
      `Not imported: ${existing.length} file(s) already exist in ${out} (pass --force to overwrite):\n${existing.map((f) => `  ${f.file}`).join('\n')}\n`,
    );
    return ExitCode.error;
  }
  await mkdir(out, { recursive: true });
  for (const f of result.files) {
    await writeFile(path.join(out, f.file), f.text, { flag: values.force === true ? 'w' : 'wx' });
    const adopts = f.adopts === undefined ? '' : ` (adopts ${f.adopts} when applied)`;
    ctx.stderr.write(`wrote ${path.join(out, f.file)}${adopts}\n`);
  }
  for (const note of result.notes) ctx.stderr.write(`note: ${note}\n`);
  if (result.secrets.length > 0) {
    ctx.stderr.write(
      'The imported manifests read these secrets from the environment; set them before "edgesync plan":\n',
    );
    for (const s of result.secrets) ctx.stderr.write(`  ${s.env}  (${s.address} ${s.path})\n`);
  }
  ctx.stderr.write(`imported ${result.files.length} resource(s) into ${out}\n`);
  return ExitCode.ok;
}

/** This package's committed JSON Schema, relative to the output directory (editors resolve it). */
function defaultSchemaUrl(out: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'schema'))) break;
    dir = path.dirname(dir);
  }
  const schema = path.join(dir, 'schema', 'edgesync.schema.json');
  return path.relative(out, schema).split(path.sep).join('/');
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: 'string', short: 'o' },
      all: { type: 'boolean' },
      owner: { type: 'string' },
      force: { type: 'boolean' },
      'schema-url': { type: 'string' },
      'api-url': { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
