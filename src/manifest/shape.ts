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
import { policySecretPaths } from './policy/secrets.js';
import { documentReferences } from './references.js';
import { type DeferredRef, type RefReader, type ResolveResult, resolveRefs } from './refs.js';
import { genericKindOf, MANIFEST_KIND_NAMES, schemaOfKind } from './schema.js';
import { maskValues } from './secrets.js';
import type { DocumentValue } from './semantics.js';
import { didYouMean } from './suggest.js';
import { type Anchor, eachYamlDocument, type ParsedDocument, type Position } from './yaml.js';

/**
 * The schemas compiled (`z.compile`: generated code, with zod's runtime parser as its fallback,
 * so results and issues are zod's own): 70 ms less for 10,000 edges than the runtime parser.
 * Compiled on first use of a kind. Introspection (references, issues, partial documents) keeps
 * using `SCHEMA_BY_KIND`.
 */
const compiled = new Map<string, z.ZodType>();
export function compiledCheck(kind: string): z.ZodType {
  let check = compiled.get(kind);
  if (check === undefined) {
    check = z.compile(schemaOfKind(kind) as z.ZodType);
    compiled.set(kind, check);
  }
  return check;
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
  /**
   * Fields whose reference was left for later (`RefReader.deferUnresolved`): a rule's finding
   * about one of them, or about what holds it, judges a hole and is dropped.
   */
  readonly deferred?: readonly FieldPath[];
}

/** A reference left for later, located: what `validate` lists as not checked yet. */
export interface DeferredCheck {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The field, as diagnostics show paths. */
  readonly path: string;
  /** As written: `env NAME` or `file PATH`. */
  readonly reference: string;
}

export function fileProblem(file: string, message: string, line = 1, column = 1): Diagnostic {
  return { file, line, column, path: '', message, severity: 'error' };
}

export interface FileResult {
  readonly diagnostics: Diagnostic[];
  /** Kind of every non-empty document (undefined when it has none we know). */
  readonly kinds: (string | undefined)[];
  readonly shaped: ShapedDoc[];
  /** Documents with shape errors, as far as they parsed (see ./partial.ts). */
  readonly partials: ShapedDoc[];
  /** References whose value was not there, left for later (only when the reader defers). */
  readonly deferred: DeferredCheck[];
}

/**
 * One file's documents through the shape phase, each parsed once by `yaml` and checked by zod,
 * one document at a time: `ownRules` runs on each checked document while its parse is at hand
 * (any position in it can be named), then the document keeps only the positions the rest of a
 * build asks for (see `keptDocument`) and its tree goes before the next is read. Returns the
 * file's result (as `FileCache` keeps it) and the diagnostics of the documents' own rules.
 */
export function processFile(
  file: string,
  text: string,
  reader: RefReader,
  options: { maxAliasCount: number; ownRules: (doc: ShapedDoc) => Diagnostic[] },
): { result: FileResult; own: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const kinds: (string | undefined)[] = [];
  const shaped: ShapedDoc[] = [];
  const partials: ShapedDoc[] = [];
  const deferred: DeferredCheck[] = [];
  const own: Diagnostic[] = [];
  const kept = (d: ShapedDoc): ShapedDoc => {
    own.push(...options.ownRules(d));
    return { ...d, doc: keptDocument(d.doc, d.value, d.partial === undefined) };
  };
  const problems = eachYamlDocument(text, { maxAliasCount: options.maxAliasCount }, (doc) => {
    const result = shapeDocument(file, doc, reader);
    diagnostics.push(...result.diagnostics);
    for (const d of result.deferred ?? []) deferred.push(locateDeferred(file, doc, d));
    kinds.push(result.kind);
    if (result.shaped !== undefined) shaped.push(kept(result.shaped));
    if (result.partial !== undefined) partials.push(kept(result.partial));
  });
  for (const p of problems) diagnostics.push(fileProblem(file, p.message, p.line, p.column));
  return { result: { diagnostics, kinds, shaped, partials, deferred }, own };
}

function locateDeferred(file: string, doc: ParsedDocument, d: DeferredRef): DeferredCheck {
  const { line, column } = doc.locate(d.path);
  return { file, line, column, path: formatPath(d.path), reference: d.reference };
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
  readonly kind: string | undefined;
  readonly diagnostics: Diagnostic[];
  readonly shaped?: ShapedDoc;
  readonly partial?: ShapedDoc;
  readonly deferred?: readonly DeferredRef[];
}

/** A document's diagnostics and what they leave out, reported as the shape phase finds them. */
interface Reporter {
  readonly diagnostics: Diagnostic[];
  /** Paths that carry an error: left out of the partial document (see ./partial.ts). */
  readonly bad: FieldPath[];
  /** Values read from env or file (and a policy's secret fields): masked in every message. */
  secrets: string[];
  report(path: FieldPath, message: string, at?: FieldPath, anchor?: Anchor): void;
}

