/**
 * Typed operation targets: what an operation of the plan acts on (an edge, a route, a module,
 * a bot user, or a collection to create in), instead of an HTTP path to be parsed back.
 *
 * The planner builds targets; the executor resolves their references and hands the resolved
 * target to the typed client (src/apply/dispatch.ts); the guards read the edge a target belongs
 * to. Paths are only rendered from targets, by the target's template in the API's table of
 * operations (src/api/routes.ts): for display (plans, logs) and by the client.
 *
 * A reference is a live ID, or `{ created: address }`: the ID of a resource an earlier POST of
 * the same plan creates (the operation whose `binds` names that address provides it).
 */
import { z } from 'zod';
import { fillTemplate, templateOf } from '../api/routes.js';
import { EdgesyncError } from '../errors.js';

export const refSchema = z.union([z.string(), z.strictObject({ created: z.string() })]);
/** A live ID, or the address of a resource this plan creates first. */
export type Ref = z.infer<typeof refSchema>;

export const EDGE_KINDS = ['tls', 'https'] as const;

function targetSchemaOf<R extends z.ZodType>(ref: R) {
  const edgeKind = z.enum(EDGE_KINDS);
  return z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('edges'), edge_kind: edgeKind }),
    z.strictObject({ kind: z.literal('edge'), edge_kind: edgeKind, id: ref }),
    z.strictObject({ kind: z.literal('routes'), edge_id: ref }),
    z.strictObject({ kind: z.literal('route'), edge_id: ref, id: ref }),
    z.strictObject({
      kind: z.literal('edge_module'),
      edge_kind: edgeKind,
      id: ref,
      module: z.string(),
    }),
    z.strictObject({ kind: z.literal('route_module'), edge_id: ref, id: ref, module: z.string() }),
    z.strictObject({ kind: z.literal('bot_users') }),
    z.strictObject({ kind: z.literal('bot_user'), id: ref }),
    z.strictObject({ kind: z.literal('endpoints') }),
    z.strictObject({ kind: z.literal('endpoint'), id: ref }),
    // IP policies and vaults (rules and secrets are collections of the account)
    z.strictObject({ kind: z.literal('ip_policies') }),
    z.strictObject({ kind: z.literal('ip_policy'), id: ref }),
    z.strictObject({ kind: z.literal('ip_policy_rules') }),
    z.strictObject({ kind: z.literal('ip_policy_rule'), id: ref }),
    z.strictObject({ kind: z.literal('vaults') }),
    z.strictObject({ kind: z.literal('vault'), id: ref }),
    z.strictObject({ kind: z.literal('vault_secrets'), id: ref }),
    z.strictObject({ kind: z.literal('secrets') }),
    z.strictObject({ kind: z.literal('secret'), id: ref }),
  ]);
}

/** The target of a planned operation; references may point at resources the plan creates. */
export const plannedTargetSchema = targetSchemaOf(refSchema);
export type PlannedTarget = z.infer<typeof plannedTargetSchema>;

/** A target whose references are all live IDs: what the client is called with. */
export type Target = z.infer<ReturnType<typeof targetSchemaOf<z.ZodString>>>;

/** Maps every reference of a target (the shape is kept, so the result is a target too). */
function mapRefs<A, B>(
  t: Record<string, unknown> & { kind: string },
  f: (ref: A) => B | undefined,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = { kind: t.kind };
  for (const [key, value] of Object.entries(t)) {
    if (key === 'kind' || key === 'edge_kind' || key === 'module') {
      out[key] = value;
      continue;
    }
    const mapped = f(value as A);
    if (mapped === undefined) return undefined;
    out[key] = mapped;
  }
  return out;
}

/**
 * Fills the references to created resources from `idOf` (address -> ID); undefined when one
 * names a resource that was not created.
 */
export function resolveTarget(
  target: PlannedTarget,
  idOf: (address: string) => string | undefined,
): Target | undefined {
  return mapRefs<Ref, string>(target, (ref) =>
    typeof ref === 'string' ? ref : idOf(ref.created),
  ) as Target | undefined;
}

/** True when the target refers to a resource this plan creates (ours by construction). */
export function refersToCreated(target: PlannedTarget): boolean {
  return Object.values(target).some((v) => typeof v === 'object' && v !== null);
}

function segment(ref: Ref): string {
  return typeof ref === 'string' ? encodeURIComponent(ref) : `{${ref.created}}`;
}

/** The reference a target holds for a path template's parameter (`id`, `edge_id`). */
export function targetParam(target: PlannedTarget, param: string): Ref {
  // Template parameters are `id` and `edge_id`, never a name an object inherits.
  const value: unknown = (target as Readonly<Record<string, unknown>>)[param];
  if (value === undefined) {
    throw new EdgesyncError('ES_INTERNAL', `a ${target.kind} target has no "${param}"`);
  }
  return value as Ref;
}

/**
 * The API path of a target, relative to the base URL: its template in the API's table of
 * operations, filled. References to created resources render as `{address}` placeholders
 * (display only: such a path is never requested).
 */
export function targetPath(target: PlannedTarget): string {
  return fillTemplate(templateOf(target), (param) => segment(targetParam(target, param)));
}

/** The edge a target belongs to (routes and modules belong to their edge); undefined for others. */
export function targetEdge(target: PlannedTarget): Ref | undefined {
  switch (target.kind) {
    case 'edge':
    case 'edge_module':
      return target.id;
    case 'routes':
    case 'route':
    case 'route_module':
      return target.edge_id;
    default:
      return undefined;
  }
}

/** The module a target names, for module operations. */
export function targetModule(target: PlannedTarget): string | undefined {
  return target.kind === 'edge_module' || target.kind === 'route_module'
    ? target.module
    : undefined;
}
