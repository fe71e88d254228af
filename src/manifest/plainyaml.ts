/**
 * The first tier of YAML reading: a reader for the plain subset manifests are written in, about
 * three times faster than js-yaml and allocating little besides the values it returns (js-yaml
 * made 180 MB of garbage reading 10,000 edges, most of it per flow collection).
 *
 * The subset: block mappings and sequences (a sequence may sit at its key's indent; a sequence
 * item may open a compact mapping), flow mappings and sequences on one line, single-line plain,
 * single-quoted and double-quoted scalars (JSON's escapes only), comments and `---` between
 * documents. Plain scalars are resolved by js-yaml's own core-schema types, so `1.3`, `0o17`,
 * `~` or `True` mean here exactly what they mean there; keys are resolved the same way and made
 * strings, as js-yaml does.
 *
 * It never decides anything: on whatever is outside the subset (anchors, aliases, tags, block
 * scalars, multi-line scalars or flow collections, complex keys, duplicate keys, tabs, CR,
 * control or non-BMP characters, a root that is not a mapping, any syntax error) it returns
 * undefined and the caller falls back to js-yaml, then to `yaml`, as before. A property test
 * checks it against js-yaml: same values and same positions wherever it answers, and no answer
 * where js-yaml fails.
 */
import { CORE_SCHEMA } from 'js-yaml';
import type { FastDocument } from './fastyaml.js';
import type { Position } from './yaml.js';

interface ImplicitType {
  resolve(data: string | null): boolean;
  construct(data: string | null): unknown;
}

/** js-yaml's implicit scalar types of the core schema (null, bool, int, float), in its order. */
const IMPLICIT: readonly ImplicitType[] | undefined = (() => {
  const list = (CORE_SCHEMA as unknown as { compiledImplicit?: unknown }).compiledImplicit;
  return Array.isArray(list) &&
    list.every(
      (t: unknown) =>
        typeof (t as ImplicitType).resolve === 'function' &&
        typeof (t as ImplicitType).construct === 'function',
    )
    ? (list as ImplicitType[])
    : undefined;
})();

/**
 * Text the subset never reads: tabs, CR, a BOM, C0 and C1 controls (NEL too), surrogates
 * (characters beyond the BMP), U+FFFE and U+FFFF.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const UNSUPPORTED = /[\x00-\x09\x0B-\x1F\x7F-\x9F\uD800-\uDFFF\uFEFF\uFFFE\uFFFF]/;

/** YAML's bound on an implicit key. */
const MAX_KEY_LENGTH = 1024;

/** Deeper nesting is left to the other readers (and their limits): no manifest nests this far. */
const MAX_DEPTH = 64;

/** Collections deeper than this (root 0, `routes` 1, a route 2) need no position. */
const MAX_POSITION_DEPTH = 2;

/** Thrown inside the reader when the text leaves the subset; never escapes `readPlainYaml`. */
class Decline {}
const DECLINE = new Decline();

const SPACE = 0x20;
const NEWLINE = 0x0a;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const COMMA = 0x2c;
const SINGLE = 0x27;
const DOUBLE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_MAP = 0x7b;
const CLOSE_MAP = 0x7d;
const OPEN_SEQ = 0x5b;
const CLOSE_SEQ = 0x5d;

function isFlowIndicator(c: number): boolean {
  return c === COMMA || c === OPEN_SEQ || c === CLOSE_SEQ || c === OPEN_MAP || c === CLOSE_MAP;
}

/** End of line or of text (`charCodeAt` past the end is NaN). */
function isEnd(c: number): boolean {
  return c === NEWLINE || Number.isNaN(c);
}

function isSpaceOrEnd(c: number): boolean {
  return c === SPACE || isEnd(c);
}

/** First characters a plain scalar may not start with here: indicators and the unsupported. */
function isIndicatorStart(c: number): boolean {
  // # & * ! | > ' " % @ ` and flow indicators; `?`, `-` and `:` are decided by what follows.
  return (
    c === HASH ||
    c === 0x26 ||
    c === 0x2a ||
    c === 0x21 ||
    c === 0x7c ||
    c === 0x3e ||
    c === SINGLE ||
    c === DOUBLE ||
    c === 0x25 ||
    c === 0x40 ||
    c === 0x60 ||
    isFlowIndicator(c)
  );
}

