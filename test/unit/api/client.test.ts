import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit.js';
import type { ApiClientOptions, ResponseInfo } from '../../../src/api/types.js';
import {
  AbortedError,
  ApiError,
  ApiResponseError,
  ConfigError,
  EdgesyncError,
  FencedWriteError,
  isNotFound,
  isOutcomeUnknown,
  NetworkError,
} from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { type Scripted, scriptedServer } from '../../helpers/scripted-server.js';
import { botUser, httpsEdge, ORIGIN, route, tlsEdge } from './records.js';

const KEY = 'sk_test_DO_NOT_LEAK_42';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A client with its production exchange (undici) against a scripted server on 127.0.0.1, with
 * time injected. `baseUrl` given as a path (`/edge-api`) is put under the server's origin.
 */
async function setup(options: Partial<ApiClientOptions> = {}) {
  const pool: Scripted = await scriptedServer();
  cleanups.push(() => pool.close());
  const sleeps: number[] = [];
  const responses: ResponseInfo[] = [];
  let t = 1_700_000_000_000;
  const { baseUrl = '', ...rest } = options;
  const client = createApiClient({
    apiKey: KEY,
    retry: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 60_000 },
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
    now: () => t,
    random: () => 0.5,
    onResponse: (info) => responses.push(info),
    ...rest,
    baseUrl: baseUrl.startsWith('http') ? baseUrl : pool.origin + baseUrl,
  });
  cleanups.push(() => client.close());
  return { pool, client, sleeps, responses };
}

const errBody = (status: number, code?: string) =>
  JSON.stringify({
    ...(code ? { error_code: code } : {}),
    status_code: status,
    msg: `failed with ${status}`,
    details: { operation_id: 'op_body' },
  });

describe('requests', () => {
  it('sends the key, the version header and JSON bodies', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({
        path: '/edges/tls',
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'svc-version': '2',
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ hostports: ['a.example.test:443'] }),
      })
      .reply(201, tlsEdge('edgtls_1'), JSON_HEADERS);
    const edge = await client.createTlsEdge({ hostports: ['a.example.test:443'] });
    expect(edge.id).toBe('edgtls_1');
  });

  it('sends no content type without a body', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({
        path: '/edges/tls/edgtls_1',
        method: 'DELETE',
        headers: (h) => h['content-type'] === undefined && h['svc-version'] === '2',
      })
      .reply(204, '');
    await expect(client.deleteTlsEdge('edgtls_1')).resolves.toBeUndefined();
  });

  it.each([
    [
      'getTlsEdge',
      'GET',
      '/edges/tls/{id}',
      (c: C) => c.getTlsEdge('edgtls_1'),
      tlsEdge('edgtls_1'),
    ],
    [
      'getHttpsEdge',
      'GET',
      '/edges/https/{id}',
      (c: C) => c.getHttpsEdge('edghts_1'),
      httpsEdge('edghts_1'),
    ],
    [
      'updateRoute',
      'PATCH',
      '/edges/https/{edge_id}/routes/{id}',
      (c: C) => c.updateRoute('edghts_1', 'edghtsrt_1', { description: 'x' }),
      route('edghts_1', 'edghtsrt_1'),
    ],
    [
      'putModule (route)',
      'PUT',
      '/edges/https/{edge_id}/routes/{id}/compression',
      (c: C) =>
        c.putModule({ kind: 'route', edgeId: 'edghts_1', id: 'edghtsrt_1' }, 'compression', {}),
      { enabled: true },
    ],
    [
      'putModule (tls edge)',
      'PUT',
      '/edges/tls/{id}/backend',
      (c: C) =>
        c.putModule({ kind: 'tls_edge', id: 'edgtls_1' }, 'backend', { backend_id: 'bkdtg_1' }),
      { enabled: true, backend: { id: 'bkdtg_1', uri: `${ORIGIN}/backends/tunnel_group/bkdtg_1` } },
    ],
    [
      'updateBotUser',
      'PATCH',
      '/bot_users/{id}',
      (c: C) => c.updateBotUser('bot_1', { active: false }),
      botUser('bot_1'),
    ],
  ] as const)(
    '%s reports its templated route to onResponse',
    async (_n, method, template, call, reply) => {
      const { pool, client, responses } = await setup();
      pool.intercept({ path: () => true, method }).reply(200, reply, JSON_HEADERS);
      await call(client);
      expect(responses).toEqual([
        { method, route: template, status: 200, durationMs: 0, attempt: 1 },
      ]);
    },
  );

  it.each(['not a url', 'ftp://127.0.0.1/x', 'http://u:p@127.0.0.1'])(
    'refuses base URL %o with a ConfigError',
    (baseUrl) => {
      expect(() => createApiClient({ baseUrl, apiKey: KEY })).toThrow(ConfigError);
    },
  );

  it('encodes IDs into path segments', async () => {
    const { pool, client } = await setup();
    pool.intercept({ path: '/edges/tls/a%2F..%2Fb', method: 'GET' }).reply(404, errBody(404));
    await expect(client.getTlsEdge('a/../b')).rejects.toSatisfy(isNotFound);
  });

  it('refuses an empty ID and a module the owner does not have, sending nothing', async () => {
    const { client, responses } = await setup();
    await expect(client.getTlsEdge('')).rejects.toBeInstanceOf(EdgesyncError);
    await expect(
      client.deleteModule({ kind: 'https_edge', id: 'edghts_1' }, 'backend'),
    ).rejects.toThrow(/https_edge has no module "backend"/);
    expect(responses).toEqual([]);
  });
});

