/**
 * A wire-level fake of the Kubernetes API's Lease endpoints, for tests without a cluster:
 * `/apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]` with GET, POST and PUT, as the
 * API server answers them: `resourceVersion` optimistic concurrency (409 `Status` with reason
 * `Conflict`), 409 `AlreadyExists` on a second create, 404 `NotFound`, 403 `Forbidden`, 401 for
 * a missing or unknown token, 400 for a MicroTime without exactly six fractional digits (the
 * real server's RFC 3339 micro parsing). Clients are told apart by their bearer token, one per
 * generated kubeconfig, so a test can cut one replica off (its requests hang until the socket
 * is destroyed), refuse it, or slow it down. Listens on 127.0.0.1 only.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';

interface StoredLease {
  metadata: Record<string, unknown> & { name: string; namespace: string; resourceVersion: string };
  spec: Record<string, unknown>;
}

export interface LeaseServerKnobs {
  /** Tokens whose requests hang (no answer) until the test destroys their sockets. */
  cutOff: Set<string>;
  /** Tokens answered 403 Forbidden on every request. */
  forbidden: Set<string>;
  /** Extra latency before every answer, ms. */
  latencyMs: number;
  /** Answer the next N requests (any client) 503. */
  failNext: number;
}

export interface LeaseServer {
  readonly url: string;
  readonly knobs: LeaseServerKnobs;
  /** Requests per token and method, e.g. `requests.get('a')?.PUT`. */
  readonly requests: Map<string, Record<string, number>>;
  /** Every successful write (create or replace): who wrote, the holder written, when (epoch ms). */
  readonly writes: Array<{ readonly token: string; readonly holder: string; readonly at: number }>;
  lease(namespace: string, name: string): StoredLease | undefined;
  /** Writes a kubeconfig for `token` (user and context named after it); returns its path. */
  kubeconfig(dir: string, token: string, namespace?: string): Promise<string>;
  close(): Promise<void>;
}

const PREFIX =
  /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([a-z0-9-]+)\/leases(?:\/([a-z0-9.-]+))?$/;
const MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      code,
    }),
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startLeaseServer(tokens: readonly string[]): Promise<LeaseServer> {
  const leases = new Map<string, StoredLease>();
  let version = 100;
  const knobs: LeaseServerKnobs = {
    cutOff: new Set(),
    forbidden: new Set(),
    latencyMs: 0,
    failNext: 0,
  };
  const requests = new Map<string, Record<string, number>>();
  const writes: Array<{ token: string; holder: string; at: number }> = [];
  const sockets = new Map<string, Set<Socket>>();

  const server = createServer(async (req, res) => {
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (auth === undefined || !tokens.includes(auth)) {
      status(res, 401, 'Unauthorized', 'Unauthorized');
      return;
    }
    const counts = requests.get(auth) ?? {};
    counts[req.method ?? '?'] = (counts[req.method ?? '?'] ?? 0) + 1;
    requests.set(auth, counts);
    if (knobs.cutOff.has(auth)) {
      const set = sockets.get(auth) ?? new Set();
      set.add(req.socket);
      sockets.set(auth, set);
      return; // never answered
    }
    const body = await readBody(req);
    if (knobs.latencyMs > 0) await new Promise((r) => setTimeout(r, knobs.latencyMs));
    const url = new URL(req.url ?? '/', 'http://x');
    const m = PREFIX.exec(url.pathname);
    if (m === null) {
      status(res, 404, 'NotFound', 'the server could not find the requested resource');
      return;
    }
    const [, namespace = '', name] = m;
    const verb = req.method === 'GET' ? 'get' : req.method === 'POST' ? 'create' : 'update';
    if (knobs.forbidden.has(auth)) {
      status(
        res,
        403,
        'Forbidden',
        `leases.coordination.k8s.io "${name ?? ''}" is forbidden: User "system:serviceaccount:${namespace}:${auth}" cannot ${verb} resource "leases" in API group "coordination.k8s.io" in the namespace "${namespace}"`,
      );
      return;
    }
    if (knobs.failNext > 0) {
      knobs.failNext -= 1;
      status(res, 503, 'ServiceUnavailable', 'injected failure');
      return;
    }
    const key = (n: string) => `${namespace}/${n}`;
    const send = (code: number, lease: StoredLease) => {
      if (code !== 200 || req.method !== 'GET') {
        writes.push({
          token: auth,
          holder: String(lease.spec.holderIdentity ?? ''),
          at: Date.now(),
        });
      }
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease }));
    };
    const parse = ():
      | { metadata?: Record<string, unknown>; spec?: Record<string, unknown> }
      | undefined => {
      try {
        const value = JSON.parse(body) as {
          metadata?: Record<string, unknown>;
          spec?: Record<string, unknown>;
        };
        for (const field of ['acquireTime', 'renewTime']) {
          const t = value.spec?.[field];
          if (t !== undefined && t !== null && !(typeof t === 'string' && MICRO.test(t))) {
            status(
              res,
              400,
              'BadRequest',
              `Lease in version "v1" cannot be handled as a Lease: parsing time "${String(t)}" as "2006-01-02T15:04:05.000000Z07:00"`,
            );
            return undefined;
          }
        }
        return value;
      } catch {
        status(res, 400, 'BadRequest', 'invalid JSON');
        return undefined;
      }
    };
    if (req.method === 'GET' && name !== undefined) {
      const lease = leases.get(key(name));
      if (lease === undefined) {
        status(res, 404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`);
        return;
      }
      send(200, lease);
      return;
    }
    if (req.method === 'POST' && name === undefined) {
      const value = parse();
      if (value === undefined) return;
      const n = String(value.metadata?.name ?? '');
      if (leases.has(key(n))) {
        status(res, 409, 'AlreadyExists', `leases.coordination.k8s.io "${n}" already exists`);
        return;
      }
      version += 1;
      const lease: StoredLease = {
        metadata: { name: n, namespace, resourceVersion: String(version) },
        spec: value.spec ?? {},
      };
      leases.set(key(n), lease);
      send(201, lease);
      return;
    }
    if (req.method === 'PUT' && name !== undefined) {
      const value = parse();
      if (value === undefined) return;
      const current = leases.get(key(name));
      if (current === undefined) {
        status(res, 404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`);
        return;
      }
      const rv = value.metadata?.resourceVersion;
      if (rv !== undefined && rv !== current.metadata.resourceVersion) {
        status(
          res,
          409,
          'Conflict',
          `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
        return;
      }
      version += 1;
      const lease: StoredLease = {
        metadata: { name, namespace, resourceVersion: String(version) },
        spec: value.spec ?? {},
      };
      leases.set(key(name), lease);
      send(200, lease);
      return;
    }
    status(res, 405, 'MethodNotAllowed', 'the server does not allow this method');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    knobs,
    requests,
    writes,
    lease: (namespace, name) => leases.get(`${namespace}/${name}`),
    async kubeconfig(dir, token, namespace = 'default') {
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `kubeconfig-${token}`);
      await writeFile(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          `current-context: ${token}`,
          'clusters:',
          `- name: fake`,
          // The library refuses plain HTTP unless TLS verification is off: loopback only.
          `  cluster: { server: "${url}", insecure-skip-tls-verify: true }`,
          'users:',
          `- name: ${token}`,
          `  user: { token: "${token}" }`,
          'contexts:',
          `- name: ${token}`,
          `  context: { cluster: fake, user: ${token}, namespace: ${namespace} }`,
          '',
        ].join('\n'),
      );
      return file;
    },
    async close() {
      for (const set of sockets.values()) for (const s of set) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
