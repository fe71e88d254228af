/**
 * `edgesync migrate DIR --out OUTDIR --backend ID=URL...`: writes the CloudEndpoint manifests
 * that replace the edges of DIR (one per hostport, with a traffic policy each) and copies the bot
 * users, file for file. DIR is only read. The set is validated first, as `validate` does; then
 * every gap is reported at its source field, and nothing is written while an error stands (or a
 * warning, without --allow-lossy). The files are written all or none, each path checked to stay
 * inside OUTDIR and out of DIR (../write-set.ts).
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { Document, parse, parseAllDocuments } from 'yaml';
import { ConfigError, UsageError } from '../../errors.js';
import { formatDiagnostic, invalidSetLine } from '../../manifest/diagnostics.js';
import type { ExcludedDeclarations } from '../../manifest/excluded.js';
import { inside } from '../../manifest/listing.js';
import { loadManifests, readLoadedFile } from '../../manifest/loader.js';
import type { FieldPath } from '../../manifest/paths.js';
import type { DesiredSet } from '../../manifest/schema.js';
import { parseYaml } from '../../manifest/yaml.js';
import { migrateSet, type SourceDocument, type SourceFileDocs } from '../../migrate/migrate.js';
import { documentSource } from '../../migrate/source.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions } from '../flag-table.js';
import { excludeGlobs, manifestDirArg, parseCommandArgs, secretDirs } from '../flags.js';
import { writeFileSet } from '../write-set.js';

export const summary = 'translate edge manifests into cloud endpoints with a traffic policy';

export const USAGE = commandUsage('migrate', {
  synopsis: 'migrate [DIR] --out OUTDIR --backend ID=URL... [options]',
  about: `
Writes a CloudEndpoint manifest for every hostport of every edge under DIR (default:
$EDGESYNC_DIR, else the current directory) into OUTDIR, file for file, and copies the bot users.
DIR is never modified. { env } and { file } references stay references in the output.
`,
});

export const OPTIONS = commandOptions('migrate');

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  if (positionals.length > 1) throw new UsageError(`expected at most one DIR\n${USAGE}`);
  if (values.out === undefined) throw new UsageError(`--out OUTDIR is required\n${USAGE}`);
  const dir = path.resolve(ctx.cwd, manifestDirArg(ctx, positionals[0]));
  const out = path.resolve(ctx.cwd, values.out);
  await checkApart(dir, out, values.out);
  const backends = await backendMap(ctx, values.backend ?? [], values.backends);

  const loaded = await loadManifests(dir, {
    env: ctx.env,
    secretDirs: secretDirs(ctx, values['secret-dir']),
    exclude: excludeGlobs(ctx, values.exclude),
  });
  if (!loaded.ok) {
    for (const d of loaded.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
    ctx.stderr.write(`${invalidSetLine(loaded.diagnostics, 'nothing was migrated')}\n`);
    return ExitCode.error;
  }
  const files = await sourceDocuments(loaded.resolvedDir, loaded.files, loaded.set);
  const migration = migrateSet(files, { backends, allowLossy: values['allow-lossy'] === true });
  for (const d of migration.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
  if (migration.files.size === 0 && migration.diagnostics.length > 0) {
    const errors = migration.diagnostics.filter((d) => d.severity === 'error').length;
    ctx.stderr.write(
      errors > 0
        ? `${errors} error(s): nothing written\n`
        : `${migration.diagnostics.length} lossy translation(s): nothing written; review them, then run again with --allow-lossy to accept them\n`,
    );
    return ExitCode.error;
  }
  const kept = await excludedFiles(loaded.resolvedDir, loaded.set.excluded);
  const migrated = [...migration.files].map(([file, text]) => ({ file, text }));
  await writeFileSet(out, [...migrated, ...kept], {
    overwrite: true,
    shown: values.out,
    forbidden: [{ dir, what: `the source directory ${dir}` }],
    fs: ctx.writeFs,
  });
  const { edges, endpoints, copied, domains } = migration.counts;
  ctx.stderr.write(
    `${endpoints} cloud endpoint(s) from ${edges} edge(s), ${copied} other document(s) copied, ${domains} reserved domain(s), in ${migration.files.size} file(s) under ${out}\n`,
  );
  if (kept.length > 0) {
    ctx.stderr.write(
      `${kept.length} excluded file(s) copied unchanged, not migrated: what they declare stays as it is when ${out} is applied (${kept.map((k) => k.file).join(', ')})\n`,
    );
  }
  return ExitCode.ok;
}

/**
 * The excluded files that declare resources, as written: `--exclude` leaves them out of the
 * migration, not out of the account, so they go into OUTDIR unchanged, and applying OUTDIR (the
 * next step) keeps their edges instead of deleting them. An excluded file that cannot be read
 * stops the migration: what it declares could not be carried over.
 */
async function excludedFiles(
  resolvedDir: string,
  excluded: ExcludedDeclarations | undefined,
): Promise<{ file: string; text: string }[]> {
  if (excluded === undefined) return [];
  const unreadable = excluded.unreadable[0];
  if (unreadable !== undefined) {
    throw new ConfigError(
      `the excluded ${unreadable} cannot be read: what it declares could not be copied into the output, and applying it would delete that; nothing written`,
    );
  }
  const files = [...new Set(excluded.declared.map((d) => d.file))].sort();
  return Promise.all(
    files.map(async (file) => {
      const text = await readLoadedFile(resolvedDir, file);
      if (typeof text !== 'string')
        throw new ConfigError(`${file}: ${text.error}: nothing written`);
      return { file, text };
    }),
  );
}