type C = ReturnType<typeof createApiClient>;

describe('retries', () => {
  it.each([
    ['GET', (c: C) => c.getTlsEdge('edgtls_1'), 200, tlsEdge('edgtls_1')],
    [
      'PATCH',
      (c: C) => c.updateTlsEdge('edgtls_1', { description: 'd' }),
      200,
      tlsEdge('edgtls_1'),
    ],
    [
      'PUT',
      (c: C) => c.putModule({ kind: 'tls_edge', id: 'edgtls_1' }, 'traffic_policy', { value: 'p' }),
      200,
      { enabled: true, value: 'p' },
    ],
    ['DELETE', (c: C) => c.deleteTlsEdge('edgtls_1'), 204, ''],
  ] as const)(
    '%s: 5xx retried with capped exponential backoff and full jitter',
    async (method, call, okStatus, okBody) => {
      const { pool, client, sleeps, responses } = await setup({
        retry: { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 350 },
      });
      for (const status of [500, 502, 503, 504, 503]) {
        pool.intercept({ path: () => true, method }).reply(status, errBody(status));
      }
      pool.intercept({ path: () => true, method }).reply(okStatus, okBody);
      await call(client);
      // random() = 0.5 of min(350, 100 * 2^k)
      expect(sleeps).toEqual([50, 100, 175, 175, 175]);
      expect(responses.map((r) => [r.attempt, r.status])).toEqual([
        [1, 500],
        [2, 502],
        [3, 503],
        [4, 504],
        [5, 503],
        [6, okStatus],
      ]);
    },
  );

  it('uses the injected random for every delay', async () => {
    const draws = [0.9, 0.1, 0.75];
    const { pool, client, sleeps } = await setup({ random: () => draws.shift() ?? 0 });
    pool.intercept({ path: '/bot_users/bot_1', method: 'GET' }).reply(503, errBody(503)).times(3);
    pool.intercept({ path: '/bot_users/bot_1', method: 'GET' }).reply(200, botUser('bot_1'));
    await client.getBotUser('bot_1');
    expect(sleeps).toEqual([90, 20, 300]);
  });

  it.each([
    ['GET', (c: C) => c.getTlsEdge('edgtls_1'), false],
    ['PATCH', (c: C) => c.updateTlsEdge('edgtls_1', {}), true],
    ['DELETE', (c: C) => c.deleteTlsEdge('edgtls_1'), true],
  ] as const)(
    '%s: gives up after maxAttempts with the last error (outcomeUnknown %s)',
    async (method, call, unknown) => {
      const { pool, client, sleeps } = await setup({
        retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 },
      });
      pool
        .intercept({ path: () => true, method })
        .reply(503, errBody(503, 'ERR_SVC_503'))
        .times(3);
      const err = await call(client).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 503, errorCode: 'ERR_SVC_503', outcomeUnknown: unknown });
      expect(sleeps).toEqual([50, 100]);
    },
  );

  it('retry: false sends once', async () => {
    const { pool, client, sleeps } = await setup({ retry: false });
    pool.intercept({ path: () => true, method: 'GET' }).reply(503, errBody(503));
    await expect(client.getTlsEdge('edgtls_1')).rejects.toMatchObject({ status: 503 });
    expect(sleeps).toEqual([]);
  });

  it.each([400, 401, 403, 404, 409, 413, 501])('does not retry %i', async (status) => {
    const { pool, client, sleeps } = await setup();
    pool.intercept({ path: () => true, method: 'GET' }).reply(status, errBody(status, 'ERR_SVC_1'));
    await expect(client.getTlsEdge('edgtls_1')).rejects.toMatchObject({
      status,
      outcomeUnknown: false,
    });
    expect(sleeps).toEqual([]);
  });

  it('retries network errors of idempotent requests', async () => {
    const { pool, client, sleeps, responses } = await setup();
    pool.intercept({ path: () => true, method: 'GET' }).reset();
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await client.getTlsEdge('edgtls_1');
    expect(sleeps).toEqual([50]);
    expect(responses.map((r) => r.status)).toEqual([0, 200]);
  });
});

