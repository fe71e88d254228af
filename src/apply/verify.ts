/**
 * Verify what was touched: after an apply, read back by ID only the edges, bot users and cloud
 * endpoints the plan wrote (an edge's GET carries its routes and modules; both records of an
 * endpoint's replacement are read), and lay them over the snapshot the
 * plan was made from. Planning the same desired set on that view says whether the writes took
 * effect, for one GET per touched resource instead of listing the whole account again (at
 * 10,000 edges, 202 list calls: most of a 120-per-minute budget).
 *
 * What it cannot see, by construction: changes made meanwhile to resources this apply did not
 * touch. Those are drift, and the next full observation (the daemon's periodic resync, or the
 * next `plan`) finds them.
 */
import type { ApiClient, LiveSnapshot } from '../api/index.js';
import { isNotFound, NO_CALLS, type ObserveClient, observe } from '../api/index.js';
import type { BotUser, CloudEndpoint, HttpsEdge, TlsEdge } from '../api/schemas.js';
import { kindNamed } from '../kinds/index.js';
import type { Plan } from '../plan/model.js';
import { outlineOf, rootChange } from '../plan/outline.js';
import { runPool } from '../pool.js';
import type { ExecuteResult } from './executor.js';
import { replaced } from './live-index.js';

export type VerifyClient = Pick<
  ApiClient,
  'getTlsEdge' | 'getHttpsEdge' | 'getBotUser' | 'getEndpoint'
>;

interface Touched {
  readonly tls: Set<string>;
  readonly https: Set<string>;
  readonly bots: Set<string>;
  readonly endpoints: Set<string>;
}

/** How many roots `touched` names, all kinds together. */
export function touchedCount(touched: Touched): number {
  return touched.tls.size + touched.https.size + touched.bots.size + touched.endpoints.size;
}

/** The live IDs of the roots the plan had operations for (created ones from the result). */
export function touchedRoots(plan: Plan, result: Pick<ExecuteResult, 'created'>): Touched {
  const touched: Touched = {
    tls: new Set(),
    https: new Set(),
    bots: new Set(),
    endpoints: new Set(),
  };
  // The changes that write (a handful, in a 50,000-resource plan after one save), and their roots.
  const { writing } = outlineOf(plan);
  const roots = new Map<string, Plan['changes'][number] | undefined>();
  for (const change of writing) {
    if (!roots.has(change.root)) roots.set(change.root, rootChange(plan, change.root));
    const root = roots.get(change.root);
    if (root === undefined) continue;
    const id = root.id ?? result.created[root.address];
    if (id === undefined) continue;
    if (root.kind === 'tls_edge') touched.tls.add(id);
    else if (root.kind === 'https_edge') touched.https.add(id);
    else if (root.kind === 'bot_user') touched.bots.add(id);
    else if (root.kind === 'cloud_endpoint') {
      touched.endpoints.add(id);
      // A replacement deletes the old record and creates a new one: both are read back.
      const created = result.created[root.address];
      if (created !== undefined) touched.endpoints.add(created);
    }
  }
  return touched;
}

async function fetchAll<T extends { id: string }>(
  ids: ReadonlySet<string>,
  get: (id: string) => Promise<T>,
  concurrency: number,
): Promise<Map<string, T | undefined>> {
  const out = new Map<string, T | undefined>();
  await runPool([...ids], concurrency, async (id) => {
    try {
      out.set(id, await get(id));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      out.set(id, undefined); // gone: deleted by this apply (or by someone else)
    }
  });
  return out;
}

function overlay<T extends { id: string }>(
  before: readonly T[],
  fresh: ReadonlyMap<string, T | undefined>,
): readonly T[] {
  // A list nothing was read from is the same list (a snapshot's lists are never changed).
  if (fresh.size === 0) return before;
  // Each read record in the place of the one it replaces (./live-index.ts), when all are there.
  const inPlace = replaced(before, fresh);
  if (inPlace !== undefined) return inPlace;
  const out: T[] = [];
  // Only the read IDs are remembered: a 50,000-record list after one edit reads one.
  const seen = new Set<string>();
  for (const item of before) {
    if (!fresh.has(item.id)) out.push(item);
    else {
      seen.add(item.id);
      const now = fresh.get(item.id);
      if (now !== undefined) out.push(now);
    }
  }
  for (const [id, item] of fresh) if (!seen.has(id) && item !== undefined) out.push(item);
  return out;
}

/**
 * The snapshot after the apply as far as it touched the account: `live` with every touched
 * edge and bot user read again by ID (gone ones removed, created ones added).
 */
