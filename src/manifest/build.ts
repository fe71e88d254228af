/**
 * From manifest files (bytes) to the DesiredSet or the complete list of diagnostics: decoding
 * (size cap, binary and UTF-8 checks), YAML parsing, `{env}`/`{file}` resolution, the shape
 * phase (zod, with "did you mean" for unknown fields), the semantic phase over the whole set,
 * and assembly of the model (`source`, `sensitive`). Pure: file listing and reading live in
 * `./loader.ts`; environment and referenced files come through the injected `RefReader`.
 */
import type { z } from 'zod';
import type { Diagnostic } from '../errors.js';
import { sortDiagnostics } from './diagnostics.js';
import { type FastDocument, parseYamlFast } from './fastyaml.js';
import { describeIssue, errorMap, valueAt } from './issues.js';
import { DEFAULT_OWNER } from './metadata.js';
import { aboutPruned, originalPath, type PartialDocument, partialDocument } from './partial.js';
import { type FieldPath, formatPath } from './paths.js';
import { type RefReader, resolveRefs } from './refs.js';
import {
  type BotUserManifest,
  type DesiredSet,
  type HttpsEdgeManifest,
  KINDS,
  type Kind,
  type RouteManifest,
  SCHEMA_BY_KIND,
  type Source,
  type TlsEdgeManifest,
} from './schema.js';
import { checkSemantics, type DocumentValue, type SemanticDoc } from './semantics.js';
import { didYouMean } from './suggest.js';
import { type Anchor, type ParsedDocument, parseYaml } from './yaml.js';

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_ALIAS_COUNT = 100;

export interface SourceFile {
  /** Path relative to the manifest directory, `/`-separated. */
  readonly file: string;
  readonly bytes: Uint8Array;
}

export interface BuildOptions {
  /** Owner id stored in edge metadata (counts towards its byte limit). Default `default`. */
  readonly owner?: string;
  readonly reader: RefReader;
  readonly maxFileBytes?: number;
  readonly maxAliasCount?: number;
  /**
   * `auto` (default) tries the fast parser first; `full` uses only `yaml`. Both give the same
   * model for the same input (tested); `full` exists for that test and for debugging.
   */
  readonly parser?: 'auto' | 'full';
}

export interface ResourceCounts {
  files: number;
  documents: number;
  tls_edges: number;
  https_edges: number;
  routes: number;
  bot_users: number;
}

export type BuildResult =
  | {
      readonly ok: true;
      readonly set: DesiredSet;
      readonly diagnostics: [];
      readonly counts: ResourceCounts;
    }
  | { readonly ok: false; readonly diagnostics: Diagnostic[]; readonly counts: ResourceCounts };

/** A document that passed the shape phase. */
interface ShapedDoc {
  readonly file: string;
  readonly doc: ParsedDocument;
  readonly value: DocumentValue;
  readonly sensitive: FieldPath[];
  /** The values read from env or file, to keep out of diagnostics (see `maskSecrets`). */
  readonly secrets: readonly string[];
  /** Set when the document had shape errors: only its valid parts, for the semantic phase. */
  readonly partial?: PartialDocument;
}

/** Shorter values are not masked: they would mangle messages and are no secret anyway. */
const MIN_MASKED_LENGTH = 4;

/**
 * Values read from env or file are sensitive, yet a rule may quote a field's value in its
 * message (`unknown webhook provider "..."`, a duplicate hostport, ...). Every occurrence, in any
 * case (some fields are lower-cased before the rules run) and JSON-escaped, becomes
 * `(sensitive)`.
 */
function maskSecrets(message: string, secrets: readonly string[]): string {
  let out = message;
  const forms = secrets
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])
    .filter((s) => s.length >= MIN_MASKED_LENGTH)
    .sort((a, b) => b.length - a.length);
  for (const form of forms) {
    const pattern = new RegExp(form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');
    out = out.replace(pattern, '(sensitive)');
  }
  return out;
}

