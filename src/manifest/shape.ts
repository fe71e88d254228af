/**
 * The shape phase of one manifest file (`processFile`): decoding (size cap, binary and UTF-8
 * checks), YAML parsing (`yaml`, the one parser: values, positions and diagnostics all come from
 * the same reading), `{env}`/`{file}` resolution and the schema check (zod), with "did you mean"
 * for unknown fields. A file's result
 * depends only on its text and, through references, on the environment and referenced files:
 * `./build.ts` reuses the result of an unchanged file without references (see `FileCache`).
 */
import { z } from 'zod';
import type { Diagnostic } from '../errors.js';
import { describeIssue, errorMap, valueAt } from './issues.js';
import { type PartialDocument, partialDocument } from './partial.js';
import { type FieldPath, formatPath } from './paths.js';
import { readPolicyText } from './policy/document.js';
import { type RefReader, type ResolveResult, resolveRefs } from './refs.js';
import { KINDS, type Kind, SCHEMA_BY_KIND } from './schema.js';
import { maskValues } from './secrets.js';
import type { DocumentValue } from './semantics.js';
import { didYouMean } from './suggest.js';
import { type Anchor, type ParsedDocument, type Position, parseYaml } from './yaml.js';

/**
 * The schemas compiled (`z.compile`: generated code, with zod's runtime parser as its fallback,
 * so results and issues are zod's own): 70 ms less for 10,000 edges than the runtime parser.
 * Compiled on first use of a kind. Introspection (references, issues, partial documents) keeps
 * using `SCHEMA_BY_KIND`.
 */
const compiled: Partial<Record<Kind, z.ZodType>> = {};
export function compiledCheck(kind: Kind): z.ZodType {
  compiled[kind] ??= z.compile(SCHEMA_BY_KIND[kind]);
  return compiled[kind];
}

/** A document that passed the shape phase. */
export interface ShapedDoc {
  readonly file: string;
  readonly doc: ParsedDocument;
  readonly value: DocumentValue;
  readonly sensitive: FieldPath[];
  /** The values read from env or file, to keep out of diagnostics (see `maskValues` in ./secrets.ts). */
  readonly secrets: readonly string[];
  /** Set when the document had shape errors: only its valid parts, for the semantic phase. */
  readonly partial?: PartialDocument;
}

export function fileProblem(file: string, message: string, line = 1, column = 1): Diagnostic {
  return { file, line, column, path: '', message, severity: 'error' };
}

export interface FileResult {
  readonly diagnostics: Diagnostic[];
  /** Kind of every non-empty document (undefined when it has none we know). */
  readonly kinds: (Kind | undefined)[];
  readonly shaped: ShapedDoc[];
  /** Documents with shape errors, as far as they parsed (see ./partial.ts). */
  readonly partials: ShapedDoc[];
}

