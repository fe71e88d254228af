/**
 * The HTTP layer of the local Edge API server, as a factory (`createServer(deps)` returns the
 * request listener; listening lives in `startServer` and the `server` command). It owns the
 * request pipeline: operation ID, authentication (constant-time; ./wire.ts), version header,
 * routing (404/405), path ID prefixes (227), query parameters (231), rate limit (429), body
 * limit (413), the latency/fault/reset knobs, content type (210) and JSON (213: strict UTF-8;
 * no `__proto__` key, 215), then the
 * handler; and it turns every failure into api-notes' error body. Nothing a client sends can
 * produce a 500 or a stack trace: unexpected exceptions are logged and answered with a bare 500
 * body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { API_VERSION, ERROR_CODE, ID_PREFIX, LIMITS } from '../hosted/edge-api.js';
import type { Logger } from '../log.js';
import { realSleep, type Sleep } from '../retry.js';
import { principalId } from './endpoints/handlers.js';
import { RequestError, StoreError } from './errors.js';
import { type Call, createHandlers, type Handlers, type Reply } from './handlers.js';
import { createIdGenerator, type IdGenerator } from './ids.js';
import { AccountThrottle, HeldWrites, type ServerKnobs } from './knobs.js';
import { Renderer } from './render.js';
import { BODY_METHODS, type Method, parseQuery, resolve, splitPath } from './routes.js';
import { SecretSealer } from './secret-seal.js';
import type { Store } from './store.js';
import {
  Authenticator,
  createOperationIds,
  errorBody,
  isJsonContentType,
  parseJsonBody,
} from './wire.js';

/**
 * Runs of a handler whose view keeps being undone by failing writes before it answers 503: each
 * run after the first follows another lost batch, so only a stream of failing writes (a full
 * disk under load) gets there; a bounded number of concurrent writers never does.
 */
const MAX_ANSWER_ATTEMPTS = 16;

const lost = (settled: Promise<void>): Promise<boolean> =>
  settled.then(
    () => false,
    () => true,
  );

type HandlerName = keyof Handlers;

export interface ServerDeps {
  readonly store: Store;
  /** Each key is one account. */
  readonly apiKeys: readonly string[];
  /** Absolute base of every URI in responses, no trailing slash. */
  readonly baseUrl: string;
  /** Read on every request: tests may change it at runtime. */
  readonly knobs: ServerKnobs;
  readonly logger: Logger;
  readonly now?: () => number;
  /** In [0, 1): drives the fault and reset knobs and the latency draw. */
  readonly random?: () => number;
  /** The latency knob's waits (../retry.ts's sleep by default). */
  readonly sleep?: Sleep;
  readonly ids?: IdGenerator;
  /** Seals secret values; default a key of this process (values then die with it). */
  readonly sealer?: SecretSealer;
}

export interface EdgeServer {
  /** The node:http request listener. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** The node:http `clientError` listener: malformed HTTP gets a JSON 400 (or 431), then close. */
  readonly clientError: (err: Error & { code?: string }, socket: Duplex) => void;
  readonly renderer: Renderer;
  /**
   * Accepts `key` for the service user `serviceUser` (`bot_`) of the account `accountId` from
   * now on: its requests act on that account, and what it writes names the service user as
   * `created_by` / `last_updated_by`. Refused while the service user is missing or inactive.
   */
  readonly addServiceUserKey: (key: string, accountId: string, serviceUser: string) => void;
}

interface RequestHead {
  readonly method: string;
  readonly url: string;
  /** The path without the query. */
  readonly path: string;
  /** The query without its `?` ('' when there is none). */
  readonly query: string;
}

function headOf(req: IncomingMessage): RequestHead {
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return {
    method,
    url,
    path: q < 0 ? url : url.slice(0, q),
    query: q < 0 ? '' : url.slice(q + 1),
  };
}

function send(
  res: ServerResponse,
  opId: string,
  status: number,
  body: string | undefined,
  extra?: Readonly<Record<string, string>>,
) {
  const headers: Record<string, string | number> = { 'svc-operation-id': opId, ...extra };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(body);
  }
  res.writeHead(status, headers);
  res.end(body);
}

function sendError(res: ServerResponse, opId: string, err: RequestError) {
  send(res, opId, err.status, errorBody(err.status, err.errorCode, err.message, opId), err.headers);
}