describe('Retry-After', () => {
  it.each([
    ['seconds', '3', [3000]],
    ['zero', '0', [0]],
    ['an HTTP-date', 'Tue, 14 Nov 2023 22:13:40 GMT', [20_000]],
    ['garbage (falls back to backoff)', 'later', [50]],
  ])('honours %s on 429', async (_n, header, expected) => {
    const { pool, client, sleeps } = await setup();
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(429, errBody(429, 'ERR_SVC_226'), { headers: { 'retry-after': header } });
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await client.getTlsEdge('edgtls_1');
    expect(sleeps).toEqual(expected);
  });

  it('throws instead of re-sending early when Retry-After exceeds the cap', async () => {
    const { pool, client, sleeps } = await setup({ retry: { maxRetryAfterMs: 5000 } });
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(429, errBody(429, 'ERR_SVC_226'), { headers: { 'retry-after': '30' } });
    const err = await client.getTlsEdge('edgtls_1').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, retryAfter: 30, errorCode: 'ERR_SVC_226' });
    expect(sleeps).toEqual([]);
  });

  it('honours Retry-After on a 503 too', async () => {
    const { pool, client, sleeps } = await setup();
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(503, errBody(503), { headers: { 'retry-after': '1' } });
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await client.getTlsEdge('edgtls_1');
    expect(sleeps).toEqual([1000]);
  });
});

