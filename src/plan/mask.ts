/**
 * Masking a plan: the copy of a plan that may be shown or written anywhere (`MaskedPlan`). Pure.
 * What is secret and how values are masked is `src/manifest/secrets.ts` (`maskTree`, `MASKED`);
 * this is its application to the plan's shape, kept beside the plan so the manifest layer never
 * imports the plan.
 */
import { compareCodeUnits } from '../compare.js';
import { type FieldPath, formatPath, type Segment } from '../manifest/paths.js';
import { MASKED, maskTree } from '../manifest/secrets.js';
import type {
  FieldChange,
  Operation,
  Plan,
  PlanFile,
  ResourceChange,
  ResourceChangeFile,
} from './model.js';

declare const masked: unique symbol;

/**
 * A plan that may be shown or written anywhere, in the form a plan file has (sensitive paths
 * formatted): made only by `maskPlan`. The renderers take this type, so a plan cannot reach an
 * output unmasked.
 */
export type MaskedPlan = PlanFile & { readonly [masked]: true };

type OperationFile = ResourceChangeFile['operations'][number];

function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Replaces the value at `path` inside `root` (mutates the clone it is given). */
function maskAt(root: unknown, path: FieldPath): unknown {
  if (path.length === 0) return MASKED;
  let node: unknown = root;
  for (let i = 0; i < path.length - 1; i += 1) {
    if (typeof node !== 'object' || node === null) return root;
    node = (node as Record<Segment, unknown>)[path[i] as Segment];
  }
  const last = path[path.length - 1] as Segment;
  if (typeof node === 'object' && node !== null && last in node) {
    (node as Record<Segment, unknown>)[last] = MASKED;
  }
  return root;
}

/**
 * The operation as shown: the values at its sensitive paths masked, and the paths formatted
 * (`a.b[0].c`), sorted as text, each once.
 */
function maskOperation(op: Operation): OperationFile {
  const paths = op.sensitive_paths;
  // Keys keep their places (a spread, then the same keys replaced): the JSON output lists them
  // in the order the planner wrote them.
  const shown = {
    ...op,
    sensitive_paths: [...new Set(paths.map(formatPath))].sort(compareCodeUnits),
  };
  if (paths.length === 0 || op.body === undefined) return shown;
  let body: unknown = cloneJson(op.body);
  for (const path of paths) body = maskAt(body, path);
  return { ...shown, body };
}

/**
 * A change with nothing to mask as shown: its operations' path lists are all empty, and an
 * empty list is the same in both forms (no copy of the thousands of unchanged resources).
 */
function unchanged(change: ResourceChange): ResourceChangeFile {
  return change as Omit<ResourceChange, 'operations'> as ResourceChangeFile;
}

const isSensitive = (f: FieldChange): boolean => f.sensitive;
const hasSensitivePaths = (op: Operation): boolean => op.sensitive_paths.length > 0;

function maskFields(fields: readonly FieldChange[]): FieldChange[] {
  return fields.map((f) => {
    if (!f.sensitive) return f;
    const out = { ...f };
    if ('before' in f) out.before = MASKED;
    if ('after' in f) out.after = MASKED;
    return out;
  });
}

/**
 * The copy of a plan that may be shown or written anywhere: every sensitive field value
 * (`FieldChange.sensitive`) and every value at an operation's `sensitive_paths` becomes
 * `(sensitive)`, then every occurrence of `values` in any string or key (an address built from a
 * name read from env, a hostport in a conflict reason) does, except under `fingerprint` (hex
 * digests a short value could match inside). The sensitive paths are formatted here, where the
 * plan turns into what is shown. The input plan is not modified.
 */
export function maskPlan(plan: Plan, values: readonly string[]): MaskedPlan {
  const byPath: PlanFile = {
    ...plan,
    changes: plan.changes.map((change) =>
      // Nothing to hide (every unchanged resource of a converged plan): the change itself.
      !change.fields.some(isSensitive) && !change.operations.some(hasSensitivePaths)
        ? unchanged(change)
        : {
            ...change,
            fields: maskFields(change.fields),
            operations: change.operations.map(maskOperation),
          },
    ),
  };
  return maskTree(byPath, values, ['fingerprint']) as MaskedPlan;
}
