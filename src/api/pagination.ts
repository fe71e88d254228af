/**
 * Paginated lists: follow `next_page_uri` to the end, on the configured base URL only, and
 * never return part of a list.
 */
import type { z } from 'zod';
import { ApiResponseError, EdgesyncError } from '../errors.js';
import { LIMITS } from '../hosted/edge-api.js';
import type { Transport } from './transport.js';
import type { ListOptions, ListResult } from './types.js';

/** Follows `next_page_uri` to the end; never returns part of a list. */
export async function listAll<P extends { readonly next_page_uri: string | null }, T>(
  transport: Transport,
  route: string,
  schema: z.ZodType<P>,
  itemsOf: (page: P) => readonly T[],
  options: ListOptions = {},
  /** The list's path, when its template (`route`) has IDs to fill. */
  listPath: string = route,
): Promise<ListResult<T>> {
  const pageSize = options.pageSize ?? LIMITS.pageLimitMax;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > LIMITS.pageLimitMax) {
    throw new EdgesyncError(
      'ES_INTERNAL',
      `page size must be an integer in 1..${LIMITS.pageLimitMax}`,
    );
  }
  const items: T[] = [];
  const seen = new Set<string>();
  let path: string | undefined = `${listPath}?limit=${pageSize}`;
  let calls = 0;
  while (path !== undefined) {
    seen.add(path);
    const page: P = await transport.send(
      { method: 'GET', route, path, signal: options.signal },
      schema,
    );
    calls += 1;
    const got = itemsOf(page);
    for (const item of got) items.push(item);
    // An empty page ends the list even if the server offers another one.
    if (page.next_page_uri === null || got.length === 0) break;
    const next = nextPagePath(transport.baseUrl, page.next_page_uri, listPath, path);
    if (seen.has(next)) {
      throw new ApiResponseError({
        method: 'GET',
        path,
        status: 200,
        problem: 'next_page_uri points back to a page already read',
      });
    }
    path = next;
  }
  return { items, calls };
}

/**
 * The next page's path relative to the configured base URL. The link is followed on the
 * configured base, never on the origin it names: a server behind a reverse proxy or gateway
 * knows its own URL, not ours, and the API key must never go to another origin. The link's
 * path must end with the same list endpoint (any prefix the server or a proxy adds is
 * ignored); only its query (`before_id`, `limit`) is taken.
 */
function nextPagePath(
  baseUrl: string,
  nextPageUri: string,
  route: string,
  currentPath: string,
): string {
  let url: URL | undefined;
  try {
    url = new URL(nextPageUri, `${baseUrl}/`);
  } catch {
    url = undefined;
  }
  const pathname = url?.pathname.replace(/\/+$/, '');
  if (url === undefined || pathname === undefined || !pathname.endsWith(route)) {
    throw new ApiResponseError({
      method: 'GET',
      path: currentPath,
      status: 200,
      problem: `next_page_uri is not a page of ${route}`,
    });
  }
  return `${route}${url.search}`;
}
