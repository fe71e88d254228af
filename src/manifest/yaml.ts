/**
 * YAML text -> documents with positions. Owns the hostile-input rules that belong to parsing:
 * duplicate keys are errors, alias expansion is bounded, unresolved tags are errors, and a
 * field path can be mapped back to the line and column of its value (or key). Pure: no I/O.
 */
import {
  Composer,
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  Parser,
  visit,
  type YAMLError,
} from 'yaml';
import type { FieldPath } from './paths.js';

export interface Position {
  readonly line: number;
  readonly column: number;
}

export interface YamlProblem extends Position {
  readonly message: string;
}

/**
 * Where to point for a path: at its value (the default), for unknown fields at its key, or at
 * a character of a string value (`offset` code units into its value, e.g. a CEL expression's
 * offending token; the value's start where the text cannot be mapped, as with escapes).
 */
export type Anchor = 'value' | 'key' | { readonly offset: number };

export interface ParsedDocument {
  /** 0-based index of the document in its file (counting empty documents). */
  readonly index: number;
  /** Plain JavaScript value of the document (objects from yaml's toJS: own keys only). */
  readonly value: unknown;
  /** Position of the document's content (start of its top-level node). */
  readonly start: Position;
  /** Line and column of the node at `path`; falls back to the deepest existing ancestor. */
  locate(path: FieldPath, anchor?: Anchor): Position;
  /**
   * Where `line`:`column` of the text of the string at `path` is in the file: exact for a block
   * literal (`|`), whose lines are the file's; else the string's own position.
   */
  textPosition(path: FieldPath, line: number, column: number): Position;
  /** Original text of the plain scalar at `path` (e.g. `1.3` for a number), if there is one. */
  scalarSource(path: FieldPath): string | undefined;
}

export interface ParseOptions {
  /** Bound on alias expansion (yaml's `maxAliasCount`): defends against "billion laughs". */
  readonly maxAliasCount: number;
}

export interface ParseResult {
  readonly documents: ParsedDocument[];
  readonly problems: YamlProblem[];
}

type AnyDocument = Document.Parsed;

/** Every document of `text` at once (a command that needs them together, e.g. `migrate`). */
export function parseYaml(text: string, options: ParseOptions): ParseResult {
  const documents: ParsedDocument[] = [];
  const problems = eachYamlDocument(text, options, (doc) => {
    documents.push(doc);
  });
  return { documents, problems };
}

/**
 * Reads `text` one document at a time (`yaml`'s own parser and composer, as `parseAllDocuments`
 * runs them) and hands each to `visit` as soon as it is composed, so that a caller that keeps
 * only what it extracts lets each syntax tree go before the next is built: a file's trees are
 * never all alive at once, and they die young (a scavenge) instead of reaching the old
 * generation as garbage. Returns the problems that keep documents out.
 */
export function eachYamlDocument(
  text: string,
  options: ParseOptions,
  visit: (doc: ParsedDocument) => void,
): YamlProblem[] {
  const lineCounter = new LineCounter();
  const pos = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const composer = new Composer({
    prettyErrors: false,
    uniqueKeys: true,
    merge: true,
    strict: true,
    // A collection used as a key is reported as an unknown field like any other key; yaml's own
    // warning about it would reach stderr outside the diagnostics (as a Node process warning).
    logLevel: 'error',
  });
  const problems: YamlProblem[] = [];
  const mayHaveAliases = text.includes('*');
  // Composed lazily: a document is complete when it is handed out (the next one has begun).
  // Problems outside any document (an empty stream's) are not reported, as before.
  let index = 0;
  for (const doc of composer.compose(new Parser(lineCounter.addNewLine).parse(text))) {
    const read = readDocument(doc, index, { text, pos, mayHaveAliases, options });
    index += 1;
    if (Array.isArray(read)) problems.push(...read);
    else if (read !== undefined) visit(read);
  }
  return problems;
}

interface ReadContext {
  readonly text: string;
  readonly pos: (offset: number) => Position;
  readonly mayHaveAliases: boolean;
  readonly options: ParseOptions;
}

