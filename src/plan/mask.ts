/**
 * `maskPlan`: the copy of a plan that may be shown or written anywhere. Every sensitive field
 * value (`FieldChange.sensitive`) and every value at an operation's `sensitive_paths` is
 * replaced by `(sensitive)`. Pure; the input plan is not modified.
 */
import { parsePath, type Segment } from '../manifest/paths.js';
import { type FieldChange, MASK, type Operation, type Plan } from './model.js';

function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Replaces the value at `path` inside `root` (mutates the clone it is given). */
function maskAt(root: unknown, segments: readonly Segment[]): unknown {
  if (segments.length === 0) return MASK;
  let node: unknown = root;
  for (let i = 0; i < segments.length - 1; i += 1) {
    if (typeof node !== 'object' || node === null) return root;
    node = (node as Record<Segment, unknown>)[segments[i] as Segment];
  }
  const last = segments[segments.length - 1] as Segment;
  if (typeof node === 'object' && node !== null && last in node) {
    (node as Record<Segment, unknown>)[last] = MASK;
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

const isSensitive = (f: FieldChange): boolean => f.sensitive;
const hasSensitivePaths = (op: Operation): boolean => op.sensitive_paths.length > 0;

export function maskPlan(plan: Plan): Plan {
  return {
    ...plan,
    changes: plan.changes.map((change) =>
      // Nothing to hide (every unchanged resource of a converged plan): the change itself.
      !change.fields.some(isSensitive) && !change.operations.some(hasSensitivePaths)
        ? change
        : {
            ...change,
            fields: change.fields.map((f) => {
              if (!f.sensitive) return f;
              const masked = { ...f };
              if ('before' in f) masked.before = MASK;
              if ('after' in f) masked.after = MASK;
              return masked;
            }),
            operations: change.operations.map(maskOperation),
          },
    ),
  };
}
