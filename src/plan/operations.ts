/**
 * Typed builders of plan operations: one per API write, each taking the body type the API
 * client sends (`src/api/schemas.ts` write shapes). A body that drifts from the API's write
 * shape therefore fails `npm run typecheck` in the planner, not an apply. The operation's
 * `path` is rendered from its typed target, for display only.
 */
import type {
  BotUserCreate,
  BotUserUpdate,
  EndpointCreate,
  EndpointUpdate,
  HttpsEdgeWrite,
  RouteCreate,
  RouteUpdate,
  TlsEdgeWrite,
} from '../api/schemas.js';
import { type FieldPath, uniquePaths } from '../manifest/paths.js';
import type { Operation, Phase } from './model.js';
import type { EdgeKind } from './ownership.js';
import { type PlannedTarget, type Ref, targetPath } from './target.js';

/** The write body of an edge of each kind. */
export interface EdgeWrite {
  tls_edge: TlsEdgeWrite;
  https_edge: HttpsEdgeWrite;
}

const SEGMENT: Readonly<Record<EdgeKind, 'tls' | 'https'>> = {
  tls_edge: 'tls',
  https_edge: 'https',
};

interface Extra {
  readonly binds?: string;
  /** Roots whose earlier operations must have succeeded first (see `Operation.requires`). */
  readonly requires?: readonly string[];
  /** Manifest sensitive paths of the resource (see bodySensitivePaths). */
  readonly sensitive?: readonly FieldPath[];
  /** Roots whose operations of this role or an earlier one run first (see `Operation.after`). */
  readonly after?: readonly string[];
  /** Body paths holding `{created:ADDRESS}` placeholders (see `Operation.fills`). */
  readonly fills?: readonly FieldPath[];
}

function op(
  method: Operation['method'],
  target: PlannedTarget,
  phase: Phase,
  description: string,
  body?: object,
  extra: Extra = {},
): Operation {
  const path = targetPath(target);
  const { binds } = extra;
  // Made whole where it can be (a property added later takes a store of its own: a start-up
  // plan of 25,000 creates holds 25,000 of these), in the order a plan file lists them.
  let o: Operation;
  if (body === undefined) {
    o = { method, target, path, phase, description, sensitive_paths: NO_PATHS };
    if (binds !== undefined) o.binds = binds;
  } else {
    const sensitive_paths = bodySensitivePaths(body, extra.sensitive ?? []);
    o =
      binds === undefined
        ? { method, target, path, phase, description, sensitive_paths, body }
        : { method, target, path, phase, description, sensitive_paths, body, binds };
  }
  if (extra.requires !== undefined && extra.requires.length > 0) o.requires = [...extra.requires];
  if (extra.after !== undefined && extra.after.length > 0) o.after = [...extra.after];
  if (extra.fills !== undefined && extra.fills.length > 0) o.fills = [...extra.fills];
  return o;
}

/**
 * Manifest sensitive paths -> paths into a request body. Bodies mirror the manifest's write
 * shape, except that labels (and the name) travel inside the `metadata` string, which is then
 * sensitive as a whole. Paths whose field the body does not carry are dropped.
 */
function bodySensitivePaths(body: object, sensitive: readonly FieldPath[]): FieldPath[] {
  const out: FieldPath[] = [];
  for (const path of sensitive) {
    const top = path[0];
    if (top === 'metadata' || top === 'name') {
      if ('metadata' in body) out.push(METADATA);
    } else if (typeof top === 'string' && top in body) {
      out.push(path);
    }
  }
  if (out.length === 0) return NO_PATHS;
  if (out.length === 1 && out[0] === METADATA) return ONLY_METADATA;
  return out.length < 2 ? out : uniquePaths(out);
}

const METADATA: FieldPath = ['metadata'];
/**
 * The lists most operations have, shared (frozen: nothing changes an operation's list once
 * made, and a change would throw, not spread).
 */
const NO_PATHS = Object.freeze([]) as unknown as FieldPath[];
const ONLY_METADATA = Object.freeze([METADATA]) as unknown as FieldPath[];

export function createEdge<K extends EdgeKind>(
  kind: K,
  body: EdgeWrite[K],
  description: string,
  extra: Extra,
): Operation {
  return op('POST', { kind: 'edges', edge_kind: SEGMENT[kind] }, 'main', description, body, extra);
}

export function updateEdge<K extends EdgeKind>(
  kind: K,
  id: string,
  body: EdgeWrite[K],
  phase: Phase,
  description: string,
  extra: Extra = {},
): Operation {
  const target = { kind: 'edge', edge_kind: SEGMENT[kind], id } as const;
  return op('PATCH', target, phase, description, body, extra);
}

/** Phase `cutover` when cloud endpoints of the plan take over its hosts and ports. */
export function deleteEdge(
  kind: EdgeKind,
  id: string,
  description: string,
  phase: Phase = 'delete',
): Operation {
  return op('DELETE', { kind: 'edge', edge_kind: SEGMENT[kind], id }, phase, description);
}

export function deleteEdgeModule(kind: EdgeKind, id: string, module: string): Operation {
  const target = { kind: 'edge_module', edge_kind: SEGMENT[kind], id, module } as const;
  return op('DELETE', target, 'main', `remove module ${module}`);
}

export function createRoute(
  edge: Ref,
  body: RouteCreate,
  description: string,
  extra: Extra,
): Operation {
  return op('POST', { kind: 'routes', edge_id: edge }, 'main', description, body, extra);
}

export function updateRoute(
  edgeId: string,
  id: string,
  body: RouteUpdate,
  description: string,
  extra: Extra,
): Operation {
  return op('PATCH', { kind: 'route', edge_id: edgeId, id }, 'main', description, body, extra);
}

export function deleteRoute(edgeId: string, id: string, description: string): Operation {
  return op('DELETE', { kind: 'route', edge_id: edgeId, id }, 'delete', description);
}

export function deleteRouteModule(
  edgeId: string,
  id: string,
  module: string,
  description = `remove module ${module}`,
): Operation {
  const target = { kind: 'route_module', edge_id: edgeId, id, module } as const;
  return op('DELETE', target, 'main', description);
}

export function createBotUser(body: BotUserCreate, description: string, binds: string): Operation {
  return op('POST', { kind: 'bot_users' }, 'main', description, body, { binds });
}

export function updateBotUser(id: string, body: BotUserUpdate, description: string): Operation {
  return op('PATCH', { kind: 'bot_user', id }, 'main', description, body);
}

export function deleteBotUser(id: string, description: string): Operation {
  return op('DELETE', { kind: 'bot_user', id }, 'delete', description);
}

/** Phase `cutover` when it takes over a host and port from an edge being deleted. */
export function createEndpoint(
  body: EndpointCreate,
  description: string,
  extra: Extra,
  phase: Phase = 'main',
): Operation {
  return op('POST', { kind: 'endpoints' }, phase, description, body, extra);
}

/** Phase `main`; `release` for a move off a URL another endpoint of the plan takes. */
export function updateEndpoint(
  id: string,
  body: EndpointUpdate,
  description: string,
  extra: Extra,
  phase: Phase = 'main',
): Operation {
  return op('PATCH', { kind: 'endpoint', id }, phase, description, body, extra);
}

/** Phase `delete` for an endpoint no manifest keeps; `main` for the first half of a replacement. */
export function deleteEndpoint(id: string, phase: Phase, description: string): Operation {
  return op('DELETE', { kind: 'endpoint', id }, phase, description);
}