/** 400 without the version header, or with another version. */
function checkVersion(version: string | string[] | undefined): void {
  if (version === undefined) {
    throw new RequestError(
      400,
      ERROR_CODE.missingVersion,
      `missing Svc-Version header (send ${API_VERSION})`,
    );
  }
  if (version !== API_VERSION) {
    throw new RequestError(
      400,
      ERROR_CODE.badVersion,
      `unsupported Svc-Version; send ${API_VERSION}`,
    );
  }
}

/** The route and handler of a request: 404 for no route, 405 for its method, 227 for an ID. */
function routeOf(head: RequestHead): {
  readonly resolved: NonNullable<ReturnType<typeof resolve>>;
  readonly handlerName: HandlerName;
} {
  const segments = splitPath(head.path);
  const resolved = segments === undefined ? undefined : resolve(segments);
  if (resolved === undefined) {
    throw new RequestError(
      404,
      ERROR_CODE.notFound,
      `no such resource: ${head.path.slice(0, 200)}`,
    );
  }
  const handlerName = resolved.table[head.method as Method];
  if (handlerName === undefined) {
    const allow = Object.keys(resolved.table).join(', ');
    throw new RequestError(
      405,
      ERROR_CODE.methodNotAllowed,
      `method ${head.method} not allowed; allowed: ${allow}`,
      { headers: { allow } },
    );
  }
  for (const [id, prefix] of resolved.ids) {
    if (!id.startsWith(prefix) || id.length === prefix.length) {
      throw new RequestError(
        400,
        ERROR_CODE.wrongIdPrefix,
        `ID ${JSON.stringify(id.slice(0, 100))} must start with "${prefix}"`,
      );
    }
  }
  return { resolved, handlerName };
}

/** The account states of the `edgeAccess` knob: no access to edges, or read-only edges. */
function checkEdgeAccess(knobs: ServerKnobs, head: RequestHead): void {
  if (knobs.edgeAccess === undefined || !head.path.startsWith('/edges')) return;
  if (knobs.edgeAccess === 'no-access') {
    throw new RequestError(
      403,
      ERROR_CODE.noEdgeAccess,
      'this account has no access to edges (the feature is not enabled for it)',
    );
  }
  if (head.method !== 'GET' && head.method !== 'HEAD') {
    throw new RequestError(
      403,
      ERROR_CODE.edgesReadOnly,
      "this account's edges are read-only: writes to edges are refused",
    );
  }
}

/**
 * Reads the body up to the limit. Over the limit: answers 413 at once (from Content-Length, or
 * as soon as the streamed bytes exceed it), closes the connection afterwards, and discards
 * the rest instead of buffering it.
 */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > LIMITS.bodyBytes) return Promise.resolve(undefined);
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > LIMITS.bodyBytes) {
        over = true;
        chunks.length = 0;
        resolveBody(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolveBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
    req.on('error', reject);
    // A client that hangs up mid-body: nothing to answer, but the pipeline must not hang.
    req.on('close', () => {
      if (!req.complete) reject(new RequestError(400, ERROR_CODE.invalidValue, 'incomplete body'));
    });
  });
}

/** The raw body: empty for a request without one, undefined when it is over the limit. */
async function rawBodyOf(req: IncomingMessage, method: string): Promise<Buffer | undefined> {
  const hasBody =
    BODY_METHODS.has(method) ||
    req.headers['content-length'] !== undefined ||
    req.headers['transfer-encoding'] !== undefined;
  return hasBody ? await readBody(req) : Buffer.alloc(0);
}

function tooLarge(req: IncomingMessage, res: ServerResponse, opId: string) {
  const err = new RequestError(
    413,
    ERROR_CODE.bodyTooLarge,
    `request body exceeds ${LIMITS.bodyBytes} bytes`,
  );
  // Keep draining (not buffering) so the client can read the answer, then close: the rest of
  // an oversized body must not be parsed as the next request.
  req.resume();
  send(res, opId, 413, errorBody(413, err.errorCode, err.message, opId), {
    connection: 'close',
  });
  const timer = setTimeout(() => req.socket.destroy(), 5_000);
  timer.unref();
  res.on('close', () => clearTimeout(timer));
}

/** The JSON body of a method that takes one (210, 213, 215; the `echoBody` knob's refusal). */
function decodeBody(
  req: IncomingMessage,
  method: string,
  raw: Buffer,
  knobs: ServerKnobs,
): unknown {
  if (!BODY_METHODS.has(method)) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new RequestError(400, ERROR_CODE.contentType, 'Content-Type must be application/json');
  }
  const body = parseJsonBody(raw);
  if (knobs.echoBody === true) {
    throw new RequestError(
      400,
      ERROR_CODE.invalidValue,
      `injected fault: refusing the request body ${raw.toString('utf8')}`,
    );
  }
  return body;
}

