/**
 * CEL in a traffic policy, on the client side: rule expressions and the `${expr}` interpolations
 * of string config values, each parsed by a real CEL implementation (@bufbuild/cel). What is
 * hand-written here is only where an interpolation ends (its matching `}`), which the policy
 * syntax defines and no CEL parser knows.
 */
import { parse } from '@bufbuild/cel';

/** Undefined when `text` parses as CEL, else the parser's message. */
export function celProblem(text: string): string | undefined {
  try {
    parse(text);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * What is wrong with the `${...}` interpolations of a string value, if anything: an unterminated
 * one, or one whose expression is not CEL. The end of an interpolation is its matching `}`: the
 * braces of CEL map literals and braces inside CEL string literals do not end it.
 */
export function interpolationProblem(text: string): string | undefined {
  let at = text.indexOf('${');
  while (at >= 0) {
    const start = at + 2;
    const end = matchingBrace(text, start);
    if (end < 0) return `unterminated \${ at offset ${at}`;
    const expr = text.slice(start, end);
    const why = celProblem(expr);
    if (why !== undefined) return `\${${expr}} is not a CEL expression: ${why}`;
    at = text.indexOf('${', end + 1);
  }
  return undefined;
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

/** The expressions a string interpolates (`${...}`), or undefined when one is unterminated. */
export function interpolatedExpressions(text: string): string[] | undefined {
  const out: string[] = [];
  let at = text.indexOf('${');
  while (at >= 0) {
    const end = matchingBrace(text, at + 2);
    if (end < 0) return undefined;
    out.push(text.slice(at + 2, end));
    at = text.indexOf('${', end + 1);
  }
  return out;
}

/** Whether a CEL expression (one that parses) names the identifier `name` (`vars` in `vars.a`). */
export function namesIdent(text: string, name: string): boolean {
  let expr: unknown;
  try {
    expr = parse(text).expr;
  } catch {
    return false;
  }
  const stack: unknown[] = [expr];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const kind = (node as { exprKind?: { case?: string; value?: { name?: string } } }).exprKind;
    if (kind?.case === 'identExpr' && kind.value?.name === name) return true;
    for (const v of Object.values(node)) if (typeof v === 'object') stack.push(v);
  }
  return false;
}
