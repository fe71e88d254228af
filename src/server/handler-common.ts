/**
 * What every resource's handlers share: the call and reply shapes, the lookups by path ID (each
 * 404 with its resource's error code), the checks that span resources (hostports, body IDs,
 * rule violations), module bookkeeping, pagination and module replies. One place, so a TLS edge
 * and an HTTPS edge cannot drift apart in how they answer the same situation.
 */
import { z } from 'zod';
import { ERROR_CODE, type RuleViolation } from '../hosted/edge-api.js';
import { invalidValue, RequestError } from './errors.js';
import type { IdGenerator } from './ids.js';
import type { ServerKnobs } from './knobs.js';
import type { BotUserRec, HttpsEdgeRec, RouteRec, TlsEdgeRec } from './model.js';
import type { Renderer } from './render.js';
import type { RouteModules } from './schemas.js';
import type { SecretSealer } from './secret-seal.js';
import type { AccountState, Collection, Store } from './store.js';
import { parseBody } from './validate.js';

/** What a handler answers: a status and a JSON body (absent for 204). */
export interface Reply {
  readonly status: number;
  readonly body?: string;
  /** Resolves when the change is durable; the reply must not be sent before. */
  readonly durable?: Promise<void>;
}

export interface Call {
  readonly accountId: string;
  /** The actor the request's key speaks for: the account's owner (`usr_`) or a service user. */
  readonly actor: string;
  readonly account: AccountState;
  /** Path IDs, already checked for their prefix. */
  readonly ids: readonly string[];
  readonly module?: string;
  readonly page?: { beforeId: string | undefined; limit: number; filter?: string };
  readonly body?: unknown;
}

export interface HandlerDeps {
  readonly store: Store;
  readonly render: Renderer;
  readonly ids: IdGenerator;
  readonly now: () => number;
  /** The live knobs (read at each request), for the rules an account variant changes. */
  readonly knobs: ServerKnobs;
  /** Seals secret values (vault secrets) before they reach a record. */
  readonly sealer: SecretSealer;
}

export type AnyModules = Record<string, unknown>;

export const json = (status: number, body: string, durable?: Promise<void>): Reply =>
  durable === undefined ? { status, body } : { status, body, durable };
export const noContent = (durable?: Promise<void>): Reply =>
  durable === undefined ? { status: 204 } : { status: 204, durable };

function id(call: Call, i: number): string {
  return call.ids[i] as string;
}

function notFound(what: string, id: string, code: (typeof ERROR_CODE)[keyof typeof ERROR_CODE]) {
  return new RequestError(404, code, `${what} ${id} not found`);
}

export function tlsEdge(call: Call): TlsEdgeRec {
  const edge = call.account.tls.get(id(call, 0));
  if (edge === undefined) throw notFound('TLS edge', id(call, 0), ERROR_CODE.edgeNotFound);
  return edge;
}
export function httpsEdge(call: Call): HttpsEdgeRec {
  const edge = call.account.https.get(id(call, 0));
  if (edge === undefined) throw notFound('HTTPS edge', id(call, 0), ERROR_CODE.edgeNotFound);
  return edge;
}
export function route(call: Call): { edge: HttpsEdgeRec; route: RouteRec } {
  const edge = httpsEdge(call);
  const rid = id(call, 1);
  const found = edge.routes.find((r) => r.id === rid);
  if (found === undefined) throw notFound('route', rid, ERROR_CODE.routeNotFound);
  return { edge, route: found };
}
export function botUser(call: Call): BotUserRec {
  const bot = call.account.bots.get(id(call, 0));
  if (bot === undefined) throw notFound('bot user', id(call, 0), ERROR_CODE.notFound);
  return bot;
}

export function checkHostports(
  account: AccountState,
  hostports: readonly string[],
  selfId?: string,
) {
  const taken = account.hostportOwner(hostports, selfId);
  if (taken !== undefined) {
    throw new RequestError(
      400,
      ERROR_CODE.hostportInUse,
      `hostport ${taken} is already used by another edge of this account`,
    );
  }
}

export function checkBodyId(value: string | undefined, expected: string, field: string) {
  if (value !== undefined && value !== expected) {
    throw invalidValue(`${field} in the body (${value}) does not match the path (${expected})`);
  }
}

