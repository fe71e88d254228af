/**
 * What the translation needs from the document as written: where a field is (for diagnostics)
 * and whether a value was written as `{ env }` / `{ file }` (kept as a reference in the output).
 */
import type { SourcePosition } from '../errors.js';
import type { FieldPath } from '../manifest/paths.js';
import { formatPath } from '../manifest/paths.js';

/** Records a diagnostic at a field of the edge's document. */
export type Emit = (path: FieldPath, severity: 'error' | 'warning', message: string) => void;

export interface Source {
  /** Position of the field's value (its nearest written ancestor when it was defaulted). */
  locate(path: FieldPath): SourcePosition;
  /** The value as written when it holds a reference anywhere, else the resolved `value`. */
  keep<T>(path: FieldPath, value: T): T | unknown;
  /** Values written into CEL: a reference cannot be kept there, so it is an error. */
  literals(path: FieldPath, values: readonly string[], emit: Emit): string[];
  /**
   * Whether the value at `path` was written as a reference where the translation needs the value
   * itself (`into`: a CEL expression, an endpoint's name or URL, a header name): reported as an
   * error, and the caller leaves the resolved value out of everything it writes.
   */
  refused(path: FieldPath, into: string, emit: Emit): boolean;
  /** Whether the value at `path` was written as a reference. */
  isReference(path: FieldPath): boolean;
}

function isRef(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'env' || keys[0] === 'file');
}

function holdsRef(value: unknown): boolean {
  if (isRef(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some(holdsRef);
}

function at(raw: unknown, path: FieldPath): unknown {
  let node = raw;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

/** A `Source` over one document: `raw` is its value as parsed, `locate` maps a path to a position. */
export function documentSource(
  file: string,
  raw: unknown,
  locate: (path: FieldPath) => { line: number; column: number },
): Source {
  return {
    locate: (path) => ({ file, ...locate(path) }),
    keep: (path, value) => {
      const written = at(raw, path);
      return holdsRef(written) ? structuredClone(written) : value;
    },
    isReference: (path) => holdsRef(at(raw, path)),
    literals(path, values, emit) {
      return values.filter((_, i) => !refused([...path, i], 'a CEL expression', emit));
    },
    refused: (path, into, emit) => refused(path, into, emit),
  };

  function refused(path: FieldPath, into: string, emit: Emit): boolean {
    if (!isRef(at(raw, path))) return false;
    emit(
      path,
      'error',
      `a value read from env or file cannot be written into ${into} (${formatPath(path)}): write it in the manifest`,
    );
    return true;
  }
}
