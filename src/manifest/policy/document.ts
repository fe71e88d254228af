/**
 * A traffic policy written as a string: the YAML or JSON document inside it, read with `yaml`
 * (the one YAML reader; JSON is YAML) under the rules the service applies to the text it is
 * sent: exactly one document (a second is an error, never dropped), the core schema, duplicate keys and unknown tags refused, alias
 * expansion and nesting bounded. Pure.
 */
import { LineCounter, parseDocument } from 'yaml';

const MAX_ALIASES = 100;

/** A policy is exactly one document: a second one (after `---`) is refused, never dropped. */
const MULTIPLE_DOCUMENTS =
  'holds more than one YAML document (a policy is exactly one document: merge the rules into one, or remove the "---")';
const MAX_DEPTH = 64;

export type PolicyText =
  | { readonly value: unknown }
  | { readonly error: string; readonly at?: { readonly line: number; readonly column: number } };

export function readPolicyText(text: string): PolicyText {
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, {
      schema: 'core',
      uniqueKeys: true,
      strict: true,
      prettyErrors: false,
      // Not 'silent': that level also drops the error for a second document, and the parser
      // would hand back the first one alone (a policy's later rules silently lost).
      logLevel: 'error',
      lineCounter,
    });
  } catch (err) {
    // A hostile nesting can exhaust the parser's stack: a refusal, never a crash.
    return { error: `not a YAML or JSON document: ${(err as Error).message}` };
  }
  const problem = [...doc.errors, ...doc.warnings][0];
  if (problem !== undefined) {
    const { line, col } = lineCounter.linePos(problem.pos[0]);
    if (problem.code === 'MULTIPLE_DOCS') {
      return { error: MULTIPLE_DOCUMENTS, at: { line, column: col } };
    }
    const why =
      problem.code === 'DUPLICATE_KEY' ? 'duplicate key' : (problem.message.split('\n')[0] ?? '');
    return { error: `not a YAML or JSON document: ${why}`, at: { line, column: col } };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    return {
      error:
        err instanceof ReferenceError
          ? `too many alias expansions (limit ${MAX_ALIASES})`
          : `not a YAML or JSON document: ${(err as Error).message}`,
    };
  }
  if (depthOver(value, MAX_DEPTH)) return { error: `nests deeper than ${MAX_DEPTH} levels` };
  return { value };
}

/** Iterative: the depth is the input's. */
function depthOver(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (depth > max) return true;
    if (typeof v === 'object' && v !== null) {
      for (const child of Object.values(v)) stack.push([child, depth + 1]);
    }
  }
  return false;
}