export function buildDesiredSet(files: readonly SourceFile[], options: BuildOptions): BuildResult {
  const owner = options.owner ?? DEFAULT_OWNER;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxAliasCount = options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT;
  const diagnostics: Diagnostic[] = [];
  const counts: ResourceCounts = {
    files: files.length,
    documents: 0,
    tls_edges: 0,
    https_edges: 0,
    routes: 0,
    bot_users: 0,
  };
  const shaped: ShapedDoc[] = [];
  const partials: ShapedDoc[] = [];

  const ordered = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  for (const source of ordered) {
    const text = decode(source.bytes, maxFileBytes);
    if (typeof text !== 'string') {
      diagnostics.push(fileProblem(source.file, text.error));
      continue;
    }
    const result = processFile(source.file, text, options.reader, {
      maxAliasCount,
      fast: options.parser !== 'full',
    });
    diagnostics.push(...result.diagnostics);
    counts.documents += result.kinds.length;
    for (const kind of result.kinds) {
      if (kind === 'TLSEdge') counts.tls_edges += 1;
      else if (kind === 'HTTPSEdge') counts.https_edges += 1;
      else if (kind === 'BotUser') counts.bot_users += 1;
    }
    for (const d of result.shaped) {
      if (d.value.kind === 'HTTPSEdge') counts.routes += d.value.routes.length;
      shaped.push(d);
    }
    partials.push(...result.partials);
  }

  // Documents with shape errors take part as far as they parsed: both phases in one run.
  const checked = [...shaped, ...partials];
  const written = (d: ShapedDoc, path: FieldPath) =>
    d.partial === undefined ? path : originalPath(d.partial, path);
  const position = (d: ShapedDoc, path: FieldPath, anchor?: Anchor) =>
    d.doc.locate(written(d, path), anchor);
  const semanticDocs: SemanticDoc[] = checked.map((d, id) => ({ id, value: d.value }));
  const secrets = checked.flatMap((d) => d.secrets);
  const issues = checkSemantics(semanticDocs, {
    owner,
    where: (id, path) => {
      const d = checked[id] as ShapedDoc;
      const { line, column } = position(d, path);
      return `${d.file}:${line}:${column}`;
    },
  });
  for (const issue of issues) {
    const d = checked[issue.doc] as ShapedDoc;
    const path = written(d, issue.path);
    if (d.partial !== undefined && aboutPruned(d.partial, path)) continue;
    const { line, column } = position(d, issue.path, issue.anchor);
    diagnostics.push({
      file: d.file,
      line,
      column,
      path: formatPath(issue.anchor === 'key' ? path.slice(0, -1) : path),
      message: secrets.length === 0 ? issue.message : maskSecrets(issue.message, secrets),
      severity: 'error',
    });
  }

  if (diagnostics.length > 0) {
    return { ok: false, diagnostics: sortDiagnostics(diagnostics), counts };
  }
  return { ok: true, set: assemble(shaped), diagnostics: [], counts };
}

function fileProblem(file: string, message: string, line = 1, column = 1): Diagnostic {
  return { file, line, column, path: '', message, severity: 'error' };
}

interface FileResult {
  readonly diagnostics: Diagnostic[];
  /** Kind of every non-empty document (undefined when it has none we know). */
  readonly kinds: (Kind | undefined)[];
  readonly shaped: ShapedDoc[];
  /** Documents with shape errors, as far as they parsed (see ./partial.ts). */
  readonly partials: ShapedDoc[];
}

/**
 * One file's documents through the shape phase. The fast parser is tried first; if it declines,
 * or any document has a problem, the file is (re)read with the full parser so that diagnostics
 * and their positions always come from `yaml`.
 */
function processFile(
  file: string,
  text: string,
  reader: RefReader,
  options: { maxAliasCount: number; fast: boolean },
): FileResult {
  const { maxAliasCount } = options;
  let full: ReturnType<typeof parseYaml> | undefined;
  const fullParse = () => {
    full ??= parseYaml(text, { maxAliasCount });
    return full;
  };

  const fast = options.fast ? parseYamlFast(text) : undefined;
  if (fast !== undefined) {
    const results = fast.map((d, ordinal) =>
      shapeDocument(file, fastDocument(d, ordinal, fullParse), reader),
    );
    if (results.every((r) => r.diagnostics.length === 0 && r.shaped !== undefined)) {
      return {
        diagnostics: [],
        kinds: results.map((r) => r.kind),
        shaped: results.flatMap((r) => (r.shaped === undefined ? [] : [r.shaped])),
        partials: [],
      };
    }
  }

  const { documents, problems } = fullParse();
  const diagnostics = problems.map((p) => fileProblem(file, p.message, p.line, p.column));
  const kinds: (Kind | undefined)[] = [];
  const shaped: ShapedDoc[] = [];
  const partials: ShapedDoc[] = [];
  for (const doc of documents) {
    const result = shapeDocument(file, doc, reader);
    diagnostics.push(...result.diagnostics);
    kinds.push(result.kind);
    if (result.shaped !== undefined) shaped.push(result.shaped);
    if (result.partial !== undefined) partials.push(result.partial);
  }
  return { diagnostics, kinds, shaped, partials };
}

