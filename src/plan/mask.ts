/**
 * `maskPlan`: the copy of a plan that may be shown or written anywhere. Every sensitive field
 * value (`FieldChange.sensitive`) and every value at an operation's `sensitive_paths` is
 * replaced by `(sensitive)`. Pure; the input plan is not modified.
 */
import { MASK, type Operation, type Plan } from './model.js';

type PathSegment = string | number;

const SEGMENT = /^(?:\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;

/** `a.b[0].c` / `add["X-Key"]` (the `formatPath` form) -> segments; undefined when malformed. */
export function parsePath(path: string): PathSegment[] | undefined {
  const out: PathSegment[] = [];
  let rest = path;
  while (rest !== '') {
    const m = SEGMENT.exec(rest);
    if (m === null) return undefined;
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(JSON.parse(m[3] as string) as string);
    rest = rest.slice(m[0].length);
  }
  return out;
}

function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Replaces the value at `path` inside `root` (mutates the clone it is given). */
function maskAt(root: unknown, segments: readonly PathSegment[]): unknown {
  if (segments.length === 0) return MASK;
  let node: unknown = root;
  for (let i = 0; i < segments.length - 1; i += 1) {
    if (typeof node !== 'object' || node === null) return root;
    node = (node as Record<PathSegment, unknown>)[segments[i] as PathSegment];
  }
  const last = segments[segments.length - 1] as PathSegment;
  if (typeof node === 'object' && node !== null && last in node) {
    (node as Record<PathSegment, unknown>)[last] = MASK;
  }
  return root;
}

export function maskOperation(op: Operation): Operation {
  if (op.sensitive_paths.length === 0 || op.body === undefined) return op;
  let body: unknown = cloneJson(op.body);
  for (const path of op.sensitive_paths) {
    const segments = parsePath(path);
    // A path we cannot read masks the whole body: never risk showing a secret.
    body = segments === undefined ? MASK : maskAt(body, segments);
  }
  return { ...op, body };
}

export function maskPlan(plan: Plan): Plan {
  return {
    ...plan,
    changes: plan.changes.map((change) => ({
      ...change,
      fields: change.fields.map((f) => {
        if (!f.sensitive) return f;
        const masked = { ...f };
        if ('before' in f) masked.before = MASK;
        if ('after' in f) masked.after = MASK;
        return masked;
      }),
      operations: change.operations.map(maskOperation),
    })),
  };
}
