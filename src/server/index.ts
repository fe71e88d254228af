/**
 * The public face of the local Edge API server: `startServer()` (store, optional persistence,
 * listening socket, clean close) and `createServer()` (the request-listener factory, for callers
 * that listen themselves). Other modules and tests import from here only.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, errorMessage } from '../errors.js';
import { celCheckingEnvironment } from '../hosted/cel.js';
import { type Logger, silentLogger } from '../log.js';
import { createServer } from './app.js';
import { type AgentEndpointSeed, seedAgentEndpoints, seedIpPolicies } from './endpoints/seed.js';
import { createIdGenerator, encodeBase62 } from './ids.js';
import { type JournalIo, openJournal, type SalvageReport } from './journal.js';
import type { ServerKnobs } from './knobs.js';
import { openSealer, SecretSealer } from './secret-seal.js';
import { Store } from './store.js';
import { accountIdForKey } from './wire.js';

export type { AgentEndpointSeed } from './endpoints/seed.js';
export type { JournalIo } from './journal.js';
export type { SalvageReport } from './journal-scan.js';
export { parseLatency, parseRate, parseRateLimit, type ServerKnobs } from './knobs.js';

export interface StartServerOptions extends ServerKnobs {
  /** Each key is one account; at least one. */
  apiKeys: string[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Persist under this directory; memory only without it. */
  dataDir?: string;
  /** Base of the absolute URIs in responses; default the listening URL. */
  publicUrl?: string;
  logger?: Logger;
  /** Compact the log once it exceeds this many bytes (tests use small values). */
  compactBytes?: number;
  /** Random source of the fault, reset and latency knobs (tests seed it). Default Math.random. */
  random?: () => number;
  /** Start despite a damaged journal, keeping every intact record (`--salvage`). */
  salvage?: boolean;
  onSalvage?: (report: SalvageReport) => void;
  /** The journal's file operations (tests inject short and failing writes). */
  journalIo?: JournalIo;
  /** The snapshots' file operations (tests inject a compaction that fails). */
  snapshotIo?: JournalIo;
  /** Read-only agent endpoints, seeded into every account at each start (never persisted). */
  agentEndpoints?: readonly AgentEndpointSeed[];
  /** IP policies (IDs), seeded into every account at each start (never persisted). */
  ipPolicies?: readonly string[];
}

export interface RunningServer {
  /** e.g. `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  apiKeys: string[];
  /** Live: changes apply to the next request. */
  knobs: ServerKnobs;
  /** Requests received, by HTTP method (tests count writes at the server). */
  readonly requests: Readonly<Record<string, number>>;
  /** Responses sent, by status code (tests count refusals at the server). */
  readonly statuses: Readonly<Record<number, number>>;
  /**
   * Issues an API key belonging to the service user `serviceUser` (`bot_`, existing) of the
   * account of `accountKey` (one of `apiKeys`), as the service issues a service user its keys:
   * a second actor on one account (what it writes names it as `last_updated_by`). Kept in
   * memory only, like the accounts' keys; refused once the service user is gone or inactive.
   */
  serviceUserKey(accountKey: string, serviceUser: string): string;
  close(): Promise<void>;
}