/**
 * A fast-parsed document: positions of mappings and lists are known; anything finer (keys,
 * scalars) is located by parsing the file fully, on demand (only when reporting a problem).
 */
function fastDocument(
  d: FastDocument,
  ordinal: number,
  fullParse: () => ReturnType<typeof parseYaml>,
): ParsedDocument {
  const full = (): ParsedDocument | undefined => fullParse().documents[ordinal];
  return {
    index: ordinal,
    value: d.value,
    start: d.start,
    locate: (path, anchor = 'value') => {
      // js-yaml's start positions agree with yaml's for a document and for a list item (all the
      // model needs: resources and routes); a mapping value's starts before its leading space.
      if (
        anchor === 'value' &&
        (path.length === 0 || (path.length === 2 && path[0] === 'routes'))
      ) {
        const node = valueAt(d.value, path);
        const known = typeof node === 'object' && node !== null ? d.positionOf(node) : undefined;
        if (known !== undefined) return known;
      }
      return full()?.locate(path, anchor) ?? d.start;
    },
    scalarSource: (path) => full()?.scalarSource(path),
  };
}

// ---- decoding ---------------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(bytes: Uint8Array, maxFileBytes: number): string | { error: string } {
  if (bytes.length > maxFileBytes) {
    return { error: `file is ${bytes.length} bytes, over the ${maxFileBytes}-byte limit` };
  }
  if (bytes.includes(0)) return { error: 'binary file (contains NUL bytes): not a YAML manifest' };
  try {
    return utf8.decode(bytes);
  } catch {
    return { error: 'file is not valid UTF-8' };
  }
}

// ---- shape phase ------------------------------------------------------------------------------

interface ShapeResult {
  readonly kind: Kind | undefined;
  readonly diagnostics: Diagnostic[];
  readonly shaped?: ShapedDoc;
  readonly partial?: ShapedDoc;
}

function shapeDocument(file: string, doc: ParsedDocument, reader: RefReader): ShapeResult {
  const diagnostics: Diagnostic[] = [];
  const bad: FieldPath[] = [];
  let secrets: string[] = [];
  const report = (
    path: FieldPath,
    message: string,
    at: FieldPath = path,
    anchor?: Anchor,
  ): void => {
    // An unknown field is reported on its parent; what is left out is the field itself.
    bad.push(anchor === 'key' ? at : path);
    const { line, column } = doc.locate(at, anchor);
    const shown = secrets.length === 0 ? message : maskSecrets(message, secrets);
    diagnostics.push({
      file,
      line,
      column,
      path: formatPath(path),
      message: shown,
      severity: 'error',
    });
  };

  const raw = doc.value;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    report([], `a manifest document must be a mapping with a "kind" (one of ${KINDS.join(', ')})`);
    return { kind: undefined, diagnostics };
  }
  const kindValue: unknown = (raw as Record<string, unknown>).kind;
  if (kindValue === undefined) {
    report([], `missing "kind" (one of ${KINDS.join(', ')})`);
    return { kind: undefined, diagnostics };
  }
  if (typeof kindValue !== 'string' || !(KINDS as readonly string[]).includes(kindValue)) {
    const shown = typeof kindValue === 'string' ? `"${kindValue}"` : String(kindValue);
    const hint = typeof kindValue === 'string' ? didYouMean(kindValue, KINDS) : '';
    report(['kind'], `unknown kind ${shown}${hint || `; expected one of ${KINDS.join(', ')}`}`);
    return { kind: undefined, diagnostics };
  }
  const kind = kindValue as Kind;
  const schema: z.ZodType = SCHEMA_BY_KIND[kind];

  const resolved = resolveRefs(schema, raw, file, reader);
  secrets = resolved.sensitive
    .map((p) => valueAt(resolved.value, p))
    .filter((v): v is string => typeof v === 'string');
  for (const issue of resolved.issues)
    report(issue.path, issue.message, issue.at ?? issue.path, issue.anchor);

  const parsed = schema.safeParse(resolved.value, { error: errorMap });
  if (!parsed.success) {
    const failed = resolved.failed;
    for (const issue of parsed.error.issues) {
      for (const d of describeIssue(kind, schema, issue, resolved.value, doc)) {
        if (failed.some((f) => startsWith(d.path, f))) continue;
        report(d.path, d.message, d.at, d.anchor);
      }
    }
  }
  if (diagnostics.length > 0 || !parsed.success) {
    const partial = partialDocument(schema, resolved.value, [...bad, ...resolved.failed]);
    if (partial === undefined) return { kind, diagnostics };
    return {
      kind,
      diagnostics,
      partial: { file, doc, value: partial.value, sensitive: [], secrets, partial },
    };
  }
  return {
    kind,
    diagnostics,
    shaped: {
      file,
      doc,
      value: parsed.data as DocumentValue,
      sensitive: resolved.sensitive,
      secrets,
    },
  };
}

