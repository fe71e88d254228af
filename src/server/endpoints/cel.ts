/**
 * A list's `filter`, through a real CEL implementation (@bufbuild/cel): bounded before it is
 * parsed (the service's expression bounds, src/hosted/cel.ts), bounded in what it may ask per
 * record (one level of macros, few literal elements), and evaluated against each record as
 * `obj` in slices that yield to the event loop, so that one account's filter never stalls the
 * server's other clients. Nothing here recognises CEL with a regular expression.
 */
import type { CelInput, celEnv, parse, plan } from '@bufbuild/cel';
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

type Node = { exprKind?: { case?: unknown; value?: unknown } };
const isObj = (node: unknown): boolean => {
  const kind = (node as Node | undefined)?.exprKind;
  return kind?.case === 'identExpr' && (kind.value as { name?: unknown }).name === 'obj';
};

const hasMembers = (fields: ReadonlySet<string>, field: string): boolean =>
  [...fields].some((f) => f.startsWith(`${field}.`));

/**
 * The first field of `obj` a parsed tree names that is not in `fields` (`obj.f`, `has(obj.f)`,
 * `obj['f']`, `obj.a.b` when only the member `a.b` is listed), or a description of a use of `obj` other than naming one of its fields.
 */
function unknownField(root: unknown, fields: ReadonlySet<string>): string | undefined {
  const named = new Set<unknown>();
  const stack: unknown[] = [root];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const kind = (node as Node).exprKind;
    if (kind?.case === 'selectExpr') {
      const { operand, field } = kind.value as { operand: unknown; field: string };
      const inner = (operand as Node | undefined)?.exprKind;
      if (isObj(operand)) {
        // A field listed only by its members (`a.b`) is named through one of them (below).
        if (!fields.has(field) && !named.has(node)) return `field "${field}"`;
        named.add(operand);
      } else if (inner?.case === 'selectExpr') {
        const { operand: root, field: parent } = inner.value as { operand: unknown; field: string };
        if (isObj(root) && !fields.has(parent) && hasMembers(fields, parent)) {
          if (!fields.has(`${parent}.${field}`)) return `field "${parent}.${field}"`;
          named.add(operand);
        }
      }
    } else if (kind?.case === 'callExpr') {
      const call = kind.value as { function: string; args: unknown[] };
      if (call.function === '_[_]' && isObj(call.args[0])) {
        const key = (call.args[1] as Node | undefined)?.exprKind;
        const constant =
          key?.case === 'constExpr'
            ? (key.value as { constantKind?: { case?: unknown; value?: unknown } }).constantKind
            : undefined;
        const field = constant?.case === 'stringValue' ? String(constant.value) : undefined;
        if (field === undefined) return 'a computed index of obj';
        if (!fields.has(field)) return `field "${field}"`;
        named.add(call.args[0]);
      }
    } else if (isObj(node) && !named.has(node)) {
      return 'obj itself (name one of its fields)';
    }
    for (const value of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof value === 'object' && value !== null) stack.push(value);
    }
  }
  return undefined;
}

/**
 * A list filter: a predicate over records in their read shape. A filter that is too long or
 * nested too deeply (checked before parsing), does not parse, nests macros or writes too many
 * literal elements is a 400 `invalid_cel_expression`. A record on which it fails to evaluate
 * (for example a field the record omits because it is empty) does not match; a result that is
 * not a bool is a 400 too, since the filter can then match nothing meaningfully.
 */
export function compileFilter(
  text: string,
  /** The kind's filterable fields; a filter naming another one is refused. All when absent. */
  fields?: ReadonlySet<string>,
): (obj: CelInput) => boolean {
  const bound = celBoundIssue(text);
  if (bound !== undefined) throw invalidFilter(`filter refused: ${bound.message}`);
  let run: ReturnType<typeof plan>;
  let size: { nesting: number; literals: number };
  let parsed: ReturnType<typeof parse>;
  try {
    const { celEnv, parse, plan } = bufCel();
    parsed = parse(text);
    size = measure(parsed.expr);
    filterEnv ??= celEnv();
    run = plan(filterEnv, parsed);
  } catch (err) {
    throw invalidFilter(`filter is not a CEL expression: ${(err as Error).message}`);
  }
  const stray = fields === undefined ? undefined : unknownField(parsed.expr, fields);
  if (stray !== undefined) {
    throw invalidFilter(`filter names ${stray}; filterable: ${[...(fields ?? [])].join(', ')}`);
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
