/**
 * The daemon's HTTP surface, as a plain `node:http` request handler (the daemon binds it):
 *
 *   GET  /             the status page (./page.ts): HTML that draws /status and /events
 *   GET  /healthz      200 "ok" while the process serves requests (liveness)
 *   GET  /readyz       200 after the first successful reconcile, else 503 (readiness)
 *   GET  /metrics      Prometheus text exposition
 *   GET  /status       JSON `DaemonStatus` (format_version 2): the resources counted
 *   GET  /status/resources  JSON `ResourcePage`: the resources a page at a time, filtered by the
 *                      query (`state`, `kind`, `address`, `offset`, `limit`; 400 on a bad one)
 *   GET  /events       JSON: the last events
 *   POST /-/reconcile  202: a cycle is requested (git-sync `--webhook-url`); 503 when stopping
 *   POST /-/suspend    200: writes stopped; POST /-/resume: allowed again
 *
 * The three POSTs change what the daemon does: each listener serves them according to its
 * `control` access (./control.ts): 401 without the right bearer token, 403 where they are off,
 * and 403 / 415 to what only a web page sends (a foreign Origin, a rebound Host, a text/plain or
 * form body).
 * Unknown paths answer 404, known paths with another method 405 with `Allow`. Request bodies are
 * never read (drained and discarded). Errors answer 500 with a one-line message, never a stack.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorize, type ControlAccess, crossSiteRefusal } from './control.js';
import { STATUS_PAGE_HEADERS, STATUS_PAGE_HTML } from './page.js';
import { parseResourceQuery, type ResourceQuery } from './status.js';
import type { DaemonStatus, ResourcePage } from './types.js';

export interface DaemonHttpDeps {
  readonly status: () => DaemonStatus;
  /** `GET /status/resources`: one page of the managed resources. */
  readonly resources: (query: ResourceQuery) => ResourcePage;
  readonly ready: () => boolean;
  readonly metrics: { readonly contentType: string; render(): Promise<string> };
  /** Requests a cycle; returns false when the daemon no longer accepts triggers. */
  readonly requestReconcile: () => boolean;
  /** The last events (`GET /events`). */
  readonly events?: () => readonly unknown[];
  /**
   * `POST /-/suspend` and `POST /-/resume`: the daemon's whole write switch. They return whether
   * the state changed (a repeated request changes nothing and says so).
   */
  readonly suspend?: () => boolean;
  readonly resume?: () => boolean;
  /** Who may use the POST endpoints on this listener. */
  readonly control: ControlAccess;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const JSON_TYPE = 'application/json; charset=utf-8';

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
  headers: Record<string, string> = {},
  head = false,
): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(head ? undefined : body);
}

type Routes = Record<string, Record<string, (req: IncomingMessage, res: ServerResponse) => void>>;

export function createDaemonHttpHandler(deps: DaemonHttpDeps): Handler {
  const routes = routesOf(deps);
  return (req, res) => dispatch(routes, deps, req, res);
}

/** Path -> method -> handler: the whole surface of the daemon's listener, in one table. */
function routesOf(deps: DaemonHttpDeps): Routes {
  return {
    '/': {
      GET: (req, res) =>
        send(
          res,
          200,
          STATUS_PAGE_HTML,
          'text/html; charset=utf-8',
          STATUS_PAGE_HEADERS,
          req.method === 'HEAD',
        ),
    },
    '/healthz': {
      GET: (req, res) => send(res, 200, 'ok\n', undefined, {}, req.method === 'HEAD'),
    },
    '/readyz': {
      GET: (req, res) => {
        const head = req.method === 'HEAD';
        if (deps.ready()) send(res, 200, 'ready\n', undefined, {}, head);
        else send(res, 503, 'not ready: no successful reconcile yet\n', undefined, {}, head);
      },
    },
    '/metrics': {
      GET: (req, res) => {
        deps.metrics.render().then(
          (text) => send(res, 200, text, deps.metrics.contentType, {}, req.method === 'HEAD'),
          () => send(res, 500, 'metrics unavailable\n'),
        );
      },
    },
    '/status': {
      GET: (req, res) =>
        send(
          res,
          200,
          `${JSON.stringify(deps.status())}\n`,
          'application/json; charset=utf-8',
          {},
          req.method === 'HEAD',
        ),
    },
    '/status/resources': {
      GET: (req, res) => {
        const query = parseResourceQuery(new URL(req.url ?? '/', 'http://daemon').searchParams);
        if ('error' in query) {
          send(res, 400, `${JSON.stringify({ error: query.error })}\n`, JSON_TYPE);
          return;
        }
        send(
          res,
          200,
          `${JSON.stringify(deps.resources(query))}\n`,
          JSON_TYPE,
          {},
          req.method === 'HEAD',
        );
      },
    },
    '/events': {
      GET: (req, res) =>
        send(
          res,
          200,
          `${JSON.stringify({ events: deps.events?.() ?? [] })}\n`,
          'application/json; charset=utf-8',
          {},
          req.method === 'HEAD',
        ),
    },
    '/-/suspend': {
      POST: (_req, res) => {
        const changed = deps.suspend?.() ?? false;
        send(res, 200, `${JSON.stringify({ suspended: true, changed })}\n`, JSON_TYPE);
      },
    },
    '/-/resume': {
      POST: (_req, res) => {
        const changed = deps.resume?.() ?? false;
        send(res, 200, `${JSON.stringify({ suspended: false, changed })}\n`, JSON_TYPE);
      },
    },
    '/-/reconcile': {
      POST: (_req, res) => {
        if (deps.requestReconcile()) {
          send(res, 202, '{"accepted":true}\n', 'application/json; charset=utf-8');
        } else {
          send(
            res,
            503,
            '{"accepted":false,"reason":"stopping"}\n',
            'application/json; charset=utf-8',
          );
        }
      },
    },
  };
}

function dispatch(
  routes: Routes,
  deps: DaemonHttpDeps,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  // Bodies are never used; drain them so keep-alive connections stay usable.
  req.resume();
  try {
    const pathname = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const methods = routes[pathname];
    if (methods === undefined) {
      send(res, 404, 'not found\n');
      return;
    }
    // HEAD is served wherever GET is, without a body.
    const method = req.method === 'HEAD' && methods.GET ? 'GET' : (req.method ?? 'GET');
    const handle = methods[method];
    if (handle === undefined) {
      const allow = Object.keys(methods);
      if (methods.GET) allow.push('HEAD');
      send(res, 405, 'method not allowed\n', undefined, { allow: allow.join(', ') });
      return;
    }
    if (method === 'POST' && !permitted(deps.control, req, res)) return;
    handle(req, res);
  } catch {
    if (!res.headersSent) send(res, 500, 'internal error\n');
    else res.destroy();
  }
}

/**
 * Answers 403, 415 or 401 (and returns false) unless the listener lets this request through:
 * a browser's cross-site or rebinding request first (./control.ts), then the token.
 */
function permitted(access: ControlAccess, req: IncomingMessage, res: ServerResponse): boolean {
  const verdict =
    crossSiteRefusal(access, req.headers) ?? authorize(access, req.headers.authorization);
  if (verdict.ok) return true;
  const headers: Record<string, string> =
    verdict.status === 401 ? { 'www-authenticate': 'Bearer realm="edgesync"' } : {};
  send(res, verdict.status, `${JSON.stringify({ error: verdict.error })}\n`, JSON_TYPE, headers);
  return false;
}
