/**
 * The plan: a pure, serialisable, versioned value (changesets' release plan, Terraform's plan
 * JSON). The planner (src/plan/plan.ts) produces it from the desired set and a live snapshot;
 * renderers print it; the applier (src/apply) only consumes it. Its zod schema is the single
 * source of its types and validates plan files read back by `apply plan.json`.
 *
 * Secrets: in memory, operation bodies and field values hold real values so the applier can
 * send them; every sensitive spot is listed (`FieldChange.sensitive`,
 * `Operation.sensitive_paths`, field paths as segments), and `maskPlan()` replaces them before
 * anything is rendered or written, formatting the paths (`a.b[0].c`) on the way: the plan as
 * shown and saved is `PlanFile` (`planFileSchema`), the in-memory one `Plan`. A plan file
 * therefore never holds a secret; `apply plan.json` recomputes the plan
 * from the manifests and live state, checks both fingerprints, and executes the fresh in-memory
 * plan (which is identical by construction when the fingerprints match).
 *
 * Every operation has a typed target (./target.ts). Its references may name a resource an earlier
 * POST of the same plan creates (`{ created: "https_edge.storefront" }`); the operation whose
 * `binds` names that address provides the ID at execution time. `path` is the target rendered
 * for people (placeholders shown as `{address}`); nothing parses it back.
 */
import { z } from 'zod';
import { KINDS } from '../kinds/index.js';
import { fieldPathSchema } from '../manifest/paths.js';
import { policyImpactSchema } from './impact.js';
import { plannedTargetSchema } from './target.js';

/** 2: operations carry a typed `target` (1 had only the path). */
export const PLAN_FORMAT_VERSION = 2;

/**
 * A registered kind (src/kinds/), a child collection of one (`ip_policy_rule`: a policy's rules,
 * planned with it), or `route` (a route of an HTTPS edge, planned with it).
 */
export const resourceKindSchema = z
  .string()
  .refine((k) => k === 'route' || KINDS.some((d) => d.kind === k || d.children?.kind === k), {
    error: 'not a kind',
  });

/** `replace`: delete then create (a cloud endpoint whose URL changed), shown as `-/+`. */
export const actionSchema = z.enum(['create', 'update', 'delete', 'adopt', 'replace', 'noop']);
export type Action = z.infer<typeof actionSchema>;

/**
 * An operation's role in the plan's dependency graph (./graph.ts), which the executor runs and
 * the JSON plan shows; nothing orders by it but the edges the graph draws from it. The
 * operations of one root resource (an edge with its routes, or a bot user) run role by role,
 * and in plan order within a role (the order of `changes`, sorted by address so an edge comes
 * before its routes, then each change's `operations` in order).
 * - `release`: PATCHes that drop hostports another edge or a cloud endpoint will claim, DELETEs
 *   of cloud endpoints whose URL another endpoint takes, and an auth module a route loses while
 *   another route of its edge gains one: each goes before every later write (edge `release`).
 * - `cutover`: an edge being deleted whose hosts and ports cloud endpoints of the plan claim,
 *   and those endpoints' creates (`requires` names the edge): one unit per edge, its endpoints
 *   created as soon as its delete is answered (edge `handover`); the cut-over stops at the
 *   first failed unit, and runs only when no release failed. Before every `main` write (edge
 *   `cutover`), so on an account whose edges are read-only the first refused delete stops the
 *   cycle before anything was written.
 * - `main`: creates, updates, module sets/removals, adoption. An auth-kind swap on a route is
 *   taken offline and back within its own ordered `main` operations (see src/plan/routes.ts).
 * - `delete`: deletions, after every other operation and only when none failed (edge `settle`).
 */
export const phaseSchema = z.enum(['release', 'cutover', 'main', 'delete']);
export type Phase = z.infer<typeof phaseSchema>;

/**
 * An operation whose sensitive paths are `path`: segments in memory (`fieldPathSchema`), their
 * formatted text in a plan file (`z.string()`).
 */
