/**
 * The fast path of YAML reading: `./plainyaml.ts` for the plain subset manifests are written in,
 * else js-yaml (about ten times faster than `yaml` here). Both give plain values
 * plus the start positions of every mapping and list, which is all a VALID manifest needs (the
 * `source` of its resources and routes). It never decides that a file is invalid: on anything
 * unusual (a syntax error, an anchor or alias, a tag it does not know) it returns undefined and the file
 * goes through `./yaml.ts`, whose positions and checks are authoritative; a document that fails
 * validation is re-read that way too, so every diagnostic comes from the same parser.
 */
import { CORE_SCHEMA, loadAll, type State } from 'js-yaml';
import { readPlainYaml } from './plainyaml.js';
import type { Position } from './yaml.js';

export interface FastDocument {
  readonly value: unknown;
  /** Start of the document's content. */
  readonly start: Position;
  /** Start position of any mapping or list object in `value` (by identity). */
  readonly positionOf: (node: object) => Position | undefined;
  /**
   * True when no mapping in `value` could be a `{ env }` / `{ file }` reference (its keys are
   * not all `env` or `file`) and none has a `__proto__` key: resolving references would return
   * `value` as it is, so the walk is skipped.
   */
  readonly referenceFree?: boolean;
}

/** Collections deeper than this (root 0, `routes` 1, a route 2) need no position on the fast path. */
const MAX_POSITION_DEPTH = 2;

export function parseYamlFast(text: string): FastDocument[] | undefined {
  return readPlainYaml(text) ?? parseWithJsYaml(text);
}

/** js-yaml with a listener that records where mappings and lists start. */
export function parseWithJsYaml(text: string): FastDocument[] | undefined {
  // A Map, not a WeakMap: it lives for one file, and ephemeron tables are costly to collect.
  const positions = new Map<object, Position>();
  const stack: number[] = [];
  let anchored = false;
  let values: unknown[];
  try {
    values = loadAll(text, undefined, {
      schema: CORE_SCHEMA,
      json: false,
      listener(event: 'open' | 'close', state: State) {
        if (event === 'open') {
          stack.push(state.position, state.line, state.lineStart);
          return;
        }
        const lineStart = stack.pop() ?? 0;
        const line = stack.pop() ?? 0;
        const offset = stack.pop() ?? 0;
        // Anchors and aliases (and their expansion limits) are the full parser's job.
        if ((state as State & { anchor?: string | null }).anchor != null) anchored = true;
        if (stack.length / 3 > MAX_POSITION_DEPTH) return;
        const result: unknown = state.result;
        if (typeof result !== 'object' || result === null || positions.has(result)) return;
        positions.set(result, { line: line + 1, column: offset - lineStart + 1 });
      },
    });
  } catch {
    return undefined;
  }
  if (anchored) return undefined;
  const documents: FastDocument[] = [];
  for (const value of values) {
    if (value === null || value === undefined) continue;
    const start = typeof value === 'object' ? positions.get(value) : undefined;
    // A scalar document is invalid anyway: let the full parser report it.
    if (start === undefined) return undefined;
    documents.push({ value, start, positionOf: (node) => positions.get(node) });
  }
  return documents;
}
