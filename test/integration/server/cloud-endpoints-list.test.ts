/**
 * Listing cloud endpoints over real HTTP: newest first, `before_id` and `limit` pages with an
 * absolute `next_page_uri`, CEL filters (evaluated per record; one that does not parse is a 400
 * `invalid_cel_expression`, and the next page keeps the filter); then the guarantees edges have:
 * persistence across a restart, the rate-limit and fault knobs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE } from '../../../src/hosted/edge-api.js';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

const POLICY = '{"on_http_request":[{"actions":[{"type":"deny"}]}]}';
const N = 7;

let server: RunningServer & { apiKey: string };
let call: Call;
const ids: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ agentEndpoints: [{ url: 'tls://agent.example.com' }] });
  call = clientFor(server, server.apiKey);
  for (let i = 0; i < N; i++) {
    const r = await call('POST', '/endpoints', {
      url: `https://e${i}.example.com`,
      traffic_policy: POLICY,
      ...(i % 2 === 0 ? { description: `even ${i}` } : {}),
      pooling_enabled: i % 3 === 0,
    });
    expect(r.status).toBe(201);
    ids.push(r.json.id as string);
  }
});
afterAll(async () => {
  await server.close();
});

async function all(path: string): Promise<{ ids: string[]; pages: number }> {
  const out: string[] = [];
  let next: string | null = path;
  let pages = 0;
  while (next !== null) {
    const r = await call('GET', next.replace(server.url, ''));
    expect(r.status, r.text).toBe(200);
    out.push(...r.json.endpoints.map((e: { id: string }) => e.id));
    next = r.json.next_page_uri;
    pages++;
  }
  return { ids: out, pages };
}

describe('pagination', () => {
  it('lists newest first, agent and cloud endpoints interleaved by creation', async () => {
    const r = await call('GET', '/endpoints');
    expect(r.json.uri).toBe(`${server.url}/endpoints`);
    expect(r.json.next_page_uri).toBeNull();
    const listed = r.json.endpoints.map((e: { id: string }) => e.id);
    expect(listed.slice(0, N)).toEqual([...ids].reverse());
    expect(r.json.endpoints[N].type).toBe('agent');
  });

  it.each([1, 2, 3, 8, 100])('limit %i pages through every endpoint once', async (limit) => {
    const first = await call('GET', `/endpoints?limit=${limit}`);
    if (limit <= N) {
      expect(first.json.next_page_uri).toBe(
        `${server.url}/endpoints?before_id=${first.json.endpoints[limit - 1].id}&limit=${limit}`,
      );
    }
    const { ids: listed, pages } = await all(`/endpoints?limit=${limit}`);
    expect(listed).toHaveLength(N + 1);
    expect(new Set(listed).size).toBe(N + 1);
    expect(pages).toBe(Math.ceil((N + 1) / limit));
  });

  it('before_id returns the older ones', async () => {
    const r = await call('GET', `/endpoints?before_id=${ids[3]}`);
    expect(r.json.endpoints.map((e: { id: string }) => e.id).slice(0, 3)).toEqual([
      ids[2],
      ids[1],
      ids[0],
    ]);
  });

  it.each(['0', '101', 'x'])('limit=%s is a 400', async (limit) => {
    const r = await call('GET', `/endpoints?limit=${limit}`);
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(ERROR_CODE.invalidValue);
  });
});

describe('filter (CEL, evaluated per record)', () => {
  it.each([
    ['obj.type == "cloud"', N],
    ['obj.type == "agent"', 1],
    ['obj.pooling_enabled', 3],
    ['has(obj.description) && obj.description.startsWith("even")', 4],
    ['obj.description.startsWith("even")', 4],
    ['obj.url in ["https://e1.example.com", "https://e2.example.com"]', 2],
    ['obj.port == 443 && obj.scheme == "tls"', 1],
    ['obj.url.matches("^https://e[0-2]\\\\.")', 3],
    ['false', 0],
  ])('%s matches %i', async (filter, count) => {
    const { ids: listed } = await all(`/endpoints?limit=2&filter=${encodeURIComponent(filter)}`);
    expect(listed).toHaveLength(count);
  });

  it('keeps the filter in next_page_uri and pages only over matches', async () => {
    const filter = 'obj.type == "cloud"';
    const r = await call('GET', `/endpoints?limit=3&filter=${encodeURIComponent(filter)}`);
    const next = new URL(r.json.next_page_uri);
    expect(next.searchParams.get('filter')).toBe(filter);
    expect(next.searchParams.get('limit')).toBe('3');
    const last = await call(
      'GET',
      `/endpoints?limit=1&before_id=${ids[1]}&filter=${encodeURIComponent(filter)}`,
    );
    expect(last.json.endpoints.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    // The agent endpoint is older still but does not match: no further page.
    expect(last.json.next_page_uri).toBeNull();
  });

  it.each(['obj.type ==', 'obj.type == "cloud" &&', '(', 'obj.type = "cloud"', 'obj.type'])(
    '%s is a 400 invalid_cel_expression',
    async (filter) => {
      const r = await call('GET', `/endpoints?filter=${encodeURIComponent(filter)}`);
      expect(r.status).toBe(400);
      expect(r.json.error_code).toBe(CODE.invalidCel);
    },
  );
});

describe('guarantees shared with edges', () => {
  it('the rate-limit knob counts endpoint requests (429 with Retry-After)', async () => {
    const limited = await startTestServer({ rateLimit: { limit: 2, windowMs: 60_000 } });
    try {
      const c = clientFor(limited, limited.apiKey);
      expect((await c('GET', '/endpoints')).status).toBe(200);
      expect(
        (await c('POST', '/endpoints', { url: 'https://a.example.com', traffic_policy: POLICY }))
          .status,
      ).toBe(201);
      const r = await c('GET', '/endpoints');
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).not.toBeNull();
    } finally {
      await limited.close();
    }
  });

  it('an injected fault performs nothing', async () => {
    server.knobs.faultRate = 1;
    try {
      const r = await call('POST', '/endpoints', {
        url: 'https://fault.example.com',
        traffic_policy: POLICY,
      });
      expect(r.status).toBe(503);
    } finally {
      server.knobs.faultRate = undefined;
    }
    const { ids: listed } = await all('/endpoints?filter=obj.host%20==%20%22fault.example.com%22');
    expect(listed).toEqual([]);
  });

  it('persists endpoints across a restart; agent endpoints are seeded again, never stored', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgesync-endpoints-'));
    const seeds = [{ url: 'https://agent.example.com' }];
    try {
      const first = await startTestServer({ dataDir: dir, agentEndpoints: seeds });
      const c1 = clientFor(first, first.apiKey);
      const a = await c1('POST', '/endpoints', {
        url: 'https://p1.example.com',
        traffic_policy: POLICY,
        metadata: 'm',
      });
      const b = await c1('POST', '/endpoints', {
        url: 'https://p2.example.com',
        traffic_policy: POLICY,
      });
      await c1('PATCH', `/endpoints/${a.json.id}`, { description: 'after' });
      await c1('DELETE', `/endpoints/${b.json.id}`);
      const before = await c1('GET', `/endpoints/${a.json.id}`);
      await first.close();
      const second = await startTestServer({
        dataDir: dir,
        apiKeys: [first.apiKey],
        agentEndpoints: seeds,
        compactBytes: 1,
      });
      try {
        const c2 = clientFor(second, first.apiKey);
        const after = await c2('GET', `/endpoints/${a.json.id}`);
        expect(after.text.replaceAll(second.url, 'BASE')).toBe(
          before.text.replaceAll(first.url, 'BASE'),
        );
        expect((await c2('GET', `/endpoints/${b.json.id}`)).status).toBe(404);
        const types = (await c2('GET', '/endpoints')).json.endpoints.map(
          (e: { type: string }) => e.type,
        );
        expect(types.sort()).toEqual(['agent', 'cloud']);
        // A write that compacts the log into a snapshot: the agent endpoint stays out of it.
        await c2('PATCH', `/endpoints/${a.json.id}`, { metadata: 'n' });
      } finally {
        await second.close();
      }
      const third = await startTestServer({ dataDir: dir, apiKeys: [first.apiKey] });
      try {
        const listed = (await clientFor(third, first.apiKey)('GET', '/endpoints')).json.endpoints;
        expect(listed.map((e: { type: string; metadata: string }) => [e.type, e.metadata])).toEqual(
          [['cloud', 'n']],
        );
      } finally {
        await third.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