function reporter(file: string, doc: ParsedDocument): Reporter {
  const r: Reporter = {
    diagnostics: [],
    bad: [],
    secrets: [],
    report(path, message, at = path, anchor) {
      // An unknown field is reported on its parent; what is left out is the field itself.
      r.bad.push(anchor === 'key' ? at : path);
      const { line, column } = doc.locate(at, anchor);
      const shown = r.secrets.length === 0 ? message : maskValues(message, r.secrets);
      r.diagnostics.push({
        file,
        line,
        column,
        path: formatPath(path),
        message: shown,
        severity: 'error',
      });
    },
  };
  return r;
}

/** The document's kind, or undefined once the reason it has none we know is reported. */
function documentKind(raw: unknown, r: Reporter): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    r.report(
      [],
      `a manifest document must be a mapping with a "kind" (one of ${MANIFEST_KIND_NAMES.join(', ')})`,
    );
    return undefined;
  }
  const kindValue: unknown = (raw as Record<string, unknown>).kind;
  if (kindValue === undefined) {
    r.report([], `missing "kind" (one of ${MANIFEST_KIND_NAMES.join(', ')})`);
    return undefined;
  }
  if (typeof kindValue !== 'string' || !MANIFEST_KIND_NAMES.includes(kindValue)) {
    const shown = typeof kindValue === 'string' ? `"${kindValue}"` : String(kindValue);
    const hint = typeof kindValue === 'string' ? didYouMean(kindValue, MANIFEST_KIND_NAMES) : '';
    r.report(
      ['kind'],
      `unknown kind ${shown}${hint || `; expected one of ${MANIFEST_KIND_NAMES.join(', ')}`}`,
    );
    return undefined;
  }
  return kindValue;
}

function shapeDocument(file: string, doc: ParsedDocument, reader: RefReader): ShapeResult {
  const r = reporter(file, doc);
  const { diagnostics, bad } = r;
  const raw = doc.value;
  const kind = documentKind(raw, r);
  if (kind === undefined) return { kind, diagnostics };
  const schema = schemaOfKind(kind) as z.ZodType;

  const read = kind === 'CloudEndpoint' ? readStringPolicy(raw as Record<string, unknown>) : {};
  if (read.problem !== undefined) reportPolicyText(read.problem, file, doc, r);
  const resolved: ResolveResult = resolveRefs(schema, read.value ?? raw, file, reader);
  // Secret config fields of a policy are secrets even when written inline.
  const policySecrets =
    kind === 'CloudEndpoint'
      ? policySecretPaths((resolved.value as Record<string, unknown>).traffic_policy)
      : [];
  r.secrets = [...resolved.sensitive, ...policySecrets]
    .map((p) => valueAt(resolved.value, p))
    .filter((v): v is string => typeof v === 'string');
  const secrets = r.secrets;
  for (const issue of resolved.issues)
    r.report(issue.path, issue.message, issue.at ?? issue.path, issue.anchor);

  const parsed = compiledCheck(kind).safeParse(resolved.value, { error: errorMap });
  if (!parsed.success) {
    const failed = read.problem === undefined ? resolved.failed : [...resolved.failed, POLICY];
    reportSchemaIssues(
      parsed.error.issues,
      { kind, schema, value: resolved.value, doc, failed },
      r,
    );
  }
  // Only `validate` defers; a deferred field is a hole its rules must not judge.
  const deferredPaths = resolved.deferred.map((d) => d.path);
  const holes = deferredPaths.length === 0 ? {} : { deferred: deferredPaths };
  const later = resolved.deferred.length === 0 ? {} : { deferred: resolved.deferred };
  if (diagnostics.length > 0 || !parsed.success) {
    const partial = partialDocument(schema, resolved.value, [...bad, ...resolved.failed]);
    if (partial === undefined) return { kind, diagnostics, ...later };
    return {
      kind,
      diagnostics,
      partial: { file, doc, value: partial.value, sensitive: [], secrets, partial, ...holes },
      ...later,
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
      ...holes,
    },
    ...later,
  };
}

/** A policy written as a string that is not a policy document: located in the string. */
function reportPolicyText(
  problem: { message: string; at?: { line: number; column: number } },
  file: string,
  doc: ParsedDocument,
  r: Reporter,
): void {
  const at = problem.at;
  const { line, column } =
    at === undefined ? doc.locate(POLICY) : doc.textPosition(POLICY, at.line, at.column);
  r.bad.push(POLICY);
  r.diagnostics.push({
    file,
    line,
    column,
    path: formatPath(POLICY),
    message: problem.message,
    severity: 'error',
  });
}

