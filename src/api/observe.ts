/**
 * Observe: the live account as one snapshot. One paginated list per kind (TLS edges, HTTPS
 * edges with their routes and modules embedded, bot users), run concurrently; no per-resource
 * GET. All or nothing: the first failure aborts the other listings and is thrown, because a
 * partial snapshot diffed against the manifests would look like deletions.
 */

import { throwIfAborted } from './retry.js';
import type { BotUser, HttpsEdge, TlsEdge } from './schemas.js';
import type { ApiClient } from './types.js';

export interface LiveSnapshot {
  readonly tlsEdges: readonly TlsEdge[];
  readonly httpsEdges: readonly HttpsEdge[];
  readonly botUsers: readonly BotUser[];
  /** List calls per kind: `max(1, ceil(n / 100))` against a server that ends a full last page. */
  readonly calls: { readonly tls: number; readonly https: number; readonly botUsers: number };
}

export type ObserveClient = Pick<ApiClient, 'listTlsEdges' | 'listHttpsEdges' | 'listBotUsers'>;

export async function observe(
  client: ObserveClient,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<LiveSnapshot> {
  throwIfAborted(options.signal);
  // One controller for the three listings: the caller's abort, or the first failure, stops all.
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const signal = controller.signal;
  const fail = (err: unknown): never => {
    controller.abort(err);
    throw err;
  };
  try {
    const [tls, https, bots] = await Promise.all([
      client.listTlsEdges({ signal }).catch(fail),
      client.listHttpsEdges({ signal }).catch(fail),
      client.listBotUsers({ signal }).catch(fail),
    ]);
    return {
      tlsEdges: tls.items,
      httpsEdges: https.items,
      botUsers: bots.items,
      calls: { tls: tls.calls, https: https.calls, botUsers: bots.calls },
    };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}
