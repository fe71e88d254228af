/**
 * Observe: the live account as one snapshot. One paginated list per kind (TLS edges, HTTPS
 * edges with their routes and modules embedded, bot users, endpoints), run concurrently; no
 * per-resource GET. All or nothing: the first failure aborts the other listings and is thrown,
 * because a partial snapshot diffed against the manifests would look like deletions.
 */

import type { ApiClient } from './client.js';
import { throwIfAborted } from './retry.js';
import type { BotUser, CloudEndpoint, HttpsEdge, TlsEdge } from './schemas.js';

export interface LiveSnapshot {
  readonly tlsEdges: readonly TlsEdge[];
  readonly httpsEdges: readonly HttpsEdge[];
  readonly botUsers: readonly BotUser[];
  /** Every endpoint the list returns, agent ones included (the planner ignores those). */
  readonly cloudEndpoints: readonly CloudEndpoint[];
  /** List calls per kind: `max(1, ceil(n / 100))` against a server that ends a full last page. */
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
      client.listTlsEdges({ signal }).catch(fail),
      client.listHttpsEdges({ signal }).catch(fail),
      client.listBotUsers({ signal }).catch(fail),
      client.listEndpoints({ signal }).catch(fail),
    ]);
    return {
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