/** One composed document: its problems, nothing (only comments), or the document. */
function readDocument(
  doc: AnyDocument,
  index: number,
  { text, pos, mayHaveAliases, options }: ReadContext,
): YamlProblem[] | ParsedDocument | undefined {
  const issues = reportedIssues([...doc.errors, ...doc.warnings]);
  if (issues.length > 0) {
    return issues.map((issue) => ({ ...pos(issue.pos[0]), message: yamlMessage(issue, doc) }));
  }
  const contents = doc.contents;
  const start = pos(contents?.range?.[0] ?? 0);
  // Checked on the syntax tree before toJS: an undefined alias would throw, and a recursive one
  // would build a cyclic value that overflows the stack of everything after the parser.
  // (An alias is written with `*`: a text without one has none, and skips the walk.)
  const aliasProblems = mayHaveAliases ? checkAliases(doc) : [];
  if (aliasProblems.length > 0) {
    return aliasProblems.map((problem) => ({ ...pos(problem.offset), message: problem.message }));
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: options.maxAliasCount });
  } catch (err) {
    return [
      {
        ...start,
        message:
          err instanceof ReferenceError
            ? `too many alias expansions (limit ${options.maxAliasCount}): refusing a possible alias bomb`
            : `cannot read YAML document: ${err instanceof Error ? err.message : String(err)}`,
      },
    ];
  }
  // A document holding only comments (or nothing, e.g. after a trailing `---`) is skipped.
  if (value === null || value === undefined) return undefined;
  return locatable(doc, { index, value, start, text, pos });
}

/** A document with the ways to find its fields' positions in the tree and the text. */
function locatable(
  doc: AnyDocument,
  at: {
    index: number;
    value: unknown;
    start: Position;
    text: string;
    pos: (offset: number) => Position;
  },
): ParsedDocument {
  const { text, pos } = at;
  const top = doc.contents?.range?.[0] ?? 0;
  return {
    index: at.index,
    value: at.value,
    start: at.start,
    locate: (path, anchor = 'value') => {
      const found = find(doc, path);
      if (!found.complete) {
        // A path into a YAML document held by a block literal string (a traffic policy).
        const inner = blockText(text, found.node, pos);
        const located =
          inner === undefined ? undefined : locateInside(inner, path.slice(found.depth), anchor);
        if (located !== undefined) return located;
      }
      if (typeof anchor === 'object' && found.complete) {
        const at = offsetPosition(text, found.node, anchor.offset, pos);
        if (at !== undefined) return at;
      }
      const node = anchor === 'key' && found.complete && found.key ? found.key : found.node;
      return pos(node?.range?.[0] ?? top);
    },
    textPosition: (path, line, column) => {
      const found = find(doc, path);
      const inner = found.complete ? blockText(text, found.node, pos) : undefined;
      if (inner === undefined) return pos(found.node?.range?.[0] ?? top);
      return { line: inner.line + line - 1, column: inner.indent + column };
    },
    scalarSource: (path) => {
      const found = find(doc, path);
      if (!found.complete || !isScalar(found.node)) return undefined;
      return found.node.source === undefined ? undefined : String(found.node.source);
    },
  };
}

interface BlockText {
  readonly value: string;
  /** The file's line of the text's first line. */
  readonly line: number;
  /** Columns before the text on each of its lines. */
  readonly indent: number;
}

/** A block literal string's text and where its lines start in the file. */
function blockText(
  source: string,
  node: Node | null,
  pos: (offset: number) => Position,
): BlockText | undefined {
  if (!isScalar(node) || node.type !== 'BLOCK_LITERAL' || typeof node.value !== 'string')
    return undefined;
  const header = node.range?.[0];
  if (header === undefined) return undefined;
  const first = source.indexOf('\n', header) + 1;
  if (first === 0) return undefined;
  let end = first;
  while (source[end] === ' ') end += 1;
  return { value: node.value, line: pos(first).line, indent: end - first };
}

/**
 * Where character `offset` of a string scalar's value is in the file: exact when the value is
 * written as it reads (plain or quoted without escapes or folding, or a block literal, whose
 * lines are the file's).
 */
function offsetPosition(
  source: string,
  node: Node | null,
  offset: number,
  pos: (offset: number) => Position,
): Position | undefined {
  if (!isScalar(node) || typeof node.value !== 'string' || !node.range) return undefined;
  const value = node.value;
  if (offset < 0 || offset > value.length) return undefined;
  const [start, end] = node.range;
  switch (node.type) {
    case 'PLAIN':
      return source.slice(start, end) === value ? pos(start + offset) : undefined;
    case 'QUOTE_SINGLE':
    case 'QUOTE_DOUBLE':
      return source.slice(start + 1, end - 1) === value ? pos(start + 1 + offset) : undefined;
    case 'BLOCK_LITERAL': {
      const inner = blockText(source, node, pos);
      if (inner === undefined) return undefined;
      const before = value.slice(0, offset);
      const lines = before.split('\n');
      const column = (lines[lines.length - 1] as string).length;
      return { line: inner.line + lines.length - 1, column: inner.indent + column + 1 };
    }
    default:
      return undefined;
  }
}