describe('POST (create) is re-sent only when provably not processed', () => {
  const creates = [
    ['createTlsEdge', (c: C) => c.createTlsEdge({}), tlsEdge('edgtls_1')],
    ['createHttpsEdge', (c: C) => c.createHttpsEdge({}), httpsEdge('edghts_1')],
    [
      'createRoute',
      (c: C) => c.createRoute('edghts_1', { match_type: 'exact_path', match: '/' }),
      route('edghts_1', 'edghtsrt_1'),
    ],
    ['createBotUser', (c: C) => c.createBotUser({ name: 'ci' }), botUser('bot_1')],
  ] as const;

  it.each(creates)('%s: 429 is retried', async (_n, call, record) => {
    const { pool, client, sleeps } = await setup();
    pool
      .intercept({ path: () => true, method: 'POST' })
      .reply(429, errBody(429), { headers: { 'retry-after': '2' } });
    pool.intercept({ path: () => true, method: 'POST' }).reply(201, record);
    await expect(call(client)).resolves.toEqual(record);
    expect(sleeps).toEqual([2000]);
  });

  it.each(creates)('%s: a refused connection is re-sent (nothing was sent)', async (_n, call) => {
    const { pool, client, sleeps, responses } = await setup({
      retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 },
    });
    await pool.close(); // nobody listens on the port any more: every connect is refused
    const err = await call(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ method: 'POST', outcomeUnknown: false });
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect(responses.map((r) => r.status)).toEqual([0, 0, 0]);
    expect(sleeps).toEqual([50, 100]);
  });

  it.each([500, 502, 503, 504])(
    'a %i is thrown at once, flagged outcomeUnknown',
    async (status) => {
      const { pool, client, sleeps } = await setup();
      pool.intercept({ path: '/edges/tls', method: 'POST' }).reply(status, errBody(status));
      pool.intercept({ path: '/edges/tls', method: 'POST' }).reply(201, tlsEdge('edgtls_1'));
      const err = await client.createTlsEdge({}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(isOutcomeUnknown(err)).toBe(true);
      expect(sleeps).toEqual([]);
      expect(pool.pending()).toBe(1); // the second POST was never sent
    },
  );

  it('a reset connection is thrown at once, flagged outcomeUnknown', async () => {
    const { pool, client, sleeps } = await setup();
    pool.intercept({ path: '/bot_users', method: 'POST' }).reset();
    pool.intercept({ path: '/bot_users', method: 'POST' }).reply(201, botUser('bot_1'));
    const err = await client.createBotUser({ name: 'ci' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ outcomeUnknown: true, method: 'POST', path: '/bot_users' });
    expect(sleeps).toEqual([]);
    expect(pool.pending()).toBe(1);
  });

  it('a 4xx is not outcomeUnknown', async () => {
    const { pool, client } = await setup();
    pool.intercept({ path: '/edges/tls', method: 'POST' }).reply(400, errBody(400, 'ERR_SVC_7122'));
    const err = await client.createTlsEdge({}).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, errorCode: 'ERR_SVC_7122', outcomeUnknown: false });
  });
});

