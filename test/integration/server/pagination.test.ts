/**
 * Pagination as api-notes describes it: newest first, `limit` 1..100 (default 100), `before_id`
 * (also of a deleted item), absolute `next_page_uri` with `before_id=<last>&limit=<limit>` or
 * null when nothing remains, list `uri` without a query string.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;

beforeEach(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
});
afterEach(async () => {
  await server.close();
});

async function createBots(n: number): Promise<string[]> {
  const ids: string[] = [];
  // Sequential creates: the expected order is the creation order.
  for (let i = 0; i < n; i++)
    ids.push((await call('POST', '/bot_users', { name: `b${i}` })).json.id);
  return ids;
}

const relative = (uri: string) => uri.replace(server.url, '');

describe.each([
  ['/edges/tls', 'tls_edges'],
  ['/edges/https', 'https_edges'],
  ['/bot_users', 'bot_users'],
])('%s', (path, key) => {
  it('empty list', async () => {
    const r = await call('GET', path);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ [key]: [], uri: `${server.url}${path}`, next_page_uri: null });
    expect(Object.keys(r.json)).toEqual([key, 'uri', 'next_page_uri']);
  });
});

describe('bot user pages', () => {
  it('an exact multiple of the limit: the last full page has no next page', async () => {
    const ids = await createBots(200);
    const first = await call('GET', '/bot_users');
    expect(first.json.bot_users).toHaveLength(100);
    expect(first.json.bot_users.map((b: { id: string }) => b.id)).toEqual(ids.slice(100).reverse());
    const last = ids[100] as string;
    expect(first.json.next_page_uri).toBe(`${server.url}/bot_users?before_id=${last}&limit=100`);
    const second = await call('GET', relative(first.json.next_page_uri));
    expect(second.json.bot_users.map((b: { id: string }) => b.id)).toEqual(
      ids.slice(0, 100).reverse(),
    );
    expect(second.json.next_page_uri).toBeNull();
    expect(second.json.uri).toBe(`${server.url}/bot_users`);
  });

  it('walks every item newest first with a small limit, ending with null', async () => {
    const ids = await createBots(23);
    const seen: string[] = [];
    let next: string | null = '/bot_users?limit=5';
    let pages = 0;
    while (next !== null) {
      const r = await call('GET', next);
      expect(r.status).toBe(200);
      expect(r.json.bot_users.length).toBeLessThanOrEqual(5);
      seen.push(...r.json.bot_users.map((b: { id: string }) => b.id));
      next = r.json.next_page_uri === null ? null : relative(r.json.next_page_uri);
      if (next !== null)
        expect(next).toMatch(/^\/bot_users\?before_id=bot_[0-9A-Za-z]{27}&limit=5$/);
      pages++;
    }
    expect(pages).toBe(5);
    expect(seen).toEqual([...ids].reverse());
  });

  it('before_id of a deleted item still works', async () => {
    const ids = await createBots(10);
    const gone = ids[6] as string;
    expect((await call('DELETE', `/bot_users/${gone}`)).status).toBe(204);
    const r = await call('GET', `/bot_users?before_id=${gone}&limit=3`);
    expect(r.json.bot_users.map((b: { id: string }) => b.id)).toEqual([ids[5], ids[4], ids[3]]);
    expect(r.json.next_page_uri).toBe(`${server.url}/bot_users?before_id=${ids[3]}&limit=3`);
    // The page ending exactly at the oldest item has no next page.
    const tail = await call('GET', `/bot_users?before_id=${ids[3]}&limit=3`);
    expect(tail.json.bot_users.map((b: { id: string }) => b.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(tail.json.next_page_uri).toBeNull();
    // before the oldest: empty.
    const none = await call('GET', `/bot_users?before_id=${ids[0]}`);
    expect(none.json).toEqual({
      bot_users: [],
      uri: `${server.url}/bot_users`,
      next_page_uri: null,
    });
  });

  it('limit 1 and 100 are accepted; the default is 100', async () => {
    await createBots(101);
    expect((await call('GET', '/bot_users?limit=1')).json.bot_users).toHaveLength(1);
    expect((await call('GET', '/bot_users?limit=100')).json.bot_users).toHaveLength(100);
    const d = await call('GET', '/bot_users');
    expect(d.json.bot_users).toHaveLength(100);
    expect(d.json.next_page_uri).toMatch(/limit=100$/);
  });
});

describe('HTTPS edge pages embed routes', () => {
  it('lists carry each edge with its routes in creation order', async () => {
    const edges: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = (await call('POST', '/edges/https', {})).json.id;
      for (const match of ['/z', '/a', '/m']) {
        await call('POST', `/edges/https/${id}/routes`, { match_type: 'exact_path', match });
      }
      edges.push(id);
    }
    const r = await call('GET', '/edges/https?limit=2');
    expect(r.json.https_edges.map((e: { id: string }) => e.id)).toEqual([edges[2], edges[1]]);
    for (const e of r.json.https_edges) {
      expect(e.routes.map((x: { match: string }) => x.match)).toEqual(['/z', '/a', '/m']);
    }
    const next = await call('GET', relative(r.json.next_page_uri));
    expect(next.json.https_edges.map((e: { id: string }) => e.id)).toEqual([edges[0]]);
    expect(next.json.next_page_uri).toBeNull();
  });
});

it('next_page_uri uses the public URL when one is configured', async () => {
  const pub = await startTestServer({ publicUrl: 'https://api.example.test/v2/' });
  try {
    const c = clientFor(pub, pub.apiKey);
    for (let i = 0; i < 3; i++) await c('POST', '/edges/tls', {});
    const r = await c('GET', '/edges/tls?limit=2');
    expect(r.json.uri).toBe('https://api.example.test/v2/edges/tls');
    expect(r.json.next_page_uri).toMatch(
      /^https:\/\/api\.example\.test\/v2\/edges\/tls\?before_id=edgtls_\w{27}&limit=2$/,
    );
    expect(r.json.tls_edges[0].uri).toMatch(
      /^https:\/\/api\.example\.test\/v2\/edges\/tls\/edgtls_/,
    );
  } finally {
    await pub.close();
  }
});