/** Malformed HTTP (node's `clientError`): a JSON 400 (or 431 for headers too large), then close. */
function answerClientError(err: Error & { code?: string }, socket: Duplex, opId: string): void {
  const tooBig = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooBig ? 431 : 400;
  const body = errorBody(
    status,
    tooBig ? undefined : ERROR_CODE.invalidValue,
    tooBig ? 'request headers too large' : 'malformed HTTP request',
    opId,
  );
  socket.end(
    `HTTP/1.1 ${status} ${tooBig ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `content-type: application/json\r\nsvc-operation-id: ${opId}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** One server's settings and parts, shared by the request steps below. */
interface App {
  readonly deps: ServerDeps;
  readonly now: () => number;
  readonly random: () => number;
  readonly sleep: Sleep;
  readonly handlers: ReturnType<typeof createHandlers>;
  readonly accountThrottle: AccountThrottle;
  readonly held: HeldWrites;
  readonly log: ServerDeps['logger'];
  readonly keys: Authenticator;
  readonly operationId: () => string;
}

export function createServer(deps: ServerDeps): EdgeServer {
  const now = deps.now ?? Date.now;
  const ids = deps.ids ?? createIdGenerator({ now });
  const renderer = new Renderer(deps.baseUrl);
  const app: App = {
    deps,
    now,
    random: deps.random ?? Math.random,
    sleep: deps.sleep ?? realSleep,
    handlers: createHandlers({
      store: deps.store,
      render: renderer,
      ids,
      now,
      knobs: deps.knobs,
      sealer: deps.sealer ?? new SecretSealer(),
    }),
    accountThrottle: new AccountThrottle(),
    held: new HeldWrites(),
    log: deps.logger,
    keys: new Authenticator(deps.apiKeys),
    operationId: createOperationIds(ids.next(ID_PREFIX.operation).slice(0, -8)),
  };
  return {
    handle: (req, res) => handle(app, req, res),
    clientError: (err, socket) => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      answerClientError(err, socket, app.operationId());
    },
    renderer,
    addServiceUserKey: (key, accountId, serviceUser) =>
      app.keys.addServiceUserKey(key, accountId, serviceUser),
  };
}

/** The account a request acts on, and the actor its key speaks for (the account's owner, or a service user). */
function credentialOf(app: App, req: IncomingMessage): { accountId: string; actor: string } {
  const found = app.keys.authenticate(req.headers.authorization);
  // A service user's key works while its service user exists and is active.
  const user =
    found?.serviceUser === undefined
      ? undefined
      : app.deps.store.account(found.accountId).bots.get(found.serviceUser);
  if (found === undefined || (found.serviceUser !== undefined && user?.active !== true)) {
    throw new RequestError(
      401,
      ERROR_CODE.unauthorized,
      'missing or unknown API key: send Authorization: Bearer <API key>',
    );
  }
  return { accountId: found.accountId, actor: found.serviceUser ?? principalId(found.accountId) };
}

/** The `rateLimit` knob: 429 with Retry-After once the account's window is full. */
function throttle(app: App, accountId: string): void {
  const spec = app.deps.knobs.rateLimit;
  if (spec === undefined) return;
  const wait = app.accountThrottle.check(accountId, spec, app.now());
  if (wait > 0) {
    throw new RequestError(
      429,
      ERROR_CODE.rateLimited,
      `rate limit exceeded; retry after ${wait} s`,
      {
        headers: { 'retry-after': String(wait) },
      },
    );
  }
}

/**
 * The latency, late-create and fault knobs, in that order. Returns whether this write is a
 * held create (it goes ahead later whatever its client does) and whether the connection is to
 * be reset instead of answered.
 */
async function applyKnobs(app: App, head: RequestHead): Promise<{ late: boolean; reset: boolean }> {
  const { random } = app;
  const knobs = app.deps.knobs;
  if (knobs.latencyMs !== undefined) {
    const { min, max } = knobs.latencyMs;
    const ms = min + random() * Math.max(0, max - min);
    if (ms > 0) await app.sleep(ms);
  }
  const lateKnob = knobs.lateCreates;
  const late = HeldWrites.takes(lateKnob, head.method, head.path);
  if (late) await app.held.hold(lateKnob);
  if (knobs.faultRate !== undefined && knobs.faultRate > 0 && random() < knobs.faultRate) {
    throw new RequestError(
      503,
      ERROR_CODE.unavailable,
      'injected fault: service unavailable (the request was not performed)',
    );
  }
  const reset = knobs.resetRate !== undefined && knobs.resetRate > 0 && random() < knobs.resetRate;
  return { late, reset };
}

/** Every step of a request, in order; each one throws the RequestError it answers. */
async function pipeline(app: App, req: IncomingMessage, res: ServerResponse, opId: string) {
  const { deps } = app;
  const head = headOf(req);
  const { accountId, actor } = credentialOf(app, req);
  checkVersion(req.headers['svc-version']);
  const { resolved, handlerName } = routeOf(head);
  const page = parseQuery(head.query, resolved);
  checkEdgeAccess(deps.knobs, head);
  throttle(app, accountId);
  const raw = await rawBodyOf(req, head.method);
  if (raw === undefined) {
    tooLarge(req, res, opId);
    return;
  }
  const { late, reset } = await applyKnobs(app, head);
  const call: Call = {
    accountId,
    actor,
    account: deps.store.account(accountId),
    ids: resolved.ids.map(([id]) => id),
    ...(resolved.module === undefined ? {} : { module: resolved.module }),
    ...(page === undefined ? {} : { page }),
    body: decodeBody(req, head.method, raw, deps.knobs),
  };
  let reply: Reply | undefined;
  try {
    reply = await answer(app, handlerName, call);
    if (head.method !== 'GET' && !late) app.held.release();
  } catch (err) {
    // A reset knob drops the connection instead of answering a refusal; a bug still answers.
    if (!reset || !(err instanceof RequestError)) throw err;
  }
  // Without an answer only when reset: a refusal dropped with the connection.
  if (reset || reply === undefined) {
    req.socket.destroy();
    return;
  }
  send(res, opId, reply.status, reply.body);
}

/**
 * Runs the handler; its answer goes out only once every write it may reflect is durable. A
 * write's own `durable` covers every write applied before it (batches are synced in order).
 * A read or a refusal that saw a write still being persisted waits for it; if that write is
 * lost (and undone), the handler runs again on the state without it.
 */
async function answer(app: App, name: HandlerName, call: Call): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    const seen = app.deps.store.settled();
    let reply: Reply;
    try {
      // A handler may yield (a list's filter runs in slices): its refusals arrive here too.
      reply = await app.handlers[name](call);
    } catch (err) {
      if (seen === undefined || !(err instanceof RequestError)) throw err;
      if ((await lost(seen)) && attempt < MAX_ANSWER_ATTEMPTS) continue;
      throw err;
    }
    if (reply.durable !== undefined) {
      await reply.durable;
      return reply;
    }
    if (seen === undefined || !(await lost(seen))) return reply;
    if (attempt >= MAX_ANSWER_ATTEMPTS) {
      throw new StoreError('the writes this answer reflected could not be persisted');
    }
  }
}