function startsWith(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((s, i) => s === path[i]);
}

function routeSecrets(route: DocumentRoute): FieldPath[] {
  const out: FieldPath[] = [];
  const provider = route.oauth?.provider;
  if (provider !== undefined) {
    for (const [name, settings] of Object.entries(provider)) {
      if (settings?.client_secret !== undefined)
        out.push(['oauth', 'provider', name, 'client_secret']);
    }
  }
  if (route.oidc !== undefined) out.push(['oidc', 'client_secret']);
  if (route.webhook_verification?.secret !== undefined)
    out.push(['webhook_verification', 'secret']);
  return out;
}

type DocumentRoute = Extract<DocumentValue, { kind: 'HTTPSEdge' }>['routes'][number];

function uniqueSorted(paths: readonly FieldPath[]): string[] {
  if (paths.length === 0) return [];
  return [...new Set(paths.map(formatPath))].sort();
}

/**
 * Adds `source` and `sensitive` to the shaped values (fresh objects from zod, owned here, so
 * they are completed in place rather than copied) and sorts each kind by name.
 */
function assemble(shaped: readonly ShapedDoc[]): DesiredSet {
  const set: DesiredSet = { tlsEdges: [], httpsEdges: [], botUsers: [] };
  for (const d of shaped) {
    const source: Source = { file: d.file, line: d.doc.start.line, column: d.doc.start.column };
    const value = d.value;
    if (value.kind === 'TLSEdge') {
      const edge: TlsEdgeManifest = Object.assign(value, {
        source,
        sensitive: uniqueSorted(d.sensitive),
      });
      set.tlsEdges.push(edge);
    } else if (value.kind === 'BotUser') {
      const bot: BotUserManifest = Object.assign(value, {
        source,
        sensitive: uniqueSorted(d.sensitive),
      });
      set.botUsers.push(bot);
    } else {
      const routes: RouteManifest[] = value.routes.map((route, r) => {
        const own = d.sensitive
          .filter((p) => p[0] === 'routes' && p[1] === r)
          .map((p) => p.slice(2));
        const secrets = routeSecrets(route);
        return Object.assign(route, {
          source: { file: d.file, ...d.doc.locate(['routes', r]) },
          sensitive:
            own.length === 0 && secrets.length === 0 ? [] : uniqueSorted([...own, ...secrets]),
        });
      });
      const edge: HttpsEdgeManifest = Object.assign(value, {
        routes,
        source,
        sensitive: uniqueSorted(d.sensitive.filter((p) => p[0] !== 'routes')),
      });
      set.httpsEdges.push(edge);
    }
  }
  const byName = (a: { name: string }, b: { name: string }) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  set.tlsEdges.sort(byName);
  set.httpsEdges.sort(byName);
  set.botUsers.sort(byName);
  return set;
}