// The service's own published shape of a module replacement, which its official TypeScript
// client sends: the module wrapped with the IDs of the path. Strict like every other body.
const edgeModuleEnvelope = z.strictObject({ id: z.string().optional(), module: z.unknown() });
const routeModuleEnvelope = edgeModuleEnvelope.extend({ edge_id: z.string().optional() });

/**
 * The module of a replacement (PUT) body: the bare module, as the other official clients send
 * it, or `{ "id", "module" }` (route modules also `"edge_id"`), recognised by its `module` key.
 * The IDs, when present, must match the path.
 */
export function moduleBody(body: unknown, path: { id: string; edgeId?: string }): unknown {
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, 'module')) return body;
  if (path.edgeId === undefined) {
    const envelope = parseBody(edgeModuleEnvelope, body);
    checkBodyId(envelope.id, path.id, 'id');
    return envelope.module;
  }
  const envelope = parseBody(routeModuleEnvelope, body);
  checkBodyId(envelope.id, path.id, 'id');
  checkBodyId(envelope.edge_id, path.edgeId, 'edge_id');
  return envelope.module;
}

export function refuse(violation: RuleViolation | undefined): void {
  if (violation !== undefined) throw new RequestError(400, violation.code, violation.message);
}

/** Modules of a create body (null and absent both mean unset). */
export function modulesFrom<K extends string>(
  names: readonly K[],
  body: Partial<Record<K, unknown>>,
) {
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = body[name] ?? null;
  return out;
}

/** Modules after a PATCH: present ones replace, absent ones stay. */
export function patchModules(
  names: readonly string[],
  current: object,
  body: Record<string, unknown>,
) {
  const out: AnyModules = { ...current };
  for (const name of names) if (body[name] != null) out[name] = body[name];
  return out;
}

/** What a create body of either edge kind gives every new edge: ID, time, scalars, modules. */
export function newEdgeFields<K extends string>(
  id: string,
  createdAt: string,
  body: {
    readonly description?: string | undefined;
    readonly metadata?: string | undefined;
    readonly hostports?: string[] | undefined;
  } & Partial<Record<K, unknown>>,
  modules: readonly K[],
) {
  return {
    id,
    created_at: createdAt,
    description: body.description ?? '',
    metadata: body.metadata ?? '',
    hostports: body.hostports ?? [],
    modules: modulesFrom(modules, body),
  };
}

/** An edge's scalars and modules after an update body of either edge kind. */
export function updatedEdgeFields<E extends TlsEdgeRec | HttpsEdgeRec>(
  edge: E,
  body: {
    readonly description?: string | undefined;
    readonly metadata?: string | undefined;
    readonly hostports?: string[] | undefined;
  } & Record<string, unknown>,
  modules: readonly string[],
): E {
  return {
    ...edge,
    description: body.description ?? edge.description,
    metadata: body.metadata ?? edge.metadata,
    hostports: body.hostports ?? edge.hostports,
    modules: patchModules(modules, edge.modules, body) as E['modules'],
  };
}

export function list<T extends { readonly id: string }>(
  render: Renderer,
  call: Call,
  collection: Collection<T>,
  key: string,
  path: string,
  one: (rec: T) => string,
  where?:
    | { keep: (rec: T) => boolean; query: string }
    // A page found already (a filter that ran in slices, over the records as they were).
    | { found: { items: T[]; more: boolean }; query: string },
): Reply {
  const page = call.page ?? { beforeId: undefined, limit: 100 };
  const { items, more } =
    where !== undefined && 'found' in where
      ? where.found
      : collection.page(page.beforeId, page.limit, where?.keep);
  const last = items[items.length - 1];
  const uri = `${render.base}${path}`;
  // A filtered list's next page carries the filter too.
  const extra = where === undefined || where.query === '' ? '' : `&${where.query}`;
  const next =
    more && last !== undefined
      ? JSON.stringify(`${uri}?before_id=${last.id}&limit=${page.limit}${extra}`)
      : 'null';
  return json(
    200,
    `{"${key}":[${items.map(one).join(',')}],"uri":${JSON.stringify(uri)},"next_page_uri":${next}}`,
  );
}

export function moduleReply(render: Renderer, call: Call, modules: object, ownerId: string): Reply {
  const name = call.module as keyof RouteModules;
  if ((modules as AnyModules)[name] == null) {
    throw new RequestError(404, ERROR_CODE.notFound, `module ${name} is not set on ${ownerId}`);
  }
  return json(200, render.module(name, modules as AnyModules, ownerId));
}