/** A fresh API key: `esk_` and 32 base62 characters (190 random bits). */
export function generateApiKey(): string {
  let n = 0n;
  for (const byte of randomBytes(24)) n = (n << 8n) | BigInt(byte);
  // Always 32 characters: a number below 62^31 (about 0.6% of draws) has a leading zero.
  return `esk_${encodeBase62(n).padStart(32, '0').slice(-32)}`;
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const logger = (options.logger ?? silentLogger()).child({ module: 'server' });
  const apiKeys = [...options.apiKeys];
  if (apiKeys.length === 0) throw new ConfigError('the server needs at least one API key');
  const knobs: ServerKnobs = {
    rateLimit: options.rateLimit,
    latencyMs: options.latencyMs,
    faultRate: options.faultRate,
    resetRate: options.resetRate,
    edgeAccess: options.edgeAccess,
    requireReservedDomains: options.requireReservedDomains,
    dns: options.dns,
    domainPlan: options.domainPlan,
  };
  const { store, ids, journal, sealer } = await openState(options, apiKeys, logger);
  // Built before the first request, so that no client's first policy waits for it.
  celCheckingEnvironment();
  const http: Server = createHttpServer({ keepAliveTimeout: 30_000 });
  const url = await listen(http, options, journal);
  const app = createServer({
    store,
    apiKeys,
    baseUrl: (options.publicUrl ?? url).replace(/\/+$/, ''),
    knobs,
    logger,
    ids,
    sealer,
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  const { requests, statuses } = countTraffic(http);
  http.on('request', app.handle);
  http.on('clientError', app.clientError);
  logger.info({ url, persistent: journal !== undefined }, 'edge API server listening');
  const serviceUserKey = (accountKey: string, serviceUser: string): string => {
    if (!apiKeys.includes(accountKey)) throw new ConfigError('no account has that API key');
    const accountId = accountIdForKey(accountKey);
    if (store.account(accountId).bots.get(serviceUser) === undefined) {
      throw new ConfigError(`no service user ${serviceUser} in that account`);
    }
    const key = generateApiKey();
    app.addServiceUserKey(key, accountId, serviceUser);
    return key;
  };
  return {
    url,
    apiKeys,
    knobs,
    requests,
    statuses,
    serviceUserKey,
    close: closer(http, journal, logger),
  };
}

type Journal = Awaited<ReturnType<typeof openJournal>>;

/** The store, loaded from the journal when persistent, with the agent endpoints seeded. */
async function openState(
  options: StartServerOptions,
  apiKeys: readonly string[],
  logger: Logger,
): Promise<{
  store: Store;
  ids: ReturnType<typeof createIdGenerator>;
  journal: Journal | undefined;
  sealer: SecretSealer;
}> {
  const store = new Store();
  const ids = createIdGenerator();
  const journal =
    options.dataDir === undefined
      ? undefined
      : await openJournal({
          dir: options.dataDir,
          store,
          logger,
          ...(options.compactBytes === undefined ? {} : { compactBytes: options.compactBytes }),
          ...(options.salvage === undefined ? {} : { salvage: options.salvage }),
          ...(options.onSalvage === undefined ? {} : { onSalvage: options.onSalvage }),
          ...(options.journalIo === undefined ? {} : { io: options.journalIo }),
          ...(options.snapshotIo === undefined ? {} : { snapshotIo: options.snapshotIo }),
        });
  // IDs minted from now on must sort after every loaded one, even if the clock went back.
  for (const id of store.ids()) ids.observe(id);
  let sealer: SecretSealer;
  try {
    // Secret values are sealed under the data directory's key, so they outlive a restart.
    sealer = options.dataDir === undefined ? new SecretSealer() : await openSealer(options.dataDir);
    seedAgentEndpoints(store, apiKeys, options.agentEndpoints ?? [], { ids, now: Date.now });
    seedIpPolicies(store, apiKeys, options.ipPolicies ?? [], Date.now);
  } catch (err) {
    await journal?.close();
    throw err;
  }
  return { store, ids, journal, sealer };
}

/** Listens (closing the journal when it cannot) and says the URL it listens on. */
async function listen(
  http: Server,
  options: StartServerOptions,
  journal: Journal | undefined,
): Promise<string> {
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port ?? 8787, host, () => {
        http.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await journal?.close();
    const reason =
      (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'address in use' : errorMessage(err);
    throw new ConfigError(`cannot listen on ${host}:${options.port ?? 8787}: ${reason}`, {
      cause: err,
    });
  }
  const address = http.address() as AddressInfo;
  const hostInUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${hostInUrl}:${address.port}`;
}

/** Requests by method and responses by status, counted as they come and go. */
function countTraffic(http: Server): {
  requests: Record<string, number>;
  statuses: Record<number, number>;
} {
  const requests: Record<string, number> = {};
  const statuses: Record<number, number> = {};
  http.on('request', (req, res) => {
    const method = req.method ?? '?';
    requests[method] = (requests[method] ?? 0) + 1;
    res.once('finish', () => {
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    });
  });
  return { requests, statuses };
}

/** The server's close: once, whoever calls it how often. */
function closer(http: Server, journal: Journal | undefined, logger: Logger): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      // In-flight requests get a moment to finish (their writes are durable on reply).
      const force = setTimeout(() => http.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(force);
      await journal?.close();
      logger.info('edge API server closed');
    })();
    return closing;
  };
}