describe('abort', () => {
  it('aborts during a backoff sleep without sending again', async () => {
    let sleeping: () => void = () => {};
    const asleep = new Promise<void>((resolve) => {
      sleeping = resolve;
    });
    const { pool, client } = await setup({
      sleep: (_ms, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(new Error('raw')));
          sleeping();
        }),
    });
    pool.intercept({ path: () => true, method: 'GET' }).reply(503, errBody(503));
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    const controller = new AbortController();
    const pending = client.getTlsEdge('edgtls_1', { signal: controller.signal });
    await asleep;
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(pool.pending()).toBe(1);
  });

  it('sends nothing when the signal already fired', async () => {
    const { client, responses } = await setup();
    await expect(client.listTlsEdges({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      AbortedError,
    );
    expect(responses).toEqual([]);
  });

  it('aborts a token-bucket wait', async () => {
    const { pool, client } = await setup({
      rateLimit: { limit: 1, windowMs: 60_000 },
      sleep: (_ms, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await client.getTlsEdge('edgtls_1');
    const controller = new AbortController();
    const pending = client.getTlsEdge('edgtls_1', { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
  });
});

describe('the write fence', () => {
  it('is asked as each attempt leaves: a retry it refuses is not sent, and says so', async () => {
    let open = true;
    const asked: number[] = [];
    const { pool, client, responses } = await setup({
      sleep: async () => {
        // The lease is lost (or writes suspended) while the retry waits.
        open = false;
      },
    });
    pool.intercept({ path: () => true, method: 'PATCH' }).reply(503, errBody(503));
    const fence = () => {
      asked.push(responses.length);
      if (!open) throw new EdgesyncError('ES_LOST_LEADERSHIP', 'not the leader');
    };
    const err = await client
      .updateTlsEdge('edgtls_1', { description: 'x' }, { fence })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FencedWriteError);
    expect(err).toMatchObject({
      code: 'ES_FENCED',
      method: 'PATCH',
      path: '/edges/tls/edgtls_1',
      message: 'not the leader',
    });
    expect((err as FencedWriteError).cause).toMatchObject({ code: 'ES_LOST_LEADERSHIP' });
    // Asked before the first attempt and before the retry; one request reached the server.
    expect(asked).toEqual([0, 1]);
    expect(responses).toHaveLength(1);
  });

  it("is asked after the rate limiter's wait, and a refused request gives its slot back", async () => {
    let open = true;
    let t = 0;
    const limiter = createRateLimiter(
      { limit: 1, windowMs: 1000 },
      {
        now: () => t,
        sleep: async (ms) => {
          t += ms;
          open = false;
        },
      },
    );
    const { pool, client, responses } = await setup({ rateLimiter: limiter });
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await client.getTlsEdge('edgtls_1');
    const fence = () => {
      if (!open) throw new EdgesyncError('ES_SUSPENDED', 'suspended: writes stopped');
    };
    // The window is full: the write waits (the limiter's sleep), then the fence refuses it.
    const refused = client.deleteTlsEdge('edgtls_1', { fence });
    await expect(refused).rejects.toMatchObject({ code: 'ES_FENCED', method: 'DELETE' });
    expect(responses).toHaveLength(1);
    // The GET left the window while the write waited; the refused write is not counted.
    expect(limiter.snapshot().inWindow).toBe(0);
  });

  it('an abort that fires while a write waits sends nothing, even without a fence', async () => {
    const controller = new AbortController();
    const { pool, client } = await setup({
      sleep: async () => {
        controller.abort();
      },
    });
    pool.intercept({ path: () => true, method: 'PUT' }).reply(503, errBody(503));
    const put = client.putModule(
      { kind: 'tls_edge', id: 'edgtls_1' },
      'backend',
      { backend_id: 'bkdtg_1' },
      { signal: controller.signal },
    );
    await expect(put).rejects.toBeInstanceOf(AbortedError);
    expect(pool.pending()).toBe(0);
  });
});

describe('client-side rate limit', () => {
  it('spaces requests (and retries) through one rolling window', async () => {
    const { pool, client, sleeps } = await setup({ rateLimit: { limit: 2, windowMs: 1000 } });
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(200, tlsEdge('edgtls_1'))
      .times(2);
    pool.intercept({ path: () => true, method: 'GET' }).reply(503, errBody(503));
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await client.getTlsEdge('edgtls_1');
    await client.getTlsEdge('edgtls_1');
    await client.getTlsEdge('edgtls_1');
    // The third waits for the first to leave the window (1 s + 50 ms margin); then the 503's
    // backoff (50 ms), after which the window has room again.
    expect(sleeps).toEqual([1050, 50]);
  });

  it('a 429 pauses for Retry-After and does not use up a retry', async () => {
    let throttled = 0;
    const { pool, client, sleeps } = await setup({
      rateLimit: { limit: 10, windowMs: 1000 },
      retry: false,
      onThrottled: () => {
        throttled += 1;
      },
    });
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(429, errBody(429), { headers: { 'retry-after': '3' } });
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, tlsEdge('edgtls_1'));
    await expect(client.getTlsEdge('edgtls_1')).resolves.toMatchObject({ id: 'edgtls_1' });
    expect(sleeps).toEqual([3000]);
    expect(throttled).toBe(1);
  });

  it('without a limiter, a 429 is an ordinary retryable failure', async () => {
    const { pool, client } = await setup({ retry: false });
    pool.intercept({ path: () => true, method: 'GET' }).reply(429, errBody(429));
    await expect(client.getTlsEdge('edgtls_1')).rejects.toMatchObject({ status: 429 });
  });
});

describe('error bodies', () => {
  it('reads the API error body and the operation id', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({ path: () => true, method: 'PATCH' })
      .reply(400, errBody(400, 'ERR_SVC_214'), { headers: { 'svc-operation-id': 'op_header' } });
    const err = await client.updateHttpsEdge('edghts_1', {}).catch((e: unknown) => e);
    expect(err).toMatchObject({
      method: 'PATCH',
      path: '/edges/https/edghts_1',
      status: 400,
      errorCode: 'ERR_SVC_214',
      apiMessage: 'failed with 400',
      operationId: 'op_body',
    });
    expect((err as Error).message).toBe(
      'PATCH /edges/https/edghts_1: 400 ERR_SVC_214: failed with 400',
    );
  });

  it.each([
    [
      'no error_code (some 404s)',
      404,
      JSON.stringify({ status_code: 404, msg: 'gone' }),
      'gone',
      undefined,
    ],
    [
      'HTML from a proxy',
      502,
      '<html>\n <body>Bad gateway</body></html>',
      'Bad Gateway (non-JSON body: <html> <body>Bad gateway</body></html>)',
      undefined,
    ],
    ['plain text', 500, 'oops', 'Internal Server Error (non-JSON body: oops)', undefined],
    ['empty', 503, '', 'Service Unavailable', undefined],
    [
      'JSON of another shape',
      500,
      '[1,2]',
      'Internal Server Error (non-JSON body: [1,2])',
      undefined,
    ],
    ['wrong field types', 400, JSON.stringify({ error_code: 7, msg: 'bad' }), 'bad', undefined],
    [
      'a huge body',
      500,
      'x'.repeat(10_000),
      `Internal Server Error (non-JSON body: ${'x'.repeat(120)}…)`,
      undefined,
    ],
  ])('copes with %s', async (_n, status, body, message, code) => {
    const { pool, client } = await setup({ retry: false });
    pool.intercept({ path: () => true, method: 'GET' }).reply(status, body, {
      headers: { 'svc-operation-id': 'op_h' },
    });
    const err = await client.getBotUser('bot_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status,
      apiMessage: message,
      errorCode: code,
      operationId: 'op_h',
    });
  });
});

describe('response validation', () => {
  it.each([
    ['a missing module key', { ...tlsEdge('edgtls_1'), backend: undefined }, /backend: /],
    ['a wrong type', { ...tlsEdge('edgtls_1'), hostports: 'a:1' }, /hostports: /],
    [
      'a bad Ref inside a module',
      tlsEdge('edgtls_1', { backend: { enabled: true, backend: { uri: 'u' } as never } }),
      /backend\.backend\.id/,
    ],
  ])('names the path and the field on %s', async (_n, body, field) => {
    const { pool, client, sleeps } = await setup();
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, body);
    const err = await client.getTlsEdge('edgtls_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect((err as Error).message).toMatch(
      /^GET \/edges\/tls\/edgtls_1: unexpected response \(200\): /,
    );
    expect((err as Error).message).toMatch(field);
    expect(sleeps).toEqual([]);
  });

  it.each([
    ['not JSON', '<html>ok</html>', /body is not JSON: <html>ok<\/html>/],
    ['empty', '', /empty body/],
  ])('refuses a 2xx body that is %s', async (_n, body, message) => {
    const { pool, client } = await setup();
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, body);
    await expect(client.getBotUser('bot_1')).rejects.toThrow(message);
  });

  it('names the list item in a paginated response', async () => {
    const { pool, client } = await setup();
    const bad = httpsEdge('edghts_2', {
      routes: [{ ...route('edghts_2', 'r'), oauth: 5 as never }],
    });
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, {
      https_edges: [httpsEdge('edghts_1'), bad],
      uri: `${ORIGIN}/edges/https`,
      next_page_uri: null,
    });
    await expect(client.listHttpsEdges()).rejects.toThrow(/https_edges\[1\]\.routes\[0\]\.oauth/);
  });

  it('accepts fields it does not know (additive API changes) and drops them', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(200, { ...tlsEdge('edgtls_1'), policy: null, shiny_new_field: { a: 1 } });
    const edge = await client.getTlsEdge('edgtls_1');
    expect(edge).toEqual(tlsEdge('edgtls_1'));
  });

  it('reads a documented endpoint list: entries of unmanaged types are tolerated, url-less ones left out', async () => {
    const { pool, client } = await setup();
    const cloud = {
      id: 'ep_cloud',
      uri: `${ORIGIN}/endpoints/ep_cloud`,
      created_at: '2026-01-02T03:04:05Z',
      updated_at: '2026-01-02T03:04:05Z',
      type: 'cloud',
      url: 'https://app.example.com',
      traffic_policy: '{"on_http_request":[{"actions":[{"type":"deny"}]}]}',
      bindings: ['public'],
      pooling_enabled: false,
      principal: { id: 'usr_1', uri: `${ORIGIN}/users/usr_1` },
    };
    const agent = {
      id: 'ep_agent',
      created_at: '2026-01-01T00:00:00Z',
      type: 'agent',
      url: 'tls://agent.example.com:443',
      proto: 'tls',
      tunnel: { id: 'tn_1', uri: `${ORIGIN}/tunnels/tn_1` },
    };
    // As the API reference's own response shows it: an edge's endpoint has no `url`.
    const edge = {
      id: 'ep_edge',
      created_at: '2026-01-01T00:00:00Z',
      type: 'edge',
      public_url: 'https://old.example.com',
      hostport: 'old.example.com:443',
      proto: 'https',
      edge: { id: 'edghts_1', uri: `${ORIGIN}/edges/https/edghts_1` },
      bindings: 'not a list',
    };
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, {
      endpoints: [cloud, agent, edge],
      uri: `${ORIGIN}/endpoints`,
      next_page_uri: null,
    });
    const { items } = await client.listEndpoints();
    expect(items.map((e) => [e.id, e.type, e.url])).toEqual([
      ['ep_cloud', 'cloud', 'https://app.example.com'],
      ['ep_agent', 'agent', 'tls://agent.example.com:443'],
    ]);
  });

  it('still names a broken cloud endpoint at its index', async () => {
    const { pool, client } = await setup();
    pool.intercept({ path: () => true, method: 'GET' }).reply(200, {
      endpoints: [
        { id: 'ep_a', type: 'edge', created_at: '2026-01-01T00:00:00Z' },
        { id: 'ep_b', type: 'cloud', created_at: '2026-01-01T00:00:00Z' },
      ],
      uri: `${ORIGIN}/endpoints`,
      next_page_uri: null,
    });
    await expect(client.listEndpoints()).rejects.toThrow(/endpoints\[1\]\.url: /);
  });

  it('reads null hostports as none', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(200, { ...tlsEdge('edgtls_1'), hostports: null });
    expect((await client.getTlsEdge('edgtls_1')).hostports).toEqual([]);
  });
});

