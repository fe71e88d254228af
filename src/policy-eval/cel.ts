/**
 * CEL at run time for the evaluator: each expression run as `src/hosted/cel.ts` parsed and
 * checked it (`checkedCel`, kept by text: validation's parse is the one the evaluator runs, in
 * the service's environment with this folder's implementations of its functions,
 * ./functions.ts), and `${expr}` interpolation of config strings. Where a `${...}` ends is the
 * policy syntax's one rule (`interpolations`, src/hosted/cel.ts), which validation checks with.
 * Pure.
 */
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import {
  CEL_VARIABLES,
  type CelIssue,
  CHECKED_KEPT,
  celBoundIssue,
  celCheckingEnvironment,
  checkedCel,
  interpolations,
} from '../hosted/cel.js';
import { CelStringLike } from '../hosted/cel-values.js';
import { celJson, takeNotGiven } from './functions.js';

/**
 * A string value cut into its literal text and its `${expr}` interpolations, in order (the
 * evaluator fills them in), or the offset of an unterminated one.
 */
function splitInterpolations(
  text: string,
): { readonly parts: (string | { readonly expr: string })[] } | { readonly error: string } {
  const found = interpolations(text);
  if ('unterminated' in found) return { error: `unterminated \${ at offset ${found.unterminated}` };
  const parts: (string | { readonly expr: string })[] = [];
  let from = 0;
  for (const { expr, offset } of found.exprs) {
    const at = offset - 2;
    if (at > from) parts.push(text.slice(from, at));
    parts.push({ expr });
    from = offset + expr.length + 1;
  }
  if (from < text.length || parts.length === 0) parts.push(text.slice(from));
  return { parts };
}

export type CelOutcome = { readonly value: unknown } | { readonly error: string };

/** The message without the engine's code frame (which would quote the whole text). */
function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n')[0] ?? '').trim();
}

/**
 * Equality across kinds that the checker refuses (`req.headers['x'] == 'ops'`, a list compared
 * with a string) and the service decides at run time: never equal (CEL's heterogeneous
 * equality). Numbers of different kinds keep the engine's own comparison.
 */
const KINDS = ['string', 'int', 'double', 'bool', 'bytes', 'list', 'map', 'null'] as const;
const NUMBERS: ReadonlySet<string> = new Set(['int', 'double']);

let lenient: Environment | undefined;
const unchecked = new Map<string, ParseResult | undefined>();
const UNCHECKED_KEPT = 1_024;

/**
 * An expression validation refuses for its types only, as the service runs it: parsed in an
 * environment whose equality spans kinds, or undefined when even that one refuses it. Validation
 * keeps such a policy from being written; a test or a preview of it still says what it does.
 */
function uncheckedProgram(text: string): ParseResult | undefined {
  if (unchecked.has(text)) return unchecked.get(text);
  let program: ParseResult | undefined;
  if (celBoundIssue(text) === undefined) {
    if (lenient === undefined) {
      lenient = celCheckingEnvironment().clone();
      for (const [i, a] of KINDS.entries()) {
        for (const b of KINDS.slice(i + 1)) {
          if (!(NUMBERS.has(a) && NUMBERS.has(b)))
            lenient.registerOperator(`${a} == ${b}`, () => false);
        }
      }
    }
    try {
      const parsed = lenient.parse(text);
      program = parsed.check().valid ? parsed : undefined;
    } catch {
      program = undefined;
    }
  }
  if (unchecked.size >= UNCHECKED_KEPT) unchecked.delete(unchecked.keys().next().value as string);
  unchecked.set(text, program);
  return program;
}

/**
 * Evaluates one expression on `vars`, its variables (inside `enterRequest`, ./functions.ts). An
 * expression that does not parse or check is an error here as in validation.
 */
export function evalCel(expression: string, vars: Readonly<Record<string, unknown>>): CelOutcome {
  const checked = checkedCel(expression);
  const program = 'issue' in checked ? uncheckedProgram(expression) : checked.program;
  if (program === undefined)
    return { error: `not CEL: ${(checked as { issue: CelIssue }).issue.message}` };
  let result: unknown;
  takeNotGiven();
  try {
    result = program(vars);
  } catch (err) {
    takeNotGiven();
    return { error: firstLine(err) };
  }
  const missing = takeNotGiven();
  if (missing !== undefined) return { error: missing };
  return { value: result };
}