/** One file's documents through the shape phase: parsed once, by `yaml`, checked by zod. */
export function processFile(
  file: string,
  text: string,
  reader: RefReader,
  options: { maxAliasCount: number },
): FileResult {
  const { documents, problems } = parseYaml(text, { maxAliasCount: options.maxAliasCount });
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

// ---- decoding ---------------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decode(bytes: Uint8Array, maxFileBytes: number): string | { error: string } {
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
    const shown = secrets.length === 0 ? message : maskValues(message, secrets);
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

  const read = kind === 'CloudEndpoint' ? readStringPolicy(raw as Record<string, unknown>) : {};
  if (read.problem !== undefined) {
    const at = read.problem.at;
    const { line, column } =
      at === undefined ? doc.locate(POLICY) : doc.textPosition(POLICY, at.line, at.column);
    bad.push(POLICY);
    diagnostics.push({
      file,
      line,
      column,
      path: formatPath(POLICY),
      message: read.problem.message,
      severity: 'error',
    });
  }
  const resolved: ResolveResult = resolveRefs(schema, read.value ?? raw, file, reader);
  secrets = resolved.sensitive
    .map((p) => valueAt(resolved.value, p))
    .filter((v): v is string => typeof v === 'string');
  for (const issue of resolved.issues)
    report(issue.path, issue.message, issue.at ?? issue.path, issue.anchor);

  const parsed = compiledCheck(kind).safeParse(resolved.value, { error: errorMap });
  if (!parsed.success) {
    const failed = read.problem === undefined ? resolved.failed : [...resolved.failed, POLICY];
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

const POLICY: FieldPath = ['traffic_policy'];

/**
 * A cloud endpoint's policy written as a string becomes the document it holds, so that one
 * schema, one reference resolver and one set of rules serve both ways of writing it; paths into
 * it are located in the string (`ParsedDocument.locate`).
 */
function readStringPolicy(raw: Record<string, unknown>): {
  value?: Record<string, unknown>;
  problem?: { message: string; at?: { line: number; column: number } };
} {
  const text = raw.traffic_policy;
  if (typeof text !== 'string') return {};
  const read = readPolicyText(text);
  if ('error' in read) {
    return {
      problem:
        read.at === undefined ? { message: read.error } : { message: read.error, at: read.at },
    };
  }
  return { value: { ...raw, traffic_policy: read.value } };
}

function startsWith(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((s, i) => s === path[i]);
}

/**
 * A file's result as `FileCache` keeps it. A kept document holds its start and its routes'
 * starts (what assembly needs); anything else is located by parsing the text again, on demand
 * (only a diagnostic about a kept document needs it: a name another file now repeats, say).
 * The parsed value and the parser's position tables, three quarters of a kept file's memory
 * (28 of 37 MB at 10,000 edges), are let go. `source` gives the text back when asked: the text
 * itself, or (in the daemon) the file read again, if it is still the text the result came from.
 * The documents of one file share one `Reparse`: however many diagnostics point into the file,
 * it is read and parsed again at most once per build.
 */
export function slimResult(
  result: FileResult,
  source: () => string | undefined,
  maxAliasCount: number,
): FileResult {
  const reparse = new Reparse(source, maxAliasCount);
  return {
    ...result,
    shaped: result.shaped.map((d) => {
      const routes =
        d.value.kind === 'HTTPSEdge'
          ? d.value.routes.map((_, r) => d.doc.locate(['routes', r]))
          : [];
      return { ...d, doc: keptDocument(reparse, d.doc.index, d.doc.start, routes) };
    }),
  };
}

const startKey = (p: Position): string => `${p.line}:${p.column}`;

/**
 * Files parsed again that are still held, oldest first. Diagnostics come in document order, a
 * file's together (and a duplicate's other place close by), so a few suffice for each file to be
 * parsed again once, while thousands of reported files never hold their trees all at once.
 */
const held: Reparse[] = [];
const MAX_HELD = 8;

/**
 * One file parsed again for its kept documents, once, and let go (`release`) when the build that
 * asked ends, or earlier when newer ones push it out of `held`: a long-running daemon does not
 * keep the trees of files it once reported on.
 */
class Reparse {
  readonly #source: () => string | undefined;
  readonly #maxAliasCount: number;
  #byStart: Map<string, ParsedDocument> | undefined;

  constructor(source: () => string | undefined, maxAliasCount: number) {
    this.#source = source;
    this.#maxAliasCount = maxAliasCount;
  }

  /** The document that starts at `start` (a start identifies a document in its file). */
  document(start: Position): ParsedDocument | undefined {
    if (this.#byStart === undefined) {
      this.#byStart = new Map();
      const text = this.#source();
      if (text === undefined) return undefined;
      for (const d of parseYaml(text, { maxAliasCount: this.#maxAliasCount }).documents)
        this.#byStart.set(startKey(d.start), d);
      held.push(this);
      if (held.length > MAX_HELD) held[0]?.release();
    }
    return this.#byStart.get(startKey(start));
  }

  release(): void {
    if (this.#byStart === undefined) return;
    this.#byStart = undefined;
    const at = held.indexOf(this);
    if (at >= 0) held.splice(at, 1);
  }
}

/** In a function of its own, so that the closures hold the shared re-parse and positions only. */
function keptDocument(
  reparse: Reparse,
  index: number,
  start: Position,
  routes: readonly Position[],
): ParsedDocument {
  return {
    index,
    value: undefined,
    start,
    locate: (path, anchor = 'value') => {
      if (anchor === 'value' && path.length === 0) return start;
      if (anchor === 'value' && path.length === 2 && path[0] === 'routes') {
        const known = typeof path[1] === 'number' ? routes[path[1]] : undefined;
        if (known !== undefined) return known;
      }
      return reparse.document(start)?.locate(path, anchor) ?? start;
    },
    textPosition: (path, line, column) =>
      reparse.document(start)?.textPosition(path, line, column) ?? start,
    scalarSource: (path) => reparse.document(start)?.scalarSource(path),
    release: () => reparse.release(),
  };
}
