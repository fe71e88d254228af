/**
 * Test doubles for the executor's unit tests: a scripted API client that records every call
 * (method name and arguments) and answers from a handler, and plan builders.
 */
import type { ApiClient, LiveSnapshot } from '../../../src/api/index.js';
import { ApiError, errorMessage, FencedWriteError } from '../../../src/errors.js';
import { ROUTE_MODULES } from '../../../src/hosted/modules/index.js';
import type { Operation, Plan, ResourceChange } from '../../../src/plan/model.js';
import type { PlannedTarget, Ref } from '../../../src/plan/target.js';

const ROUTE_MODULE_NAMES: ReadonlySet<string> = new Set(ROUTE_MODULES);

/**
 * Test shorthand: the typed target a path stands for (`{address}` is a reference to a resource
 * the plan creates). The product never parses paths; tests write them because they read well.
 */
export function targetOf(path: string): PlannedTarget {
  const segs = path.match(/\{[^}]*\}|[^/]+/g) ?? [];
  const ref = (x: string | undefined): Ref => {
    if (x === undefined) throw new Error(`no target for ${path}`);
    return x.startsWith('{') ? { created: x.slice(1, -1) } : x;
  };
  const [a, b, c, d, e, f] = segs;
  if (a === 'endpoints')
    return b === undefined ? { kind: 'endpoints' } : { kind: 'endpoint', id: ref(b) };
  if (a === 'bot_users')
    return c === undefined && b !== undefined
      ? { kind: 'bot_user', id: ref(b) }
      : { kind: 'bot_users' };
  if (a !== 'edges' || (b !== 'tls' && b !== 'https')) throw new Error(`no target for ${path}`);
  if (c === undefined) return { kind: 'edges', edge_kind: b };
  if (d === undefined) return { kind: 'edge', edge_kind: b, id: ref(c) };
  if (b === 'https' && d === 'routes') {
    if (e === undefined) return { kind: 'routes', edge_id: ref(c) };
    if (f === undefined) return { kind: 'route', edge_id: ref(c), id: ref(e) };
    if (!ROUTE_MODULE_NAMES.has(f)) throw new Error(`no target for ${path}`);
    return { kind: 'route_module', edge_id: ref(c), id: ref(e), module: f };
  }
  return { kind: 'edge_module', edge_kind: b, id: ref(c), module: d };
}

export interface Call {
  readonly fn: string;
  readonly args: readonly unknown[];
}

export type Handler = (call: Call, calls: readonly Call[]) => unknown;

let nextId = 0;
export function fakeId(prefix: string): string {
  nextId += 1;
  return `${prefix}${String(nextId).padStart(27, '0')}`;
}

/** Default answers: creates return a fresh ID, reads return empty lists. */
export function defaultAnswer(call: Call): unknown {
  switch (call.fn) {
    case 'createTlsEdge':
      return { id: fakeId('edgtls_') };
    case 'createHttpsEdge':
      return { id: fakeId('edghts_') };
    case 'createRoute':
      return { id: fakeId('edghtsrt_') };
    case 'createBotUser':
      return { id: fakeId('bot_') };
    case 'listTlsEdges':
    case 'listHttpsEdges':
    case 'listBotUsers':
      return { items: [], calls: 1 };
    default:
      return undefined;
  }
}

export function fakeClient(handler: Handler = defaultAnswer): { client: ApiClient; calls: Call[] } {
  const calls: Call[] = [];
  const client = new Proxy(
    {},
    {
      get(_, fn: string) {
        if (fn === 'then') return undefined;
        return async (...given: unknown[]) => {
          // The request options (the write fence) are the client's business, as in the real
          // client: checked as the request leaves, and not recorded with the arguments.
          const last = given.at(-1);
          const fence = isRequestOptions(last) ? last.fence : undefined;
          const args = fence === undefined ? given : given.slice(0, -1);
          // Let other lanes interleave, as real I/O would.
          await Promise.resolve();
          try {
            fence?.();
          } catch (err) {
            throw new FencedWriteError('?', fn, errorMessage(err), { cause: err });
          }
          const call = { fn, args };
          calls.push(call);
          const answer = handler(call, calls);
          if (answer instanceof Error) throw answer;
          return answer;
        };
      },
    },
  ) as ApiClient;
  return { client, calls };
}

function isRequestOptions(value: unknown): value is { fence: () => void } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { fence?: unknown }).fence === 'function'
  );
}

export function apiError(
  method: string,
  path: string,
  status: number,
  outcomeUnknown = false,
): ApiError {
  return new ApiError({ method, path, status, apiMessage: `status ${status}`, outcomeUnknown });
}

export function op(
  method: Operation['method'],
  path: string,
  extra: Partial<Operation> = {},
): Operation {
  return {
    method,
    target: targetOf(path),
    path,
    phase: 'main',
    sensitive_paths: [],
    description: `${method} ${path}`,
    ...extra,
  };
}

export function change(
  address: string,
  operations: Operation[],
  extra: Partial<ResourceChange> = {},
): ResourceChange {
  const kind = address.includes('.route[')
    ? 'route'
    : address.startsWith('tls_edge.')
      ? 'tls_edge'
      : address.startsWith('bot_user.')
        ? 'bot_user'
        : address.startsWith('cloud_endpoint.')
          ? 'cloud_endpoint'
          : 'https_edge';
  const root = kind === 'route' ? address.slice(0, address.indexOf('.route[')) : address;
  return {
    address,
    kind,
    name: address.split('.')[1] ?? address,
    root,
    action: 'update',
    reason: 'test',
    fields: [],
    modules: [],
    operations,
    ...extra,
  };
}

export function plan(changes: ResourceChange[], extra: Partial<Plan> = {}): Plan {
  return {
    format_version: 2,
    owner: 'default',
    changes,
    blocked: [],
    warnings: [],
    summary: { create: 0, update: changes.length, delete: 0, adopt: 0, noop: 0 },
    ...extra,
  };
}

export function snapshot(
  edges: { id: string; metadata: string; kind?: 'tls' | 'https' }[],
): LiveSnapshot {
  const rec = (id: string, metadata: string) => ({
    id,
    uri: `http://x/${id}`,
    created_at: '2024-01-01T00:00:00Z',
    description: null,
    metadata,
    hostports: [],
    mutual_tls: null,
    tls_termination: null,
  });
  return {
    tlsEdges: edges
      .filter((e) => e.kind === 'tls')
      .map((e) => ({
        ...rec(e.id, e.metadata),
        backend: null,
        ip_restriction: null,
        traffic_policy: null,
      })),
    httpsEdges: edges
      .filter((e) => e.kind !== 'tls')
      .map((e) => ({ ...rec(e.id, e.metadata), routes: [] })),
    botUsers: [],
    cloudEndpoints: [],
    calls: { tls: 1, https: 1, botUsers: 1, endpoints: 1 },
  };
}

export function owned(name: string, owner = 'default', protect = false): string {
  const meta: Record<string, string> = { 'edgesync/name': name, 'edgesync/owner': owner };
  if (protect) meta['edgesync/protect'] = 'true';
  return JSON.stringify(meta);
}
