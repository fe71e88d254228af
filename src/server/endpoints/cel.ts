/**
 * CEL for the endpoints API, always through a real CEL implementation (@bufbuild/cel): the
 * expressions of policy rules and the `${...}` interpolations in their string config values are
 * parsed, and a list's `filter` is parsed and evaluated against each record as `obj`. Nothing
 * here recognises CEL with a regular expression.
 */
import { type CelInput, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { RequestError } from '../errors.js';
import { ENDPOINT_ERROR_CODE } from './codes.js';

/** Undefined when `text` parses as CEL, else the parser's message. */
export function celSyntaxError(text: string): string | undefined {
  try {
    parse(text);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * The expressions a string config value interpolates with `${expr}`, or an error for an
 * unterminated one. The end of an interpolation is its matching `}`: braces of CEL map literals
 * and braces inside CEL string literals do not end it.
 */
export function interpolations(text: string): { exprs: string[] } | { error: string } {
  const exprs: string[] = [];
  let at = text.indexOf('${');
  while (at >= 0) {
    const start = at + 2;
    const end = matchingBrace(text, start);
    if (end < 0) return { error: `unterminated \${ at offset ${at}` };
    exprs.push(text.slice(start, end));
    at = text.indexOf('${', end + 1);
  }
  return { exprs };
}

function matchingBrace(text: string, from: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

const filterEnv = celEnv();
/**
 * Macros (`all`, `exists`, `map`, `filter`) nested in a filter multiply its cost per record by
 * the size of each list; one level is enough to ask about a record, and bounds the work a
 * single request can demand (a filter runs on every record of the account).
 */
const MAX_MACRO_NESTING = 1;

/** The deepest nesting of comprehensions (macros) in a parsed expression tree. */
function macroNesting(node: unknown): number {
  if (typeof node !== 'object' || node === null) return 0;
  let deepest = 0;
  for (const value of Array.isArray(node) ? node : Object.values(node)) {
    deepest = Math.max(deepest, macroNesting(value));
  }
  const kind = (node as { exprKind?: { case?: unknown } }).exprKind?.case;
  return kind === 'comprehensionExpr' ? deepest + 1 : deepest;
}

/**
 * A list filter: a predicate over records in their read shape. A filter that does not parse is
 * a 400 `invalid_cel_expression`. A record on which it fails to evaluate (for example a field the
 * record omits because it is empty) does not match; a result that is not a bool is a 400 too,
 * since the filter can then match nothing meaningfully.
 */
export function compileFilter(text: string): (obj: CelInput) => boolean {
  let run: ReturnType<typeof plan>;
  let nesting: number;
  try {
    const parsed = parse(text);
    // Inside the try: a tree the parser accepted may still be too deep to walk (RangeError).
    nesting = macroNesting(parsed.expr);
    run = plan(filterEnv, parsed);
  } catch (err) {
    throw invalidFilter(`filter is not a CEL expression: ${(err as Error).message}`);
  }
  if (nesting > MAX_MACRO_NESTING) {
    throw invalidFilter('filter nests macros (all, exists, map, filter) inside each other');
  }
  return (obj) => {
    const result = run({ obj });
    if (isCelError(result)) return false;
    if (typeof result !== 'boolean') {
      throw invalidFilter(`filter must evaluate to a bool, got ${typeof result}`);
    }
    return result;
  };
}

function invalidFilter(message: string): RequestError {
  return new RequestError(400, ENDPOINT_ERROR_CODE.invalidCel, message);
}
