/**
 * A scripted HTTP server on 127.0.0.1 (port 0) for the API client's unit tests: each request is
 * answered by the first unused script entry matching its method, path, headers and body, as
 * written; a request nothing matches gets a 599 naming it, which no client call accepts. The
 * client runs its production exchange (undici) against it: this scripts HTTP, not our API.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Match {
  readonly method: string;
  /** The exact path with its query, or a predicate on it. */
  readonly path: string | ((path: string) => boolean);
  /** Values the request's headers must have, or a predicate on them. */
  readonly headers?: Readonly<Record<string, string>> | ((headers: IncomingHttpHeaders) => boolean);
  readonly body?: string;
}

interface ReplyOptions {
  readonly headers?: Readonly<Record<string, string>>;
}

type Action =
  | { readonly kind: 'reply'; status: number; body: string; headers: Record<string, string> }
  | { readonly kind: 'reset' };

interface Entry {
  readonly match: Match;
  readonly action: Action;
  uses: number;
}

export interface Scripted {
  readonly origin: string;
  intercept(match: Match): {
    /** An object body is sent as JSON (with its content type). */
    reply(status: number, body?: unknown, options?: ReplyOptions): { times(n: number): void };
    /** Reads the request, then destroys the connection without answering. */
    reset(): { times(n: number): void };
  };
  /** Script entries not used up yet. */
  pending(): number;
  close(): Promise<void>;
}

export async function scriptedServer(): Promise<Scripted> {
  const entries: Entry[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const path = req.url ?? '';
      const entry = entries.find(
        (e) => e.uses > 0 && matches(e.match, req.method ?? '', path, req.headers, body),
      );
      if (entry === undefined) {
        res.writeHead(599, { 'content-type': 'text/plain' });
        res.end(`no script entry for ${req.method} ${path}`);
        return;
      }
      entry.uses -= 1;
      const { action } = entry;
      if (action.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      res.writeHead(action.status, action.headers);
      res.end(action.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');

  const add = (match: Match, action: Action) => {
    const entry: Entry = { match, action, uses: 1 };
    entries.push(entry);
    return {
      times: (n: number) => {
        entry.uses = n;
      },
    };
  };
  return {
    origin: `http://127.0.0.1:${address.port}`,
    intercept: (match) => ({
      reply: (status, body = '', options = {}) => {
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        const type: Record<string, string> =
          typeof body === 'string' ? {} : { 'content-type': 'application/json' };
        return add(match, {
          kind: 'reply',
          status,
          body: text,
          headers: { ...type, ...options.headers },
        });
      },
      reset: () => add(match, { kind: 'reset' }),
    }),
    pending: () => entries.reduce((sum, e) => sum + e.uses, 0),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function matches(
  match: Match,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: string,
): boolean {
  if (match.method !== method) return false;
  if (typeof match.path === 'string' ? match.path !== path : !match.path(path)) return false;
  if (match.body !== undefined && match.body !== body) return false;
  const expected = match.headers;
  if (expected === undefined) return true;
  if (typeof expected === 'function') return expected(headers);
  return Object.entries(expected).every(([name, value]) => headers[name] === value);
}