const operationSchemaOf = <P extends z.ZodType>(path: P) =>
  z.object({
    method: z.enum(['POST', 'PATCH', 'PUT', 'DELETE']),
    /** What the operation acts on. */
    target: plannedTargetSchema,
    /** The target's API path, for display; `{address}` stands for an ID created earlier. */
    path: z.string(),
    body: z.unknown().optional(),
    phase: phaseSchema,
    /** For a POST that creates a resource: the address whose ID its response provides. */
    binds: z.string().optional(),
    /** Paths into `body` whose values are sensitive (in a plan file formatted, `a.b[0].c`). */
    sensitive_paths: z.array(path).default([]),
    /** Short human description, e.g. "remove module oauth". */
    description: z.string(),
    /**
     * Roots (addresses) whose operations of earlier roles (and, in the cut-over, the edge's
     * delete) must all have succeeded before this one is sent: an endpoint claiming a host and
     * port an edge of the plan releases, or a URL another endpoint of the plan leaves (graph
     * edges `claim` and `handover`). When one of them failed or was not run, this operation is
     * not attempted (it fails, closed).
     */
    requires: z.array(z.string()).optional(),
    /**
     * Roots whose operations of this role or an earlier one must all have succeeded before this
     * one is sent (graph edges `reference`, ./graph.ts), from references: create what is
     * referred to first, delete it last. Not met: not attempted (fails closed).
     */
    after: z.array(z.string()).optional(),
    /**
     * Paths into `body` of string values holding `{created:ADDRESS}` placeholders: the executor
     * replaces each with the ID the create of ADDRESS returned before sending (that create's
     * root is in `after`).
     */
    fills: z.array(fieldPathSchema).optional(),
  });
export type Operation = ResourceChange['operations'][number];

export const fieldChangeSchema = z.object({
  /** Field path relative to the resource, e.g. `hostports`, `oauth.provider.google.client_id`. */
  path: z.string(),
  /** Absent when the field did not exist before (or after). */
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  sensitive: z.boolean().default(false),
});
export type FieldChange = z.infer<typeof fieldChangeSchema>;

export const moduleChangeSchema = z.object({
  module: z.string(),
  status: z.enum(['set', 'removed', 'unchanged']),
});
export type ModuleChange = z.infer<typeof moduleChangeSchema>;

const resourceChangeSchemaOf = <P extends z.ZodType>(path: P) =>
  z.object({
    /** `tls_edge.api`, `https_edge.storefront`, `https_edge.storefront.route["/api"]`, `bot_user.ci`. */
    address: z.string(),
    kind: resourceKindSchema,
    /** The manifest name (edges, bot users) or the route's `match`. */
    name: z.string(),
    /** The root resource's address: the edge for a route, itself otherwise. */
    root: z.string(),
    action: actionSchema,
    /** Why this action, in words (e.g. "not found live", "hostports changed", "manifest removed"). */
    reason: z.string(),
    /** Live ID when the resource exists. */
    id: z.string().optional(),
    /** Where the desired resource was declared, when it was. */
    source: z.object({ file: z.string(), line: z.number(), column: z.number() }).optional(),
    fields: z.array(fieldChangeSchema).default([]),
    modules: z.array(moduleChangeSchema).default([]),
    operations: z.array(operationSchemaOf(path)).default([]),
  });
export type ResourceChange = Plan['changes'][number];

/**
 * A definition's `Readiness` (src/kinds/definition.ts) of a declared resource that exists live
 * and is not ready to serve (a domain whose certificate
 * waits for DNS), with what is missing: shown by every renderer, changes nothing by itself.
 */
export const readinessEntrySchema = z.object({
  address: z.string(),
  /** The live ID. */
  id: z.string(),
  state: z.enum(['ready', 'pending', 'error']),
  /** What is missing, or the service's message. */
  message: z.string(),
  /** DNS records to create for it to become ready. */
  records: z
    .array(z.object({ name: z.string(), type: z.literal('CNAME'), target: z.string() }))
    .optional(),
});
export type ReadinessEntry = z.infer<typeof readinessEntrySchema>;