/**
 * DIR is never modified: OUT may neither be inside DIR (the migrated manifests would be read with
 * the edges, or written over them) nor hold it (OUT/a/b.yaml may be DIR's own file). Compared by
 * real path, so that no symbolic link on either side hides an overlap; OUT need not exist yet, so
 * its nearest existing ancestor is resolved and the rest appended.
 */
async function checkApart(dir: string, out: string, written: string): Promise<void> {
  const realDir = await realpath(dir).catch(() => dir);
  const realOut = await realExisting(out);
  if (inside(realDir, realOut)) {
    throw new UsageError(
      `--out ${written} is inside ${dir}${realOut === out ? '' : ` (it resolves to ${realOut})`}: the migrated manifests would be written into the directory they are read from`,
    );
  }
  if (inside(realOut, realDir)) {
    throw new UsageError(
      `--out ${written} holds ${dir}${realDir === dir ? '' : ` (${realDir})`}: a migrated file could be written over a file of the directory it is read from`,
    );
  }
}

async function realExisting(target: string): Promise<string> {
  const rest: string[] = [];
  let at = target;
  for (;;) {
    try {
      return path.join(await realpath(at), ...rest);
    } catch (error) {
      const parent = path.dirname(at);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw error;
      rest.unshift(path.basename(at));
      at = parent;
    }
  }
}

async function backendMap(
  ctx: CliContext,
  pairs: readonly string[],
  file: string | undefined,
): Promise<Map<string, string>> {
  const entries: [string, string][] = [];
  if (file !== undefined) {
    const text = await readLoadedFile(
      path.dirname(path.resolve(ctx.cwd, file)),
      path.basename(file),
    );
    if (typeof text !== 'string') throw new UsageError(`--backends ${file}: ${text.error}`);
    const value: unknown = parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UsageError(`--backends ${file}: expected a mapping of backend ID to internal URL`);
    }
    for (const [id, url] of Object.entries(value)) entries.push([id, String(url)]);
  }
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--backend ${pair}: expected ID=URL`);
    entries.push([pair.slice(0, at), pair.slice(at + 1)]);
  }
  for (const [id, url] of entries) checkInternalUrl(id, url);
  return new Map(entries);
}

function checkInternalUrl(id: string, url: string): void {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    throw new UsageError(`backend ${id}: "${url}" is not a URL`);
  }
  if (!host.endsWith('.internal')) {
    throw new UsageError(
      `backend ${id}: ${url} is not an internal URL (its host must end in .internal)`,
    );
  }
}

/** Every listed file's documents, as written, matched to the validated resources by position. */
async function sourceDocuments(
  resolvedDir: string,
  files: readonly string[],
  set: DesiredSet,
): Promise<SourceFileDocs[]> {
  const tls = new Map(set.tlsEdges.map((edge) => [key(edge.source), edge]));
  const https = new Map(set.httpsEdges.map((edge) => [key(edge.source), edge]));
  const out: SourceFileDocs[] = [];
  for (const file of [...files].sort()) {
    const text = await readLoadedFile(resolvedDir, file);
    if (typeof text !== 'string') throw new ConfigError(`${file}: ${text.error}`);
    const parsed = parseYaml(text, { maxAliasCount: 100 }).documents;
    const hasEdge = parsed.some((doc) => {
      const at = key({ file, ...doc.start });
      return tls.has(at) || https.has(at);
    });
    // Copied beside an edge's endpoints, documents keep their comments (yaml's Document); a file
    // without edges is copied as its text, so it is not parsed a second time.
    const written = hasEdge ? writtenDocuments(text) : [];
    const documents = parsed.map((doc): SourceDocument => {
      const at = key({ file, ...doc.start });
      const source = documentSource(file, doc.value, (p: FieldPath) => doc.locate(p));
      const tlsEdge = tls.get(at);
      if (tlsEdge) return { kind: 'edge', input: { kind: 'TLSEdge', edge: tlsEdge, source } };
      const httpsEdge = https.get(at);
      if (httpsEdge) return { kind: 'edge', input: { kind: 'HTTPSEdge', edge: httpsEdge, source } };
      const kind = (doc.value as { kind?: unknown }).kind;
      if (kind === 'TLSEdge' || kind === 'HTTPSEdge') {
        throw new ConfigError(`${file} changed while it was migrated: run the migration again`);
      }
      return { kind: 'copy', document: written[doc.index] ?? new Document(doc.value) };
    });
    out.push({ file, text, documents });
  }
  return out;
}

/** The file's documents as written, comments kept, without their own `---` (the output places its own). */
function writtenDocuments(text: string): Document.Parsed[] {
  const parsed = parseAllDocuments(text);
  const all = Array.isArray(parsed) ? parsed : [];
  for (const doc of all) doc.directives.docStart = null;
  return all;
}

function key(at: { file: string; line: number; column: number }): string {
  return `${at.file}:${at.line}:${at.column}`;
}