/**
 * `value` as the engine holds a variable `name` of its declared object type (`req`: `svc.Req`):
 * converted by the engine itself (the checked expression `name` run on it). Given the converted
 * value, an evaluation reads it as it is; given the plain one, the engine converts it again for
 * each expression. A value the engine refuses is returned as it is (each evaluation then says so).
 */
export function engineValue(name: string, value: unknown): unknown {
  const got = evalCel(name, { [name]: value });
  return 'error' in got ? value : got.value;
}

/**
 * What a guard's outcome depends on: `request`, the request's method, URL and headers (`req`,
 * the functions that read its headers, query and cookies) and the endpoint; `facts`, also what
 * the case gives (`conn`, `time`, the secrets of `secrets.get`); `run`, also what the actions
 * before it wrote (`vars`, `actions.svc`), or anything (it does not check).
 */
export type GuardReads = 'request' | 'facts' | 'run';

/** The variables an evaluation changes as it runs. */
const RUN_STATE: ReadonlySet<string> = new Set(['vars', 'actions']);
/** The variables (and the function namespace) that hold what the case gives, not the request. */
const FACTS: ReadonlySet<string> = new Set([
  ...Object.keys(CEL_VARIABLES).filter((name) => name !== 'req' && name !== 'endpoint'),
  'secrets',
]);
const reads = new Map<string, GuardReads>();

/**
 * What `expression`'s outcome depends on, read from the engine's syntax tree: an identifier
 * names it (a macro's own variable named like one counts too; other identifiers are macro
 * variables bound to what the expression reads, or namespaces of functions of their arguments).
 * Kept by text, bounded like the parses.
 */
export function guardReads(expression: string): GuardReads {
  const known = reads.get(expression);
  if (known !== undefined) return known;
  const checked = checkedCel(expression);
  let out: GuardReads = 'issue' in checked ? 'run' : 'request';
  if (!('issue' in checked)) {
    const stack: unknown[] = [checked.program.ast];
    while (out !== 'run' && stack.length > 0) {
      const node = stack.pop();
      if (Array.isArray(node)) for (const child of node) stack.push(child);
      else if (typeof node === 'object' && node !== null) {
        const { op, args } = node as { op?: unknown; args?: unknown };
        if (op === 'id' && typeof args === 'string') {
          if (RUN_STATE.has(args)) out = 'run';
          else if (FACTS.has(args)) out = 'facts';
        } else if (op !== 'value') stack.push(args);
      }
    }
  }
  if (reads.size >= CHECKED_KEPT) reads.delete(reads.keys().next().value as string);
  reads.set(expression, out);
  return out;
}

/** A CEL value as the service writes it into a string (ints without the bigint's `n`). */
export function celText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof CelStringLike) return value.text;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return celJson(value);
}

/**
 * A config string with its `${expr}` parts replaced by their values. `exact`: a value that is
 * one interpolation and nothing else keeps its CEL type (`set-vars`).
 */
export function interpolate(
  text: string,
  vars: Readonly<Record<string, unknown>>,
  exact = false,
): CelOutcome {
  // Most config strings interpolate nothing (an upstream URL, a header's value): no `${`, no
  // part to evaluate, the text itself (what the split below gives, without its arrays).
  if (!text.includes('${')) return { value: text };
  const parts = splitInterpolations(text);
  if ('error' in parts) return parts;
  const only = parts.parts.length === 1 ? parts.parts[0] : undefined;
  if (exact && only !== undefined && typeof only !== 'string') return evalCel(only.expr, vars);
  let out = '';
  for (const part of parts.parts) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const got = evalCel(part.expr, vars);
    if ('error' in got) return { error: `\${${part.expr}}: ${got.error}` };
    out += celText(got.value);
  }
  return { value: out };
}