/** zod's issues, described and located, except those a failed reference already explains. */
function reportSchemaIssues(
  issues: readonly z.core.$ZodIssue[],
  on: {
    kind: string;
    schema: z.ZodType;
    value: unknown;
    doc: ParsedDocument;
    failed: readonly FieldPath[];
  },
  r: Reporter,
): void {
  const { failed } = on;
  for (const issue of issues) {
    // A rule across fields (a pair of credentials, JSON-only data) over a value whose
    // reference failed judges a hole the reference error already explains.
    const path = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (
      issue.code === 'custom' &&
      failed.some((f) => (f.length > 1 && startsWith(path, f.slice(0, -1))) || startsWith(f, path))
    )
      continue;
    for (const d of describeIssue(on.kind, on.schema, issue, on.value, on.doc)) {
      if (failed.some((f) => startsWith(d.path, f))) continue;
      r.report(d.path, d.message, d.at, d.anchor);
    }
  }
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

/** Where a kept document's fields are (see `keptDocument`). */
interface KeptPositions {
  readonly start: Position;
  readonly name: Position;
  readonly id: Position | undefined;
  readonly url: Position | undefined;
  readonly hostports: readonly Position[];
  readonly routes: readonly Position[];
  /** A cloud endpoint's policy tests (`tests[i]`), which name their place when they run. */
  readonly tests: readonly Position[];
  /** References by name to other kinds, by path (JSON), which the set-wide check locates. */
  readonly references: ReadonlyMap<string, Position>;
  /** Write-only fields (a secret's `value`), by name: the build checks where each came from. */
  readonly writeOnly: ReadonlyMap<string, Position>;
}

/**
 * A document once its own rules ran (as `FileCache` keeps it, and as the rest of a build uses
 * it): its start and the positions the set-wide rules and assembly ask for (its `name`, adopted
 * `id`, `url`, `hostports[i]` and `routes[r]`, as written). The parsed value and the parser's
 * tree, most of a file's memory, are let go, and nothing needs them again: no file is read or
 * parsed twice, however many errors it has.
 */
function keptDocument(doc: ParsedDocument, value: DocumentValue, whole: boolean): ParsedDocument {
  // A generic kind's document (src/kinds/) has no hostports or routes; any kind's `id` adopts.
  const edge = value.kind === 'TLSEdge' || value.kind === 'HTTPSEdge' ? value : undefined;
  const adopts = (value as { id?: unknown }).id !== undefined;
  return positionsOnly(doc.index, {
    start: doc.start,
    name: doc.locate(['name']),
    id: adopts ? doc.locate(['id']) : undefined,
    url: value.kind === 'CloudEndpoint' ? doc.locate(['url']) : undefined,
    hostports: edge === undefined ? [] : edge.hostports.map((_, i) => doc.locate(['hostports', i])),
    // Assembly's: a partial document (its routes renumbered, see ./partial.ts) is never assembled.
    routes:
      whole && value.kind === 'HTTPSEdge'
        ? value.routes.map((_, r) => doc.locate(['routes', r]))
        : [],
    tests:
      value.kind === 'CloudEndpoint'
        ? (value.tests ?? []).map((_, i) => doc.locate(['tests', i]))
        : [],
    references: new Map(
      documentReferences(value).map((r) => [JSON.stringify(r.path), doc.locate(r.path)]),
    ),
    writeOnly: new Map(
      (genericKindOf(value.kind)?.fields ?? [])
        .filter((f) => f.writeOnly === true)
        .map((f) => [f.name, doc.locate([f.name])]),
    ),
  });
}

/** In a function of its own, so that the closure holds the positions only (not the tree). */
function positionsOnly(index: number, at: KeptPositions): ParsedDocument {
  return {
    index,
    value: undefined,
    start: at.start,
    // Any other path is not asked for once a file is done; the document's start stands for it.
    locate: (path, anchor = 'value') => {
      if (anchor !== 'value') return at.start;
      const [head, i] = path;
      if (path.length === 0) return at.start;
      const reference =
        at.references.size === 0 ? undefined : at.references.get(JSON.stringify(path));
      if (reference !== undefined) return reference;
      if (path.length === 1 && head === 'name') return at.name;
      const writeOnly = path.length === 1 ? at.writeOnly.get(String(head)) : undefined;
      if (writeOnly !== undefined) return writeOnly;
      if (path.length === 1 && head === 'id') return at.id ?? at.start;
      if (path.length === 1 && head === 'url') return at.url ?? at.start;
      if (path.length === 2 && typeof i === 'number') {
        if (head === 'hostports') return at.hostports[i] ?? at.start;
        if (head === 'routes') return at.routes[i] ?? at.start;
        if (head === 'tests') return at.tests[i] ?? at.start;
      }
      return at.start;
    },
    // Rules across documents locate fields by path, never inside a string's text.
    textPosition: () => at.start,
    scalarSource: () => undefined,
  };
}
