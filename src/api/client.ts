/**
 * The Edge API client, composed from the rooms below: everything about talking to the API
 * (headers, URLs, pagination, response validation at the edge (zod), typed errors, retries and
 * the client-side rate limit) over the one HTTP exchange port (undici by default). It makes no decision about what a failure means for
 * reconciliation: a 404 on a DELETE is thrown like any other (`isNotFound`), and a create whose
 * outcome is unknown is thrown flagged (`isOutcomeUnknown`) for the applier to look before it
 * creates again.
 *
 * Rooms: ./transport.ts (one call: headers, timeout, retries, rate limit, errors), ./exchange.ts
 * (the HTTP exchange it goes through), ./pagination.ts (lists), ./routes.ts (the table of
 * operations every method is generated from); ./types.ts holds the client's typed surface and
 * options. This file puts them together.
 *
 * Transport and time are injected (http, sleep, now, random): tests assert exact backoff
 * sequences without sleeping, and integration tests run against the local server over HTTP.
 */
import type { z } from 'zod';
import { EdgesyncError } from '../errors.js';
import type { HttpMethod } from './exchange.js';
import { listAll } from './pagination.js';
import {
  type ApiOperation,
  FIXED_OPERATIONS,
  fillTemplate,
  moduleOperation,
  ownerParams,
  segment,
  templateParams,
} from './routes.js';
import type { ModuleOwner } from './schemas.js';
import { createTransport, type Transport } from './transport.js';
import type { ApiClient, ApiClientOptions, ListOptions, RequestOptions } from './types.js';

type Method = (...args: unknown[]) => Promise<unknown>;

/** Sends one operation: its path filled from `params`, its answer checked by its schema. */
function send(
  transport: Transport,
  op: ApiOperation,
  params: (param: string) => string | undefined,
  body: unknown,
  options: RequestOptions,
): Promise<unknown> {
  const path = fillTemplate(op.template, (p) => segment(String(params(p))));
  const call = {
    method: op.method,
    route: op.template,
    path,
    signal: options.signal,
    fence: options.fence,
    ...(op.body === undefined ? {} : { body }),
  };
  if (op.answer === undefined) return transport.sendNoContent(call);
  return transport.send(call, op.answer);
}

/** A method with a fixed template: `(...params, body?, options?) => answer`. */
function fixedMethod(transport: Transport, op: ApiOperation): Method {
  const { answer, items } = op;
  const names = templateParams(op.template);
  if (items !== undefined && answer !== undefined) {
    const page = answer as z.ZodType<{ next_page_uri: string | null }>;
    const itemsOf = (p: object) => (p as Readonly<Record<string, readonly unknown[]>>)[items] ?? [];
    // A list under a resource (a vault's secrets) takes its IDs first, like any other method.
    return (...args: unknown[]) => {
      const path = fillTemplate(op.template, (p) => segment(String(args[names.indexOf(p)])));
      const options = (args[names.length] ?? {}) as ListOptions;
      return listAll(transport, op.template, page, itemsOf, options, path);
    };
  }
  const hasBody = op.body !== undefined;
  return async (...args: unknown[]) => {
    const options = (args[names.length + (hasBody ? 1 : 0)] ?? {}) as RequestOptions;
    const param = (name: string) => args[names.indexOf(name)] as string;
    return send(transport, op, param, args[names.length], options);
  };
}

/** A module method: `(owner, module, body?, options?) => answer`, its row picked by both. */
function moduleMethod(transport: Transport, method: HttpMethod): Method {
  return async (...args: unknown[]) => {
    const [owner, module] = args as [ModuleOwner, string];
    const op = moduleOperation(method, owner, module);
    if (op === undefined) {
      throw new EdgesyncError('ES_INTERNAL', `${owner.kind} has no module "${module}"`);
    }
    const hasBody = op.body !== undefined;
    const options = (args[hasBody ? 3 : 2] ?? {}) as RequestOptions;
    const params = ownerParams(owner);
    return send(transport, op, (p) => params[p], hasBody ? args[2] : undefined, options);
  };
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const transport = createTransport(options);
  const fixed = Object.fromEntries(
    FIXED_OPERATIONS.map((op) => [op.name, fixedMethod(transport, op)]),
  );
  // The methods' precise types come from the rows picked at run time, which the type system
  // cannot follow: `ApiClient` (./types.ts) states them, and `satisfies` in ./routes.ts ties
  // every fixed method to a row.
  return {
    baseUrl: transport.baseUrl,
    ...fixed,
    getModule: moduleMethod(transport, 'GET'),
    putModule: moduleMethod(transport, 'PUT'),
    deleteModule: moduleMethod(transport, 'DELETE'),
    close: () => transport.close(),
  } as unknown as ApiClient;
}