/**
 * Whether a plain scalar (or key) may start with `c` followed by `next`: not an indicator, and
 * `?`, `-` or `:` only when followed by something that is not a space (nor, in a flow
 * collection, a flow indicator).
 */
function mayStartPlain(c: number, next: number, inFlow: boolean): boolean {
  if (isIndicatorStart(c) || isSpaceOrEnd(c)) return false;
  if (c !== 0x3f /* ? */ && c !== DASH && c !== COLON) return true;
  return !isSpaceOrEnd(next) && !(inFlow && isFlowIndicator(next));
}

/** Characters a core-schema null, bool, int or float can start with. */
function mayBeImplicit(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b || // +
    c === DASH ||
    c === 0x2e || // .
    c === 0x7e || // ~
    c === 0x6e || // n
    c === 0x4e || // N
    c === 0x74 || // t
    c === 0x54 || // T
    c === 0x66 || // f
    c === 0x46 // F
  );
}

/** Keys of a `{ env }` / `{ file }` reference. */
function isRefKey(key: string): boolean {
  return key === 'env' || key === 'file';
}

function resolvePlain(text: string, types: readonly ImplicitType[]): unknown {
  if (text.length > 0 && !mayBeImplicit(text.charCodeAt(0))) return detach(text);
  for (const type of types) if (type.resolve(text)) return type.construct(text);
  return detach(text);
}

/**
 * `text` as a string of its own. V8 keeps a slice of 13 characters or more as a view into the
 * string it was cut from, so every value read from a file kept the whole file's text alive
 * for as long as the value (8 MB for 10,000 edges, the plan's whole life). A concatenation,
 * sliced again, is flattened into a copy first; the file's text can then go.
 */
function detach(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

/** Escapes JSON and YAML read alike (YAML has more; any other escape is declined). */
const JSON_ESCAPE = /\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})/g;

class Reader {
  readonly #s: string;
  readonly #types: readonly ImplicitType[];
  #pos = 0;
  #line = 0;
  #lineStart = 0;
  readonly positions = new Map<object, Position>();
  /** Set when a mapping whose keys are all `env` or `file` was read in this document. */
  #referenceLike = false;

  constructor(text: string, types: readonly ImplicitType[]) {
    this.#s = text;
    this.#types = types;
  }

  documents(): FastDocument[] {
    const out: FastDocument[] = [];
    const positions = this.positions;
    const positionOf = (node: object) => positions.get(node);
    let first = true;
    for (;;) {
      this.#skipBlankLines();
      if (this.#atEnd()) return out;
      if (this.#atSeparator()) {
        this.#pos += 3;
        this.#restOfLine();
        this.#skipBlankLines();
      } else if (!first) {
        throw DECLINE;
      }
      first = false;
      if (this.#atEnd() || this.#atSeparator()) continue; // an empty document
      const indent = this.#pos - this.#lineStart;
      this.#referenceLike = false;
      const value = this.#blockNode(indent, 0, true);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw DECLINE;
      const start = positions.get(value);
      if (start === undefined) throw DECLINE;
      // `__proto__` keys are declined, so only references matter.
      out.push({ value, start, positionOf, referenceFree: !this.#referenceLike });
      this.#skipBlankLines();
      if (!this.#atEnd() && !this.#atSeparator()) throw DECLINE;
    }
  }

  // ---- lines ----------------------------------------------------------------------------------

  #atEnd(): boolean {
    return this.#pos >= this.#s.length;
  }

  #char(offset = 0): number {
    return this.#s.charCodeAt(this.#pos + offset);
  }

  /** Keeps where `node` starts (line and column of its first character), when it may be asked. */
  #remember(node: object, depth: number, line: number, column: number): void {
    if (depth > MAX_DEPTH) throw DECLINE;
    if (depth <= MAX_POSITION_DEPTH)
      this.positions.set(node, { line: line + 1, column: column + 1 });
  }

  /** `---` at the start of a line, followed by a space or the end of the line. */
  #atSeparator(): boolean {
    const s = this.#s;
    const p = this.#pos;
    if (p !== this.#lineStart) return false;
    if (s.startsWith('...', p) && isSpaceOrEnd(s.charCodeAt(p + 3))) throw DECLINE;
    if (s.charCodeAt(p) === 0x25 /* % directive */) throw DECLINE;
    return s.startsWith('---', p) && isSpaceOrEnd(s.charCodeAt(p + 3));
  }

  /**
   * From anywhere on a line: spaces, then a comment or nothing, up to the next line; moves to its
   * start. Anything else left on the line is outside the subset.
   */
  #restOfLine(): void {
    const s = this.#s;
    let p = this.#pos;
    const before = p;
    while (s.charCodeAt(p) === SPACE) p += 1;
    const c = s.charCodeAt(p);
    if (c === HASH) {
      // A comment needs a space before it (or the start of the line).
      if (p === before && p !== this.#lineStart && s.charCodeAt(p - 1) !== SPACE) throw DECLINE;
      const eol = s.indexOf('\n', p);
      p = eol === -1 ? s.length : eol;
    } else if (!isEnd(c)) {
      throw DECLINE;
    }
    this.#pos = p;
    if (p < s.length) this.#newLine(p + 1);
  }

  #newLine(at: number): void {
    this.#pos = at;
    this.#lineStart = at;
    this.#line += 1;
  }

  /** Skips lines that are empty, all spaces or a comment; stops at the next content's start. */
  #skipBlankLines(): void {
    const s = this.#s;
    for (;;) {
      let p = this.#pos;
      while (s.charCodeAt(p) === SPACE) p += 1;
      const c = s.charCodeAt(p);
      if (c === HASH) {
        const eol = s.indexOf('\n', p);
        if (eol === -1) {
          this.#pos = s.length;
          return;
        }
        this.#newLine(eol + 1);
      } else if (c === NEWLINE) {
        this.#newLine(p + 1);
      } else if (Number.isNaN(c)) {
        this.#pos = s.length;
        return;
      } else {
        this.#pos = p;
        return;
      }
    }
  }

