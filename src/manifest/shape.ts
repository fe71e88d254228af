/**
 * The shape phase of one manifest file (`processFile`): decoding (size cap, binary and UTF-8
 * checks), YAML parsing (the fast parser first, `yaml` for every diagnostic and its position),
 * `{env}`/`{file}` resolution and the schema check (./fastcheck.ts first, zod for whatever it
 * leaves and for every diagnostic), with "did you mean" for unknown fields. A file's result
 * depends only on its text and, through references, on the environment and referenced files:
 * `./build.ts` reuses the result of an unchanged file without references (see `FileCache`).
 */
import { z } from 'zod';
import type { Diagnostic } from '../errors.js';
import { fastCheck } from './fastcheck.js';
import { type FastDocument, parseYamlFast } from './fastyaml.js';
import { describeIssue, errorMap, valueAt } from './issues.js';
import { type PartialDocument, partialDocument } from './partial.js';
import { type FieldPath, formatPath } from './paths.js';
import { type RefReader, type ResolveResult, resolveRefs } from './refs.js';
import { KINDS, type Kind, SCHEMA_BY_KIND } from './schema.js';
import { maskValues } from './secrets.js';
import type { DocumentValue } from './semantics.js';
import { didYouMean } from './suggest.js';
import { type Anchor, type ParsedDocument, type Position, parseYaml } from './yaml.js';

/**
 * The schemas compiled (`z.compile`: generated code, with zod's runtime parser as its fallback,
 * so results and issues are zod's own) for the documents the fast path (./fastcheck.ts) leaves
 * to zod: 70 ms less for 10,000 edges than the runtime parser. Compiled on first use: when the
 * fast path answers for every document, the code is never generated. Introspection
 * (references, issues, partial documents) keeps using `SCHEMA_BY_KIND`.
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

/**
 * One file's documents through the shape phase. The fast parser is tried first; if it declines,
 * or any document has a problem, the file is (re)read with the full parser so that diagnostics
 * and their positions always come from `yaml`.
 */
export function processFile(
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
    ...(d.referenceFree === true ? { referenceFree: true } : {}),
  };
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

  const resolved: ResolveResult =
    doc.referenceFree === true
      ? { value: raw, sensitive: [], failed: [], issues: [] }
      : resolveRefs(schema, raw, file, reader);
  secrets = resolved.sensitive
    .map((p) => valueAt(resolved.value, p))
    .filter((v): v is string => typeof v === 'string');
  for (const issue of resolved.issues)
    report(issue.path, issue.message, issue.at ?? issue.path, issue.anchor);

  // The fast path's answer is zod's own; without one, zod decides and explains.
  const fast = fastCheck(kind, resolved.value);
  const parsed =
    fast !== undefined
      ? ({ success: true, data: fast } as const)
      : compiledCheck(kind).safeParse(resolved.value, { error: errorMap });
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

/**
 * A file's result as `FileCache` keeps it. A kept document holds its start and its routes'
 * starts (what assembly needs); anything else is located by parsing the text again, on demand
 * (only a diagnostic about a kept document needs it: a name another file now repeats, say).
 * The parsed value and the parser's position tables, three quarters of a kept file's memory
 * (28 of 37 MB at 10,000 edges), are let go. `source` gives the text back when asked: the text
 * itself, or (in the daemon) the file read again, if it is still the text the result came from.
 */
export function slimResult(
  result: FileResult,
  source: () => string | undefined,
  maxAliasCount: number,
): FileResult {
  return {
    ...result,
    shaped: result.shaped.map((d) => {
      const routes =
        d.value.kind === 'HTTPSEdge'
          ? d.value.routes.map((_, r) => d.doc.locate(['routes', r]))
          : [];
      return { ...d, doc: keptDocument(source, maxAliasCount, d.doc.index, d.doc.start, routes) };
    }),
  };
}

/** In a function of its own, so that the closures hold the text source and positions only. */
function keptDocument(
  source: () => string | undefined,
  maxAliasCount: number,
  index: number,
  start: Position,
  routes: readonly Position[],
): ParsedDocument {
  let parsed: ParsedDocument | undefined;
  // The document that starts where this one did (a start identifies a document in its file).
  const again = (): ParsedDocument | undefined => {
    if (parsed !== undefined) return parsed;
    const text = source();
    if (text === undefined) return undefined;
    parsed = parseYaml(text, { maxAliasCount }).documents.find(
      (d) => d.start.line === start.line && d.start.column === start.column,
    );
    return parsed;
  };
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
      return again()?.locate(path, anchor) ?? start;
    },
    scalarSource: (path) => again()?.scalarSource(path),
  };
}
