/**
 * A list's `filter`, through a real CEL implementation (@bufbuild/cel): bounded before it is
 * parsed (the service's expression bounds, src/hosted/cel.ts), bounded in what it may ask per
 * record (one level of macros, few literal elements), and evaluated against each record as
 * `obj` in slices that yield to the event loop, so that one account's filter never stalls the
 * server's other clients. Nothing here recognises CEL with a regular expression.
 */
import type { CelInput, celEnv, plan } from '@bufbuild/cel';
import { celBoundIssue } from '../../hosted/cel.js';
import { bufCel } from '../../hosted/cel-libraries.js';
import { RequestError } from '../errors.js';
import { ENDPOINT_ERROR_CODE } from './codes.js';

let filterEnv: ReturnType<typeof celEnv> | undefined;

/**
 * What one filter may ask of each record. Macros (`all`, `exists`, `map`, `filter`) nested in a
 * filter multiply its cost per record by the size of each list, and a macro over a literal list
 * costs that list's length: one level of macros and a few literal elements keep the work per
 * record small (a filter runs on every record of the account).
 */
export const FILTER_LIMITS = { maxMacroNesting: 1, maxLiteralElements: 100 } as const;

/** The deepest nesting of comprehensions (macros) and the literal elements of a parsed tree. */
function measure(root: unknown): { nesting: number; literals: number } {
  let literals = 0;
  // Iterative: a chain of `&&` is as deep as it is long.
  const seen = new Set<object>();
  const stack: { node: object; depth: number }[] = [];
  if (typeof root === 'object' && root !== null) stack.push({ node: root, depth: 0 });
  let nesting = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: object; depth: number };
    if (seen.has(node)) continue;
    seen.add(node);
    const kind = (node as { exprKind?: { case?: unknown; value?: unknown } }).exprKind;
    const here = kind?.case === 'comprehensionExpr' ? depth + 1 : depth;
    if (kind?.case === 'listExpr') {
      literals += ((kind.value as { elements?: unknown[] }).elements ?? []).length;
    } else if (kind?.case === 'structExpr') {
      literals += ((kind.value as { entries?: unknown[] }).entries ?? []).length;
    }
    nesting = Math.max(nesting, here);
    for (const value of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof value === 'object' && value !== null) stack.push({ node: value, depth: here });
    }
  }
  return { nesting, literals };
}

/**
 * A list filter: a predicate over records in their read shape. A filter that is too long or
 * nested too deeply (checked before parsing), does not parse, nests macros or writes too many
 * literal elements is a 400 `invalid_cel_expression`. A record on which it fails to evaluate
 * (for example a field the record omits because it is empty) does not match; a result that is
 * not a bool is a 400 too, since the filter can then match nothing meaningfully.
 */
export function compileFilter(text: string): (obj: CelInput) => boolean {
  const bound = celBoundIssue(text);
  if (bound !== undefined) throw invalidFilter(`filter refused: ${bound.message}`);
  let run: ReturnType<typeof plan>;
  let size: { nesting: number; literals: number };
  try {
    const { celEnv, parse, plan } = bufCel();
    const parsed = parse(text);
    size = measure(parsed.expr);
    filterEnv ??= celEnv();
    run = plan(filterEnv, parsed);
  } catch (err) {
    throw invalidFilter(`filter is not a CEL expression: ${(err as Error).message}`);
  }
  if (size.nesting > FILTER_LIMITS.maxMacroNesting) {
    throw invalidFilter('filter nests macros (all, exists, map, filter) inside each other');
  }
  if (size.literals > FILTER_LIMITS.maxLiteralElements) {
    throw invalidFilter(
      `filter writes ${size.literals} list or map elements; at most ${FILTER_LIMITS.maxLiteralElements} are allowed`,
    );
  }
  return (obj) => {
    const result = run({ obj });
    if (bufCel().isCelError(result)) return false;
    if (typeof result !== 'boolean') {
      throw invalidFilter(`filter must evaluate to a bool, got ${typeof result}`);
    }
    return result;
  };
}

function invalidFilter(message: string): RequestError {
  return new RequestError(400, ENDPOINT_ERROR_CODE.invalidCel, message);
}

/** Work done between two yields to the event loop, in milliseconds. */
const SLICE_MS = 5;

/**
 * The first `wanted` of `items` (in order) that `keep` accepts, found in slices of about
 * `SLICE_MS` that each end by yielding to the event loop: other requests are answered in
 * between, however long the whole scan takes.
 */
export async function firstKept<T>(
  items: readonly T[],
  keep: (item: T) => boolean,
  wanted: number,
  clock: () => number = () => performance.now(),
): Promise<T[]> {
  const found: T[] = [];
  let sliceStart = clock();
  for (const item of items) {
    if (keep(item)) {
      found.push(item);
      if (found.length >= wanted) break;
    }
    if (clock() - sliceStart >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = clock();
    }
  }
  return found;
}