  /** Column (0-based) of the current position: the indent when it stands on a line's content. */
  #indent(): number {
    return this.#pos - this.#lineStart;
  }

  // ---- block structure --------------------------------------------------------------------------

  /**
   * A block node starting at the current position (on the line's content): a sequence, a
   * mapping or (when `collectionOnly` is false) a flow collection or scalar on this line.
   */
  #blockNode(indent: number, depth: number, collectionOnly: boolean): unknown {
    const c = this.#char();
    if (c === DASH && isSpaceOrEnd(this.#char(1))) return this.#blockSequence(indent, depth);
    const line = this.#line;
    const key = this.#tryKey();
    if (key !== undefined) return this.#blockMapping(indent, depth, key, line);
    if (collectionOnly) throw DECLINE;
    const value = this.#inlineValue(depth);
    this.#restOfLine();
    return value;
  }

  /**
   * A flow collection or a single-line scalar: a value on the line of its key or dash, or an
   * entry of a flow collection (`inFlow`).
   */
  #inlineValue(depth: number, inFlow = false): unknown {
    const c = this.#char();
    if (c === OPEN_MAP || c === OPEN_SEQ) return this.#flowCollection(depth);
    if (c === SINGLE || c === DOUBLE) return this.#quoted(c);
    return this.#plain(inFlow);
  }

  /**
   * The value after `key:` or `- `: on the same line, or the block on the lines below (more
   * indented than `indent`, or, for a sequence under a key, at the key's indent), or null.
   */
  #valueAfter(indent: number, depth: number, sequenceAtIndent: boolean): unknown {
    const s = this.#s;
    while (s.charCodeAt(this.#pos) === SPACE) this.#pos += 1;
    const c = this.#char();
    if (!isEnd(c) && c !== HASH) {
      if (c === DASH && isSpaceOrEnd(this.#char(1))) throw DECLINE; // `key: - a`, `- - a`
      // `a: b: c` is an error: the scalar stops at the second colon, which `#restOfLine` refuses.
      const value = this.#inlineValue(depth);
      this.#restOfLine();
      return value;
    }
    this.#restOfLine();
    this.#skipBlankLines();
    if (this.#atEnd() || this.#atSeparator()) return null;
    const inner = this.#indent();
    const dash = this.#char() === DASH && isSpaceOrEnd(this.#char(1));
    if (inner > indent || (sequenceAtIndent && inner === indent && dash)) {
      return this.#blockNode(inner, depth, true);
    }
    return null;
  }

  /** A block mapping whose first key (at column `indent` of `line`) was just read. */
  #blockMapping(indent: number, depth: number, firstKey: string, line: number): object {
    const map: Record<string, unknown> = {};
    this.#remember(map, depth, line, indent);
    let key: string | undefined = firstKey;
    let refKeys = true;
    for (;;) {
      const name = key;
      if (name === '__proto__' || name === '<<' || Object.hasOwn(map, name)) throw DECLINE;
      refKeys &&= isRefKey(name);
      map[name] = this.#valueAfter(indent, depth + 1, true);
      this.#skipBlankLines();
      if (this.#atEnd() || this.#atSeparator()) break;
      const next = this.#indent();
      if (next < indent) break;
      if (next > indent) throw DECLINE;
      if (this.#char() === DASH && isSpaceOrEnd(this.#char(1))) {
        // A sequence at a key's indent belongs to that key, handled above; here it is an error
        // unless the parent is done (a sequence's compact mapping ending at its next item).
        break;
      }
      key = this.#tryKey();
      if (key === undefined) throw DECLINE;
    }
    if (refKeys) this.#referenceLike = true;
    return map;
  }

  #blockSequence(indent: number, depth: number): unknown[] {
    const list: unknown[] = [];
    this.#remember(list, depth, this.#line, indent);
    for (;;) {
      this.#pos += 1; // the dash
      while (this.#char() === SPACE) this.#pos += 1;
      const column = this.#indent();
      const key = isEnd(this.#char()) || this.#char() === HASH ? undefined : this.#tryKey();
      if (key !== undefined) {
        // `- key: value`: a compact mapping whose keys line up with this one.
        list.push(this.#blockMapping(column, depth + 1, key, this.#line));
      } else {
        list.push(this.#valueAfter(indent, depth + 1, false));
      }
      this.#skipBlankLines();
      if (this.#atEnd() || this.#atSeparator()) return list;
      const next = this.#indent();
      if (next < indent) return list;
      if (next > indent) throw DECLINE;
      if (!(this.#char() === DASH && isSpaceOrEnd(this.#char(1)))) return list;
    }
  }

  /**
   * A block mapping key at the current position, followed by `:` and a space or the end of the
   * line: consumed up to after the colon. Undefined (nothing consumed) when there is none.
   */
  #tryKey(): string | undefined {
    const s = this.#s;
    const start = this.#pos;
    const c = s.charCodeAt(start);
    let key: string;
    if (c === SINGLE || c === DOUBLE) {
      key = this.#quoted(c);
      while (s.charCodeAt(this.#pos) === SPACE) this.#pos += 1;
      if (s.charCodeAt(this.#pos) !== COLON || !isSpaceOrEnd(s.charCodeAt(this.#pos + 1))) {
        this.#pos = start;
        return undefined;
      }
    } else {
      if (!mayStartPlain(c, s.charCodeAt(start + 1), false)) return undefined;
      let p = start;
      let end = start;
      for (;;) {
        const ch = s.charCodeAt(p);
        if (isEnd(ch)) return undefined;
        if (ch === COLON && isSpaceOrEnd(s.charCodeAt(p + 1))) break;
        if (ch === HASH && s.charCodeAt(p - 1) === SPACE) return undefined;
        if (ch !== SPACE) end = p + 1;
        p += 1;
      }
      if (end - start > MAX_KEY_LENGTH) throw DECLINE;
      this.#pos = p;
      key = String(resolvePlain(s.slice(start, end), this.#types));
    }
    this.#pos += 1; // the colon
    return key;
  }

  // ---- scalars ----------------------------------------------------------------------------------

  /** A plain scalar on this line (in a flow collection: up to a flow indicator too). */
  #plain(inFlow: boolean): unknown {
    const s = this.#s;
    const start = this.#pos;
    const c = s.charCodeAt(start);
    if (!mayStartPlain(c, s.charCodeAt(start + 1), inFlow)) throw DECLINE;
    let p = start;
    let end = start;
    for (;;) {
      const ch = s.charCodeAt(p);
      if (isEnd(ch)) break;
      if (ch === COLON) {
        const next = s.charCodeAt(p + 1);
        if (isSpaceOrEnd(next) || (inFlow && isFlowIndicator(next))) break;
      } else if (ch === HASH) {
        if (s.charCodeAt(p - 1) === SPACE) break;
      } else if (inFlow && isFlowIndicator(ch)) {
        break;
      }
      if (ch !== SPACE) end = p + 1;
      p += 1;
    }
    this.#pos = end;
    return resolvePlain(s.slice(start, end), this.#types);
  }

  /** A quoted scalar that ends on this line. */
  #quoted(quote: number): string {
    const s = this.#s;
    const start = this.#pos + 1;
    if (quote === SINGLE) {
      let p = start;
      let doubled = false;
      for (;;) {
        const ch = s.charCodeAt(p);
        if (isEnd(ch)) throw DECLINE;
        if (ch === SINGLE) {
          if (s.charCodeAt(p + 1) !== SINGLE) break;
          doubled = true;
          p += 2;
        } else {
          p += 1;
        }
      }
      this.#pos = p + 1;
      const raw = s.slice(start, p);
      return doubled ? raw.replaceAll("''", "'") : detach(raw);
    }
    let p = start;
    let escaped = false;
    for (;;) {
      const ch = s.charCodeAt(p);
      if (isEnd(ch)) throw DECLINE;
      if (ch === DOUBLE) break;
      if (ch === BACKSLASH) {
        if (isEnd(s.charCodeAt(p + 1))) throw DECLINE;
        escaped = true;
        p += 2;
      } else {
        p += 1;
      }
    }
    this.#pos = p + 1;
    const raw = s.slice(start, p);
    if (!escaped) return detach(raw);
    // Every escape must be one JSON reads the same way; then JSON decodes them.
    if (raw.replace(JSON_ESCAPE, '').includes('\\')) throw DECLINE;
    return JSON.parse(`"${raw}"`) as string;
  }

  // ---- flow collections -------------------------------------------------------------------------

  #skipFlowSpaces(): void {
    const s = this.#s;
    while (s.charCodeAt(this.#pos) === SPACE) this.#pos += 1;
    // A flow collection continued on the next line, or a comment inside one: not in the subset.
    const c = s.charCodeAt(this.#pos);
    if (isEnd(c) || c === HASH) throw DECLINE;
  }

  /** After a flow entry: a comma (then the next entry, or `close` after a trailing comma) or `close`. */
  #afterFlowEntry(close: number): void {
    this.#skipFlowSpaces();
    const c = this.#char();
    if (c === COMMA) {
      this.#pos += 1;
      this.#skipFlowSpaces();
    } else if (c !== close) {
      throw DECLINE;
    }
  }

  #flowCollection(depth: number): object {
    const line = this.#line;
    const column = this.#indent();
    const open = this.#char();
    this.#pos += 1;
    if (open === OPEN_SEQ) {
      const list: unknown[] = [];
      this.#remember(list, depth, line, column);
      this.#skipFlowSpaces();
      while (this.#char() !== CLOSE_SEQ) {
        list.push(this.#inlineValue(depth + 1, true));
        this.#afterFlowEntry(CLOSE_SEQ);
      }
      this.#pos += 1;
      return list;
    }
    const map: Record<string, unknown> = {};
    this.#remember(map, depth, line, column);
    this.#skipFlowSpaces();
    while (this.#char() !== CLOSE_MAP) {
      const c = this.#char();
      if (c === OPEN_MAP || c === OPEN_SEQ) throw DECLINE; // a collection as a key
      const key = String(c === SINGLE || c === DOUBLE ? this.#quoted(c) : this.#plain(true));
      this.#skipFlowSpaces();
      if (this.#char() !== COLON) throw DECLINE; // a key without a value
      this.#pos += 1;
      this.#skipFlowSpaces();
      const next = this.#char();
      const value =
        next === COMMA || next === CLOSE_MAP ? null : this.#inlineValue(depth + 1, true);
      if (key === '__proto__' || key === '<<' || Object.hasOwn(map, key)) throw DECLINE;
      if (isRefKey(key)) this.#referenceLike = true;
      map[key] = value;
      this.#afterFlowEntry(CLOSE_MAP);
    }
    this.#pos += 1;
    return map;
  }
}

/**
 * The documents of `text` (empty ones left out), or undefined when the text is not in the
 * subset. Each document's root is a mapping.
 */
export function readPlainYaml(text: string): FastDocument[] | undefined {
  if (IMPLICIT === undefined || UNSUPPORTED.test(text)) return undefined;
  try {
    return new Reader(text, IMPLICIT).documents();
  } catch (err) {
    if (err === DECLINE) return undefined;
    throw err;
  }
}
