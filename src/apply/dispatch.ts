/**
 * Turns one plan operation (method, resolved typed target, body) into the typed API client call
 * it stands for, by looking the pair up in the API's table of operations (src/api/routes.ts).
 * Bodies are checked against the operation's write schema before anything is sent: a malformed
 * body is a planner bug, and it must fail here, loudly, rather than reach the API. Error
 * messages name paths and problems only, never body values (they may be secrets).
 */
import type { z } from 'zod';
import type { ApiClient, ModuleOwner, RequestOptions } from '../api/index.js';
import { type ApiOperation, operationFor, templateParams } from '../api/routes.js';
import { EdgesyncError } from '../errors.js';
import type { Operation } from '../plan/model.js';
import { type Target, targetParam, targetPath } from '../plan/target.js';

/** The client's module owner of a module target. */
function moduleOwner(
  target: Extract<Target, { kind: 'edge_module' | 'route_module' }>,
): ModuleOwner {
  if (target.kind === 'route_module') {
    return { kind: 'route', edgeId: target.edge_id, id: target.id };
  }
  return { kind: target.edge_kind === 'tls' ? 'tls_edge' : 'https_edge', id: target.id };
}

/** The result of a sent operation: the ID of what a POST created, and the record answered. */
export interface Sent {
  readonly id?: string;
  /** The record a POST or PATCH answered with (its `last_updated_by`, its `metadata`). */
  readonly answer?: unknown;
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
 * The client call's arguments before the body: a module's owner and name, or the template's
 * parameters in order (the client's own convention, see src/api/client.ts).
 */
function callArgs(op: ApiOperation, target: Target): unknown[] {
  if (target.kind === 'edge_module' || target.kind === 'route_module') {
    return [moduleOwner(target), target.module];
  }
  return templateParams(op.template).map((param) => targetParam(target, param));
}

/**
 * Sends one operation through the typed client. No signal is passed: an exchange once started
 * is let finish. The caller's `fence` (its abort, leadership, suspension) is checked by the
 * client as each attempt leaves, retries included.
 */
export async function sendOperation(
  client: ApiClient,
  method: Operation['method'],
  target: Target,
  body: unknown,
  fence?: () => void,
): Promise<Sent> {
  const what = `${method} ${targetPath(target)}`;
  const op = operationFor(method, target);
  if (op === undefined) throw new InvalidOperationError(`unsupported operation ${what}`);
  const args = callArgs(op, target);
  if (op.body === undefined) noBody(body, what);
  else args.push(checked(op.body, body, what));
  if (fence !== undefined) {
    const options: RequestOptions = { fence };
    args.push(options);
  }
  // The table names the method (`satisfies` in src/api/routes.ts ties each name to ApiClient).
  const call = client[op.name] as (...a: unknown[]) => Promise<unknown>;
  const answer = await call.apply(client, args);
  if (method === 'POST') return { id: (answer as { readonly id: string }).id, answer };
  return answer === undefined ? {} : { answer };
}

function noBody(body: unknown, what: string): void {
  if (body !== undefined) throw new InvalidOperationError(`${what} must not carry a body`);
}
