/**
 * Observe: the live account as one snapshot. One paginated list per kind (TLS edges, HTTPS
 * edges with their routes and modules embedded, bot users, endpoints), run concurrently; no
 * per-resource GET. All or nothing: the first failure aborts the other listings and is thrown,
 * because a partial snapshot diffed against the manifests would look like deletions.
 *
 * One refusal is not a failure: an account without access to edges (the edge lists answer
 * 403, `ERR_SVC_7302` from the local server) has no edges at all, so its edges are read as
 * none and the snapshot says they are unavailable. Its cloud endpoints and bot users are
 * managed as on any account; a directory that declares edges is refused by the engine
 * (`assertEdgesAvailable`), never planned against the empty lists.
 */

import { accountStateOf } from '../errors.js';
import { throwIfAborted } from '../retry.js';
import type { BotUser, CloudEndpoint, HttpsEdge, TlsEdge } from './schemas.js';
import type { ApiClient, ListResult } from './types.js';

export interface LiveSnapshot {
  readonly tlsEdges: readonly TlsEdge[];
  readonly httpsEdges: readonly HttpsEdge[];
  readonly botUsers: readonly BotUser[];
  /**
   * Every endpoint the list returns that holds a URL: the cloud ones, and those of other types
   * (agent, edge), which the planner ignores but for the URLs they hold.
   */
  readonly cloudEndpoints: readonly CloudEndpoint[];
  /**
   * The account has no access to edges: the edge lists were refused, so `tlsEdges` and
   * `httpsEdges` are empty because there cannot be any, not because none were listed.
   */
  readonly edgesUnavailable?: boolean | undefined;
  /**
   * List calls per kind: `max(1, ceil(n / 100))` against a server that ends a full last page;
   * a refused edge list counts its one call.
   */
  readonly calls: {
    readonly tls: number;
    readonly https: number;
    readonly botUsers: number;
    readonly endpoints: number;
  };
}

/** No list call made (a snapshot read by ID, or kept from an earlier cycle). */
export const NO_CALLS: LiveSnapshot['calls'] = { tls: 0, https: 0, botUsers: 0, endpoints: 0 };

/** The list calls a snapshot cost, all kinds together. */
export function callCount(calls: LiveSnapshot['calls']): number {
  return calls.tls + calls.https + calls.botUsers + calls.endpoints;
}

export type ObserveClient = Pick<
  ApiClient,
  'listTlsEdges' | 'listHttpsEdges' | 'listBotUsers' | 'listEndpoints'
>;

export async function observe(
  client: ObserveClient,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<LiveSnapshot> {
  throwIfAborted(options.signal);
  // One controller for the four listings: the caller's abort, or the first failure, stops all.
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const signal = controller.signal;
  const fail = (err: unknown): never => {
    controller.abort(err);
    throw err;
  };
  try {
    const [tls, https, bots, endpoints] = await Promise.all([
      client.listTlsEdges({ signal }).catch(edgesRefused).catch(fail),
      client.listHttpsEdges({ signal }).catch(edgesRefused).catch(fail),
      client.listBotUsers({ signal }).catch(fail),
      client.listEndpoints({ signal }).catch(fail),
    ]);
    const unavailable = 'unavailable' in tls || 'unavailable' in https;
    return {
      ...(unavailable ? { edgesUnavailable: true } : {}),
      tlsEdges: tls.items,
      httpsEdges: https.items,
      botUsers: bots.items,
      cloudEndpoints: endpoints.items,
      calls: {
        tls: tls.calls,
        https: https.calls,
        botUsers: bots.calls,
        endpoints: endpoints.calls,
      },
    };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * An edge list refused because the account has no access to edges: no edges, one call spent.
 * Any other failure is rethrown.
 */
function edgesRefused(err: unknown): ListResult<never> & { readonly unavailable: true } {
  if (accountStateOf(err) !== 'no-access') throw err;
  return { items: [], calls: 1, unavailable: true };
}