describe('pagination', () => {
  const page = (ids: string[], next: string | null) => ({
    bot_users: ids.map((id) => botUser(id)),
    uri: `${ORIGIN}/bot_users`,
    next_page_uri: next,
  });

  it('follows next_page_uri to null and counts the calls', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({ path: '/bot_users?limit=2', method: 'GET' })
      .reply(200, page(['bot_3', 'bot_2'], `${ORIGIN}/bot_users?before_id=bot_2&limit=2`));
    pool
      .intercept({ path: '/bot_users?before_id=bot_2&limit=2', method: 'GET' })
      .reply(200, page(['bot_1'], null));
    const { items, calls } = await client.listBotUsers({ pageSize: 2 });
    expect(items.map((b) => b.id)).toEqual(['bot_3', 'bot_2', 'bot_1']);
    expect(calls).toBe(2);
  });

  it('stops at an empty page even if the server offers another', async () => {
    const { pool, client } = await setup();
    pool
      .intercept({ path: '/bot_users?limit=100', method: 'GET' })
      .reply(200, page([], `${ORIGIN}/bot_users?before_id=x&limit=100`));
    expect(await client.listBotUsers()).toEqual({ items: [], calls: 1 });
  });

  it('follows a link naming another origin or path prefix on the configured base only', async () => {
    // A server behind a proxy or gateway knows its own URL, not ours: the key stays on ours.
    const { pool, client } = await setup({ baseUrl: '/edge-api' });
    pool
      .intercept({ path: '/edge-api/bot_users?limit=100', method: 'GET' })
      .reply(200, page(['b'], 'http://10.1.2.3:8787/bot_users?before_id=b&limit=100'));
    pool
      .intercept({ path: '/edge-api/bot_users?before_id=b&limit=100', method: 'GET' })
      .reply(200, page(['a'], '/internal/v2/bot_users?before_id=a&limit=100'));
    pool
      .intercept({ path: '/edge-api/bot_users?before_id=a&limit=100', method: 'GET' })
      .reply(200, page([], null));
    const { items, calls } = await client.listBotUsers();
    expect(items.map((b) => b.id)).toEqual(['b', 'a']);
    expect(calls).toBe(3);
  });

  it.each([
    ['another list', `${ORIGIN}/edges/tls?before_id=b&limit=100`, /not a page of \/bot_users/],
    ['a sub-resource', `${ORIGIN}/bot_users/bot_1?x=1`, /not a page of \/bot_users/],
    ['the same page again', `${ORIGIN}/bot_users?limit=100`, /already read/],
  ])('refuses a next_page_uri to %s', async (_n, next, message) => {
    const { pool, client } = await setup();
    pool.intercept({ path: '/bot_users?limit=100', method: 'GET' }).reply(200, page(['b'], next));
    await expect(client.listBotUsers()).rejects.toThrow(message);
  });

  it('keeps a base path prefix when following pages', async () => {
    const { pool, client } = await setup({ baseUrl: '/api/v2/' });
    pool
      .intercept({ path: '/api/v2/bot_users?limit=100', method: 'GET' })
      .reply(200, page(['b'], `${ORIGIN}/api/v2/bot_users?before_id=b&limit=100`));
    pool
      .intercept({ path: '/api/v2/bot_users?before_id=b&limit=100', method: 'GET' })
      .reply(200, page([], null));
    expect((await client.listBotUsers()).calls).toBe(2);
  });

  it.each([0, 101, 1.5])('refuses page size %d', async (pageSize) => {
    const { client } = await setup();
    await expect(client.listTlsEdges({ pageSize })).rejects.toThrow(/page size/);
  });
});

describe('secrets', () => {
  it('never lets the API key into error messages or logs', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'trace',
      destination: { write: (l: string) => void lines.push(l) },
    });
    const { pool, client } = await setup({ logger });
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply(401, JSON.stringify({ status_code: 401, msg: `bad key ${KEY}` }));
    pool.intercept({ path: () => true, method: 'POST' }).reset();
    const errors = [
      await client.getTlsEdge('edgtls_1').catch((e: unknown) => e),
      await client.createTlsEdge({}).catch((e: unknown) => e),
    ];
    expect(errors.map((e) => (e as Error).message)).toEqual([
      'GET /edges/tls/edgtls_1: 401: bad key [redacted]',
      'POST /edges/tls: network error: UND_ERR_SOCKET: other side closed',
    ]);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(KEY);
  });
});