function locateInside(inner: BlockText, path: FieldPath, anchor: Anchor): Position | undefined {
  const parsed = parseYaml(inner.value, { maxAliasCount: 100 }).documents[0];
  if (parsed === undefined) return undefined;
  const at = parsed.locate(path, anchor);
  return { line: inner.line + at.line - 1, column: inner.indent + at.column };
}

/** Aliases that name no anchor before them, and aliases inside the node they refer to. */
function checkAliases(doc: AnyDocument): { offset: number; message: string }[] {
  const found: { offset: number; message: string }[] = [];
  visit(doc, {
    Alias(_key, node, ancestors) {
      const offset = node.range?.[0] ?? 0;
      const target = node.resolve(doc);
      if (target === undefined) {
        found.push({
          offset,
          message: `undefined alias *${node.source}: no anchor &${node.source} before it`,
        });
      } else if (ancestors.includes(target as never)) {
        found.push({
          offset,
          message: `recursive alias *${node.source}: it refers to the node that contains it`,
        });
      }
    },
  });
  return found;
}

/** Errors that concern one key or tag; any other error is in the syntax itself. */
const LOCAL_CODES: ReadonlySet<string> = new Set(['DUPLICATE_KEY', 'TAG_RESOLVE_FAILED']);

/** Syntax errors that come from a line indented too much or too little. */
const INDENT_CODES: ReadonlySet<string> = new Set([
  'BAD_INDENT',
  'BLOCK_AS_IMPLICIT_KEY',
  'MISSING_CHAR',
  'MULTILINE_IMPLICIT_KEY',
  'TAB_AS_INDENT',
  'UNEXPECTED_TOKEN',
]);

/**
 * After the first syntax error the parser's view of the document is lost, and what it reports
 * next follows from that one mistake: report the first alone. Key and tag errors are each real.
 */
function reportedIssues(issues: readonly YAMLError[]): readonly YAMLError[] {
  const syntax = issues
    .filter((issue) => !LOCAL_CODES.has(issue.code))
    .sort((a, b) => a.pos[0] - b.pos[0]);
  return syntax.length > 0 ? syntax.slice(0, 1) : issues;
}

function yamlMessage(issue: YAMLError, doc: AnyDocument): string {
  switch (issue.code) {
    case 'DUPLICATE_KEY':
      return `duplicate key${duplicateKey(doc, issue.pos[0])}: each key may appear only once in a mapping`;
    case 'TAG_RESOLVE_FAILED':
      return `${issue.message.replace(/\.$/, '')}: custom tags are not supported`;
    default: {
      const text = issue.message.split('\n')[0]?.replace(/ at line \d+, column \d+.*$/, '');
      const hint = INDENT_CODES.has(issue.code)
        ? ' (check the indentation of this line and the next)'
        : '';
      return `invalid YAML: ${text}${hint}`;
    }
  }
}

/** The key (as written) of the mapping entry whose key starts at `offset`. */
function duplicateKey(doc: AnyDocument, offset: number): string {
  let key = '';
  visit(doc, {
    Pair(_i, pair) {
      const node = pair.key as Node | null;
      if (node?.range?.[0] === offset) {
        key = ` ${JSON.stringify(String(isScalar(node) ? node.value : node))}`;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return key;
}

interface Found {
  /** The node the path ends at, or the deepest existing ancestor. */
  readonly node: Node | null;
  /** The key node of the last segment when the path resolved completely through a mapping. */
  readonly key: Node | null;
  readonly complete: boolean;
  /** How many segments of the path were followed. */
  readonly depth: number;
}

function find(doc: AnyDocument, path: FieldPath): Found {
  let node: Node | null = doc.contents;
  let key: Node | null = null;
  let depth = 0;
  for (const segment of path) {
    // Descend through an alias to the anchored node; the final node itself is not dereferenced,
    // so an error points at the `*alias` the user wrote at that place.
    const container: unknown = isAlias(node) ? node.resolve(doc) : node;
    let next: Node | null | undefined;
    let nextKey: Node | null = null;
    if (isMap(container)) {
      const pair = container.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
      );
      if (pair !== undefined) {
        nextKey = isScalar(pair.key) ? pair.key : null;
        // `key:` with no value has a null value node: point at the key instead.
        next = (pair.value as Node | null) ?? nextKey;
      }
    } else if (isSeq(container) && typeof segment === 'number') {
      next = container.items[segment] as Node | undefined;
    }
    if (next === undefined || next === null) return { node, key, complete: false, depth };
    node = next;
    key = nextKey;
    depth += 1;
  }
  return { node, key, complete: true, depth };
}
