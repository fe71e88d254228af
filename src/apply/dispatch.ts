/**
 * Turns one plan operation (method, resolved typed target, body) into the typed API client call
 * it stands for. Bodies are checked against the API's write schemas before anything is sent:
 * a malformed body is a planner bug, and it must fail here, loudly, rather than reach the API.
 * Error messages name paths and problems only, never body values (they may be secrets).
 */
import type { z } from 'zod';
import {
  type AnyModuleName,
  type ApiClient,
  botUserCreateSchema,
  botUserUpdateSchema,
  endpointCreateSchema,
  endpointUpdateSchema,
  httpsEdgeWriteSchema,
  MODULE_WRITE_SCHEMAS,
  type ModuleOwner,
  type ModuleOwnerKind,
  routeCreateSchema,
  routeUpdateSchema,
  tlsEdgeWriteSchema,
} from '../api/index.js';
import { EdgesyncError } from '../errors.js';
import type { Operation } from '../plan/model.js';
import { type Target, targetPath } from '../plan/target.js';

/** The client's module owner of a module target. */
function moduleOwner(
  target: Extract<Target, { kind: 'edge_module' | 'route_module' }>,
): ModuleOwner {
  if (target.kind === 'route_module') {
    return { kind: 'route', edgeId: target.edge_id, id: target.id };
  }
  return { kind: target.edge_kind === 'tls' ? 'tls_edge' : 'https_edge', id: target.id };
}

function hasModule(kind: ModuleOwnerKind, module: string): boolean {
  return Object.hasOwn(MODULE_WRITE_SCHEMAS[kind], module);
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
 * Sends one operation through the typed client. No signal is passed: an operation once
 * started is let finish (abort stops launching new ones).
 */
export async function sendOperation(
  client: ApiClient,
  method: Operation['method'],
  target: Target,
  body: unknown,
): Promise<Sent> {
  const what = `${method} ${targetPath(target)}`;
  const unsupported = () => new InvalidOperationError(`unsupported operation ${what}`);
  switch (target.kind) {
    case 'edges': {
      if (method !== 'POST') throw unsupported();
      const created =
        target.edge_kind === 'tls'
          ? await client.createTlsEdge(checked(tlsEdgeWriteSchema, body, what))
          : await client.createHttpsEdge(checked(httpsEdgeWriteSchema, body, what));
      return { id: created.id };
    }
    case 'edge':
      if (method === 'PATCH') {
        if (target.edge_kind === 'tls') {
          await client.updateTlsEdge(target.id, checked(tlsEdgeWriteSchema, body, what));
        } else {
          await client.updateHttpsEdge(target.id, checked(httpsEdgeWriteSchema, body, what));
        }
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      if (target.edge_kind === 'tls') await client.deleteTlsEdge(target.id);
      else await client.deleteHttpsEdge(target.id);
      return {};
    case 'routes': {
      if (method !== 'POST') throw unsupported();
      const created = await client.createRoute(
        target.edge_id,
        checked(routeCreateSchema, body, what),
      );
      return { id: created.id };
    }
    case 'route':
      if (method === 'PATCH') {
        await client.updateRoute(target.edge_id, target.id, checked(routeUpdateSchema, body, what));
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      await client.deleteRoute(target.edge_id, target.id);
      return {};
    case 'edge_module':
    case 'route_module': {
      const owner = moduleOwner(target);
      if (!hasModule(owner.kind, target.module)) throw unsupported();
      const module = target.module as AnyModuleName;
      if (method === 'PUT') {
        const schemas: Readonly<Record<string, z.ZodType>> = MODULE_WRITE_SCHEMAS[owner.kind];
        const schema = schemas[target.module];
        if (schema === undefined) throw unsupported();
        const value = checked(schema, body, what) as Readonly<Record<string, unknown>>;
        await client.putModule(owner, module, value);
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      await client.deleteModule(owner, module);
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
    case 'endpoints': {
      if (method !== 'POST') throw unsupported();
      const created = await client.createEndpoint(checked(endpointCreateSchema, body, what));
      return { id: created.id };
    }
    case 'endpoint':
      if (method === 'PATCH') {
        await client.updateEndpoint(target.id, checked(endpointUpdateSchema, body, what));
        return {};
      }
      if (method !== 'DELETE') throw unsupported();
      noBody(body, what);
      await client.deleteEndpoint(target.id);
      return {};
  }
}

function noBody(body: unknown, what: string): void {
  if (body !== undefined) throw new InvalidOperationError(`${what} must not carry a body`);
}