/** A failed request's answer: its RequestError, 503 for storage, a bare 500 for a bug. */
function fail(
  app: App,
  req: IncomingMessage,
  res: ServerResponse,
  opId: string,
  err: unknown,
): void {
  if (res.headersSent || res.destroyed) return;
  if (err instanceof RequestError) {
    sendError(res, opId, err);
    return;
  }
  if (err instanceof StoreError) {
    app.log.error({ err, operationId: opId }, 'store failure');
    sendError(
      res,
      opId,
      new RequestError(
        503,
        ERROR_CODE.unavailable,
        'storage unavailable (is the disk full?): the write was not performed',
      ),
    );
    return;
  }
  // A bug: log it, answer without internals.
  app.log.error({ err, operationId: opId, method: req.method }, 'unexpected error');
  send(res, opId, 500, errorBody(500, undefined, 'internal error', opId));
}

function handle(app: App, req: IncomingMessage, res: ServerResponse): void {
  const opId = app.operationId();
  pipeline(app, req, res, opId).then(
    () => {
      if (app.log.isLevelEnabled('debug')) {
        app.log.debug(
          { operationId: opId, method: req.method, url: req.url, status: res.statusCode },
          'request',
        );
      }
    },
    (err: unknown) => fail(app, req, res, opId, err),
  );
}
