/**
 * CEL in a traffic policy, on the client side: rule expressions and the `${expr}` interpolations
 * of string config values, each parsed by a real CEL implementation (@bufbuild/cel). What is
 * hand-written here is only where an interpolation ends (its matching `}`), which the policy
 * syntax defines and no CEL parser knows.
 */
import { parse } from '@bufbuild/cel';

export type ParsedCel = ReturnType<typeof parse>;

/**
 * Parses kept by text, oldest dropped first past `PARSES_KEPT`: parsing is most of what CEL
 * costs (about half a millisecond an expression), and the same expressions are parsed by
 * validation, then by the evaluator and the preview's probes in the same run.
 */
const parses = new Map<string, ParsedCel | { readonly error: string }>();
const PARSES_KEPT = 8_192;

/** `text` parsed as CEL, or the parser's message. */
export function parseCel(text: string): ParsedCel | { readonly error: string } {
  let known = parses.get(text);
  if (known === undefined) {
    try {
      known = parse(text);
    } catch (err) {
      known = { error: err instanceof Error ? err.message : String(err) };
    }
    if (parses.size >= PARSES_KEPT) parses.delete(parses.keys().next().value as string);
    parses.set(text, known);
  }
  return known;
}

/** Undefined when `text` parses as CEL, else the parser's message. */
export function celProblem(text: string): string | undefined {
  const parsed = parseCel(text);
  return 'error' in parsed ? parsed.error : undefined;
}

/**
 * What is wrong with the `${...}` interpolations of a string value, if anything: an unterminated
 * one, or one whose expression is not CEL. The end of an interpolation is its matching `}`: the
 * braces of CEL map literals and braces inside CEL string literals do not end it.
 */
export function interpolationProblem(text: string): string | undefined {
  const split = splitInterpolations(text);
  if ('error' in split) return split.error;
  for (const part of split.parts) {
    if (typeof part === 'string') continue;
    const why = celProblem(part.expr);
    if (why !== undefined) return `\${${part.expr}} is not a CEL expression: ${why}`;
  }
  return undefined;
}

/**
 * A string value cut into its literal text and its `${expr}` interpolations, in order (the
 * evaluator fills them in), or the offset of an unterminated one.
 */
export function splitInterpolations(
  text: string,
): { readonly parts: (string | { readonly expr: string })[] } | { readonly error: string } {
  const parts: (string | { readonly expr: string })[] = [];
  let from = 0;
  let at = text.indexOf('${');
  while (at >= 0) {
    const start = at + 2;
    const end = matchingBrace(text, start);
    if (end < 0) return { error: `unterminated \${ at offset ${at}` };
    if (at > from) parts.push(text.slice(from, at));
    parts.push({ expr: text.slice(start, end) });
    from = end + 1;
    at = text.indexOf('${', from);
  }
  if (from < text.length || parts.length === 0) parts.push(text.slice(from));
  return { parts };
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