export async function verifyTouched(
  client: VerifyClient,
  plan: Plan,
  live: LiveSnapshot,
  result: Pick<ExecuteResult, 'created'>,
  options: { readonly signal?: AbortSignal | undefined; readonly concurrency?: number } = {},
): Promise<LiveSnapshot> {
  const touched = touchedRoots(plan, result);
  const o = { signal: options.signal };
  const n = options.concurrency ?? 4;
  const [tls, https, bots, endpoints] = await Promise.all([
    fetchAll<TlsEdge>(touched.tls, (id) => client.getTlsEdge(id, o), n),
    fetchAll<HttpsEdge>(touched.https, (id) => client.getHttpsEdge(id, o), n),
    fetchAll<BotUser>(touched.bots, (id) => client.getBotUser(id, o), n),
    fetchAll<CloudEndpoint>(touched.endpoints, (id) => client.getEndpoint(id, o), n),
  ]);
  const view = {
    tlsEdges: overlay(live.tlsEdges, tls),
    httpsEdges: overlay(live.httpsEdges, https),
    botUsers: overlay(live.botUsers, bots),
    cloudEndpoints: overlay(live.cloudEndpoints, endpoints),
  };
  return {
    ...(live.edgesUnavailable === true ? { edgesUnavailable: true } : {}),
    ...view,
    // The other kinds as listed (`observeAfterApply` lists again when the plan wrote one).
    ...(live.resources === undefined
      ? {}
      : {
          resources: {
            ...live.resources,
            tls_edge: view.tlsEdges,
            https_edge: view.httpsEdges,
            bot_user: view.botUsers,
            cloud_endpoint: view.cloudEndpoints,
          },
        }),
    calls: NO_CALLS,
  };
}

/** Whether the plan writes a root of a kind `verifyTouched` does not read back by ID. */
function writesOtherKinds(plan: Plan): boolean {
  return outlineOf(plan).writing.some((c) => !BY_ID_KINDS.has(c.kind));
}

/** The kinds read back by ID (and routes, read with their edge). */
const BY_ID_KINDS: ReadonlySet<string> = new Set([
  'tls_edge',
  'https_edge',
  'route',
  'bot_user',
  'cloud_endpoint',
]);

/** List calls one list of n records takes (a full last page ends a list: 100 -> 2). */
export function pagesOf(n: number): number {
  return Math.floor(n / 100) + 1;
}

/**
 * The post-apply view at the lower cost: the touched roots by ID (`verifyTouched`) when there
 * are fewer of them than the list calls of a full observation after the apply, a full listing
 * otherwise (a cold apply of 1,000 edges: 12 list calls instead of 1,000 GETs).
 *
 * Always a full listing after a create whose outcome was unknown: its lost attempt may have
 * landed late, as a record no ID read finds. Converged means no duplicates, so the check must
 * see every namesake (the re-plan then deletes an owned duplicate edge like any other).
 */
export async function observeAfterApply(
  client: VerifyClient & ObserveClient,
  plan: Plan,
  live: LiveSnapshot,
  result: Pick<ExecuteResult, 'created' | 'uncertainCreates'>,
  options: { readonly signal?: AbortSignal | undefined; readonly concurrency?: number } = {},
): Promise<LiveSnapshot> {
  // A write to any other kind (an IP policy, its rules): its listing is read again.
  if ((result.uncertainCreates?.length ?? 0) > 0 || writesOtherKinds(plan))
    return observe(client, { signal: options.signal });
  // A kind planned generically has no read by ID here: a write to one is seen by listing.
  const generic = (c: Plan['changes'][number]) =>
    c.kind !== 'route' && kindNamed(c.kind).setKey === undefined;
  if (outlineOf(plan).writing.some(generic)) {
    return observe(client, { signal: options.signal });
  }
  const touched = touchedRoots(plan, result);
  const reads = touchedCount(touched);
  const listing =
    pagesOf(live.tlsEdges.length + touched.tls.size) +
    pagesOf(live.httpsEdges.length + touched.https.size) +
    pagesOf(live.botUsers.length + touched.bots.size) +
    pagesOf(live.cloudEndpoints.length + touched.endpoints.size);
  if (reads <= listing) return verifyTouched(client, plan, live, result, options);
  return observe(client, { signal: options.signal });
}

/**
 * The bot users this run provably created itself after a lost answer (its own 201 answers),
 * for the re-plan's `ownBotUsers`: the only namesakes it may delete as duplicates.
 */
export function ownBotUsersOf(result: Pick<ExecuteResult, 'uncertainCreates'>): Set<string> {
  const ids = new Set<string>();
  for (const u of result.uncertainCreates ?? []) {
    if (u.kind === 'bot_users' && u.answered) ids.add(u.id);
  }
  return ids;
}
