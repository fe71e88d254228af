/**
 * Turns one plan operation (method, concrete path, body) into the typed API client call it
 * stands for. The plan speaks in HTTP terms so it can be rendered and saved; the client speaks
 * in typed methods. Bodies are checked against the API's write schemas before anything is sent:
 * a malformed body is a planner bug, and it must fail here, loudly, rather than reach the API.
 * Error messages name paths and problems only, never body values (they may be secrets).
 */
import type { z } from 'zod';
import {
  type AnyModuleName,
  type ApiClient,
  botUserCreateSchema,
  botUserUpdateSchema,
  httpsEdgeWriteSchema,
  MODULE_WRITE_SCHEMAS,
  type ModuleOwner,
  routeCreateSchema,
  routeUpdateSchema,
  tlsEdgeWriteSchema,
} from '../api/index.js';
import { EdgesyncError } from '../errors.js';
import type { Operation } from '../plan/model.js';

/** What a path addresses, once its placeholders are filled. */
export type Target =
  | { readonly kind: 'edges'; readonly edgeKind: 'tls' | 'https' }
  | { readonly kind: 'edge'; readonly edgeKind: 'tls' | 'https'; readonly id: string }
  | { readonly kind: 'routes'; readonly edgeId: string }
  | { readonly kind: 'route'; readonly edgeId: string; readonly id: string }
  | { readonly kind: 'module'; readonly owner: ModuleOwner; readonly module: string }
  | { readonly kind: 'bot_users' }
  | { readonly kind: 'bot_user'; readonly id: string };

/** Parses an API path (no query) into its target; undefined when it is none we write to. */
export function parseTarget(path: string): Target | undefined {
  const raw = path.split('/').filter((s) => s !== '');
  let segs: string[];
  try {
    segs = raw.map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
  if (segs.some((s) => s === '' || s.includes('{') || s.includes('}'))) return undefined;
  const [a, b, c, d, e, f, g] = segs;
  if (a === 'bot_users') {
    if (segs.length === 1) return { kind: 'bot_users' };
    if (segs.length === 2 && b !== undefined) return { kind: 'bot_user', id: b };
    return undefined;
  }
  if (a !== 'edges' || (b !== 'tls' && b !== 'https')) return undefined;
  const edgeKind = b;
  if (segs.length === 2) return { kind: 'edges', edgeKind };
  if (c === undefined) return undefined;
  if (segs.length === 3) return { kind: 'edge', edgeKind, id: c };
  if (edgeKind === 'https' && d === 'routes') {
    if (segs.length === 4) return { kind: 'routes', edgeId: c };
    if (e === undefined) return undefined;
    if (segs.length === 5) return { kind: 'route', edgeId: c, id: e };
    if (segs.length === 6 && f !== undefined && hasModule('route', f)) {
      return { kind: 'module', owner: { kind: 'route', edgeId: c, id: e }, module: f };
    }
    return undefined;
  }
  if (segs.length === 4 && d !== undefined && g === undefined) {
    const ownerKind = edgeKind === 'tls' ? 'tls_edge' : 'https_edge';
    if (!hasModule(ownerKind, d)) return undefined;
    return { kind: 'module', owner: { kind: ownerKind, id: c }, module: d };
  }
  return undefined;
}

function hasModule(kind: keyof typeof MODULE_WRITE_SCHEMAS, module: string): boolean {
  return Object.hasOwn(MODULE_WRITE_SCHEMAS[kind], module);
}

/** The live edge an operation touches, if any (routes and modules belong to their edge). */
export function targetEdgeId(target: Target): string | undefined {
  switch (target.kind) {
    case 'edge':
      return target.id;
    case 'routes':
    case 'route':
      return target.edgeId;
    case 'module':
      return target.owner.kind === 'route' ? target.owner.edgeId : target.owner.id;
    default:
      return undefined;
  }
}

/** The result of a sent operation: the ID of what a POST created. */
export interface Sent {
  readonly id?: string;
}

/** A plan operation the executor cannot send: a planner bug, never retried. */
export class InvalidOperationError extends EdgesyncError {
  constructor(message: string) {
    super('ES_INTERNAL', message);
  }
}

/** Checks a body against a write schema; the message lists field paths, never values. */
function checked<S extends z.ZodType>(schema: S, body: unknown, what: string): z.input<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
      .join('; ');
    throw new InvalidOperationError(`invalid body for ${what}: ${problems}`);
  }
  // The original, not zod's output: what the planner decided is exactly what goes on the wire.
  return body as z.input<S>;
}

/**
 * Sends one operation through the typed client. `path` must be concrete (placeholders filled).
 * No signal is passed: an operation once started is let finish (abort stops launching new ones).
 */
export async function sendOperation(
  client: ApiClient,
  method: Operation['method'],
  path: string,
  body: unknown,
): Promise<Sent> {
  const target = parseTarget(path);
  const what = `${method} ${path}`;
  const unsupported = () => new InvalidOperationError(`unsupported operation ${what}`);
  if (target === undefined) throw unsupported();
  switch (target.kind) {
    case 'edges': {
      if (method !== 'POST') throw unsupported();
      const created =
        target.edgeKind === 'tls'
          ? await client.createTlsEdge(checked(tlsEdgeWriteSchema, body, what))
          : await client.createHttpsEdge(checked(httpsEdgeWriteSchema, body, what));
      return { id: created.id };
    }
    case 'edge':
      if (method === 'PATCH') {
        if (target.edgeKind === 'tls') {
          await client.updateTlsEdge(target.id, checked(tlsEdgeWriteSchema, body, what));
        } else {
          await client.updateHttpsEdge(target.id, checked(httpsEdgeWriteSchema, body, what));
        }
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      if (target.edgeKind === 'tls') await client.deleteTlsEdge(target.id);
      else await client.deleteHttpsEdge(target.id);
      return {};
    case 'routes': {
      if (method !== 'POST') throw unsupported();
      const created = await client.createRoute(
        target.edgeId,
        checked(routeCreateSchema, body, what),
      );
      return { id: created.id };
    }
    case 'route':
      if (method === 'PATCH') {
        await client.updateRoute(target.edgeId, target.id, checked(routeUpdateSchema, body, what));
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      await client.deleteRoute(target.edgeId, target.id);
      return {};
    case 'module': {
      const module = target.module as AnyModuleName;
      if (method === 'PUT') {
        const schemas: Readonly<Record<string, z.ZodType>> =
          MODULE_WRITE_SCHEMAS[target.owner.kind];
        const schema = schemas[target.module];
        if (schema === undefined) throw unsupported();
        const value = checked(schema, body, what) as Readonly<Record<string, unknown>>;
        await client.putModule(target.owner, module, value);
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      await client.deleteModule(target.owner, module);
      return {};
    }
    case 'bot_users': {
      if (method !== 'POST') throw unsupported();
      const created = await client.createBotUser(checked(botUserCreateSchema, body, what));
      return { id: created.id };
    }
    case 'bot_user':
      if (method === 'PATCH') {
        await client.updateBotUser(target.id, checked(botUserUpdateSchema, body, what));
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      await client.deleteBotUser(target.id);
      return {};
  }
}

function noBody(body: unknown, what: string): void {
  if (body !== undefined) throw new InvalidOperationError(`${what} must not carry a body`);
}
