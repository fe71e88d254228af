/**
 * Observe: the live account as one snapshot. One paginated list per registered kind
 * (src/kinds/: TLS edges, HTTPS edges with their routes and modules embedded, bot users,
 * endpoints, and every kind added since, and each child collection listed account-wide such as
 * IP policy rules), run concurrently; no per-resource GET. All or
 * nothing: the first failure aborts the other listings and is thrown, because a partial snapshot diffed against the manifests would look like deletions.
 *
 * One refusal is not a failure: an account without access to edges (the edge lists answer
 * 403, `ERR_SVC_7302` from the local server) has no edges at all, so its edges are read as
 * none and the snapshot says they are unavailable. Its cloud endpoints and bot users are
 * managed as on any account; a directory that declares edges is refused by the engine
 * (`assertEdgesAvailable`), never planned against the empty lists.
 */

import { accountStateOf, EdgesyncError } from '../errors.js';
import {
  CHILD_COLLECTIONS,
  KINDS,
  type KindApi,
  type KindDefinition,
  type LiveRecord,
} from '../kinds/index.js';
import { throwIfAborted } from '../retry.js';
import type { BotUser, CloudEndpoint, HttpsEdge, TlsEdge } from './schemas.js';
import type { ApiClient, ListOptions, ListResult } from './types.js';

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
   * Every registered kind's records by kind (`reserved_domain`), the four above included (the
   * same arrays): what the generic planner, import and status read. Absent in a snapshot built
   * by hand with the four lists only (read as none of the other kinds).
   */
  readonly resources?: Readonly<Record<string, readonly LiveRecord[]>> | undefined;
  /**
   * The account has no access to edges: the edge lists were refused, so `tlsEdges` and
   * `httpsEdges` are empty because there cannot be any, not because none were listed.
   */
  readonly edgesUnavailable?: boolean | undefined;
  /**
   * List calls per kind (`tls_edge`, `cloud_endpoint`...): `max(1, ceil(n / 100))` against a
   * server that ends a full last page; a refused list counts its one call.
   */
  readonly calls: Readonly<Record<string, number>>;
}

/** No list call made (a snapshot read by ID, or kept from an earlier cycle): 0 for every kind. */
export const NO_CALLS: LiveSnapshot['calls'] = Object.fromEntries(
  [...KINDS.map((k) => k.kind), ...CHILD_COLLECTIONS.map((c) => c.children.kind)].map((k) => [
    k,
    0,
  ]),
);

/** The list calls a snapshot cost, all kinds together. */
export function callCount(calls: LiveSnapshot['calls']): number {
  let n = 0;
  for (const c of Object.values(calls)) n += c;
  return n;
}

/** A client that can list every registered kind (the typed client is one). */
export type ObserveClient = Pick<ApiClient, Extract<keyof ApiClient, `list${string}`>>;

type Lister = (options?: ListOptions) => Promise<ListResult<LiveRecord>>;

/** The list method a kind's (or a child collection's) definition names, on `client`. */
function listerOf(
  client: ObserveClient,
  kind: { readonly kind: string; readonly api: KindApi },
): Lister {
  const method = (client as unknown as Readonly<Record<string, Lister | undefined>>)[kind.api.list];
  if (method === undefined) {
    throw new EdgesyncError('ES_INTERNAL', `the client has no ${kind.api.list} for ${kind.kind}`);
  }
  return method.bind(client);
}

/** Where the four kinds with their own planners keep their records in the snapshot. */
type SetKey = 'tlsEdges' | 'httpsEdges' | 'botUsers' | 'cloudEndpoints';

export async function observe(
  client: ObserveClient,
  options: {
    readonly signal?: AbortSignal | undefined;
    /** The kinds to list; default every registered kind. */
    readonly kinds?: readonly KindDefinition[] | undefined;
  } = {},
): Promise<LiveSnapshot> {
  throwIfAborted(options.signal);
  const kinds = options.kinds ?? KINDS;
  // One controller for every listing: the caller's abort, or the first failure, stops all.
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const signal = controller.signal;
  const fail = (err: unknown): never => {
    controller.abort(err);
    throw err;
  };
  // A child collection (IP rules) is listed once, account-wide, beside its parent kind.
  const listings: {
    readonly kind: string;
    readonly api: KindApi;
    readonly def?: KindDefinition;
  }[] = kinds.flatMap((def) => [
    { kind: def.kind, api: def.api, def },
    ...(def.children === undefined ? [] : [def.children]),
  ]);
  try {
    const listed = await Promise.all(
      listings.map((kind) => {
        const listing = listerOf(client, kind)({ signal });
        return (kind.def?.absentWithoutAccess === true ? listing.catch(refused) : listing).catch(
          fail,
        );
      }),
    );
    const resources: Record<string, readonly LiveRecord[]> = {};
    const calls: Record<string, number> = {};
    const sets: Partial<Record<SetKey, readonly LiveRecord[]>> = {};
    let unavailable = false;
    listings.forEach((kind, i) => {
      const result = listed[i] as ListResult<LiveRecord> & { readonly unavailable?: true };
      if (result.unavailable === true) unavailable = true;
      resources[kind.kind] = result.items;
      calls[kind.kind] = result.calls;
      if (kind.def?.setKey !== undefined) sets[kind.def.setKey] = result.items;
    });
    return {
      ...(unavailable ? { edgesUnavailable: true } : {}),
      tlsEdges: (sets.tlsEdges ?? []) as readonly TlsEdge[],
      httpsEdges: (sets.httpsEdges ?? []) as readonly HttpsEdge[],
      botUsers: (sets.botUsers ?? []) as readonly BotUser[],
      cloudEndpoints: (sets.cloudEndpoints ?? []) as readonly CloudEndpoint[],
      resources,
      calls,
    };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A list refused because the account has no access to the kind (edges on a sunset account):
 * none, one call spent. Any other failure is rethrown.
 */
function refused(err: unknown): ListResult<never> & { readonly unavailable: true } {
  if (accountStateOf(err) !== 'no-access') throw err;
  return { items: [], calls: 1, unavailable: true };
}