/**
 * What a create held back waits for (`Blocked.waiting_for`): the resource that is not ready,
 * its state and message, and the DNS records still to create.
 */
export const waitingForSchema = readinessEntrySchema.omit({ id: true });
export type WaitingFor = z.infer<typeof waitingForSchema>;

/** A resource the plan will not touch, and why (foreign hostport conflict, guard, protect). */
export const blockedSchema = z.object({
  address: z.string(),
  reason: z.string(),
  /** `conflict`: a foreign edge holds a hostport; `guard`: a safety rule refused a write. */
  /** `suspended`: the manifest says `suspend: true`, so it is left as it is live. */
  /** `excluded`: a file `--exclude` skipped declares it, so it is left as it is live. */
  kind: z.enum(['conflict', 'guard', 'suspended', 'excluded']),
  /**
   * A create held back until what it needs is ready (an endpoint on a domain whose certificate
   * waits for DNS): the resources it waits for, with the records to create (absent otherwise).
   */
  waiting_for: z.array(waitingForSchema).optional(),
});
export type Blocked = z.infer<typeof blockedSchema>;

/** Blocked entries that are left alone on purpose: neither a refusal nor a change still to make. */
export function leftAlone(b: Blocked): boolean {
  return b.kind === 'suspended' || b.kind === 'excluded';
}

/** Counts by action; a `replace` counts as one create and one delete, as Terraform counts it. */
export const summarySchema = z.object({
  create: z.number(),
  update: z.number(),
  delete: z.number(),
  adopt: z.number(),
  noop: z.number(),
});
export type PlanSummary = z.infer<typeof summarySchema>;

/**
 * One edge handed over to cloud endpoints (phase `cutover`): the edge is deleted, then the
 * endpoints that claim its hosts and ports are created. Listed in execution order.
 */
export const cutoverSchema = z.object({
  /** The edge's address and live ID. */
  edge: z.string(),
  id: z.string(),
  /** The endpoints created once it is deleted, each with the host and port it takes over. */
  endpoints: z.array(z.object({ address: z.string(), url: z.string(), hostport: z.string() })),
});
export type Cutover = z.infer<typeof cutoverSchema>;

const planSchemaOf = <P extends z.ZodType>(path: P) =>
  z.object({
    format_version: z.literal(PLAN_FORMAT_VERSION),
    owner: z.string(),
    changes: z.array(resourceChangeSchemaOf(path)),
    blocked: z.array(blockedSchema).default([]),
    /** Things worth a person's attention that change nothing by themselves (namesake bot users). */
    warnings: z.array(z.string()).default([]),
    /** Edges replaced by cloud endpoints, in the order they are cut over (absent: none). */
    cutovers: z.array(cutoverSchema).optional(),
    /** Resources not ready to serve yet, with what they wait for (absent: none). */
    readiness: z.array(readinessEntrySchema).optional(),
    /** What each cloud endpoint's policy change does to requests (absent: no such change). */
    policy_impact: z.array(policyImpactSchema).optional(),
    summary: summarySchema,
    /**
     * The manifest directory the plan was made from, relative to the plan file's own directory
     * (`/`-separated), so `apply PLANFILE` finds it without `--dir` also when the checkout moved
     * with the plan. Set by `plan --out`.
     */
    manifest_dir: z.string().optional(),
    /** Fingerprints of what the plan saw; set by whoever has the inputs (not the pure core). */
    fingerprint: z.object({ live: z.string(), manifests: z.string() }).optional(),
  });

/** The plan in memory: sensitive paths as segments. */
export const planSchema = planSchemaOf(fieldPathSchema);
export type Plan = z.infer<typeof planSchema>;

/**
 * The plan as shown and saved (`plan --output json`, `plan --out`, read back by `apply
 * PLANFILE`): sensitive paths formatted. Made from a `Plan` only by `maskPlan`.
 */
export const planFileSchema = planSchemaOf(z.string());
export type PlanFile = z.infer<typeof planFileSchema>;
export type ResourceChangeFile = PlanFile['changes'][number];
