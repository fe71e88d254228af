/**
 * The HTTP protocol around the API: body limit (413, declared or streamed), operation IDs on
 * every response, and the test knobs (rate limit with Retry-After, latency, injected 503s and
 * connection resets with "performed, then reset" semantics for writes), changed at runtime.
 */
import { request as httpRequest } from 'node:http';
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

describe('body limit', () => {
  it('a declared body over 1 MiB is 413 and nothing is created', async () => {
    const big = JSON.stringify({ description: 'x'.repeat(1024 * 1024) });
    const r = await call('POST', '/edges/tls', undefined, { raw: big });
    expect(r.status).toBe(413);
    expect(r.json.error_code).toBe('ERR_SVC_413');
    expect(r.json.details.operation_id).toBe(r.headers.get('svc-operation-id'));
    expect((await call('GET', '/edges/tls')).json.tls_edges).toEqual([]);
  });

  it('a streamed (chunked) body over 1 MiB is 413', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server.url}/bot_users`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.apiKey}`,
          'svc-version': '2',
          'content-type': 'application/json',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 40) {
          sent++;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    expect(status).toBe(413);
  });

  it('exactly 1 MiB is read (and then judged on its content)', async () => {
    const body = JSON.stringify({ name: 'n'.repeat(1024 * 1024 - 11) });
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    const r = await call('POST', '/bot_users', undefined, { raw: body });
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe('ERR_SVC_215');
  });
});

describe('operation IDs', () => {
  it('every response carries a distinct Svc-Operation-Id', async () => {
    const replies = [
      await call('GET', '/edges/tls'),
      await call('POST', '/bot_users', { name: 'x' }),
      await call('GET', '/nope'),
      await call('GET', '/edges/tls', undefined, { headers: { authorization: undefined } }),
    ];
    const created = replies[1]?.json.id as string;
    replies.push(await call('DELETE', `/bot_users/${created}`));
    const ops = replies.map((r) => r.headers.get('svc-operation-id'));
    for (const op of ops) expect(op).toMatch(/^op_[0-9A-Za-z]{27}$/);
    expect(new Set(ops).size).toBe(ops.length);
  });
});

describe('knobs', () => {
  it('rate limit: 429 with Retry-After in seconds, per account, changeable at runtime', async () => {
    server.knobs.rateLimit = { limit: 3, windowMs: 60_000 };
    for (let i = 0; i < 3; i++) expect((await call('GET', '/edges/tls')).status).toBe(200);
    const limited = await call('POST', '/bot_users', { name: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.json.error_code).toBe('ERR_SVC_226');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    server.knobs.rateLimit = undefined;
    expect((await call('GET', '/bot_users')).json.bot_users).toEqual([]);
  });

  it('rate limit counts per account', async () => {
    const two = await startTestServer({
      apiKeys: ['ka', 'kb'],
      rateLimit: { limit: 1, windowMs: 60_000 },
    });
    try {
      const a = clientFor(two, 'ka');
      const b = clientFor(two, 'kb');
      expect((await a('GET', '/edges/tls')).status).toBe(200);
      expect((await a('GET', '/edges/tls')).status).toBe(429);
      expect((await b('GET', '/edges/tls')).status).toBe(200);
    } finally {
      await two.close();
    }
  });

  it('latency delays each request', async () => {
    server.knobs.latencyMs = { min: 60, max: 80 };
    const t0 = performance.now();
    expect((await call('GET', '/edges/tls')).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55);
  });

  it('fault rate 1: 503 with a JSON error body, and the write is not performed', async () => {
    server.knobs.faultRate = 1;
    const r = await call('POST', '/bot_users', { name: 'x' });
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ error_code: 'ERR_SVC_503', status_code: 503 });
    server.knobs.faultRate = 0;
    expect((await call('GET', '/bot_users')).json.bot_users).toEqual([]);
  });

  it('reset rate 1: the connection is reset; a write is performed before the reset', async () => {
    server.knobs.resetRate = 1;
    await expect(call('POST', '/bot_users', { name: 'performed' })).rejects.toThrow();
    await expect(call('GET', '/bot_users')).rejects.toThrow();
    server.knobs.resetRate = 0;
    const list = await call('GET', '/bot_users');
    expect(list.json.bot_users.map((b: { name: string }) => b.name)).toEqual(['performed']);
  });

  it('reset rate applies to a share of requests only', async () => {
    const s = await startTestServer({ resetRate: 0.5 });
    try {
      const c = clientFor(s, s.apiKey);
      let resets = 0;
      for (let i = 0; i < 40; i++) {
        try {
          await c('GET', '/edges/tls');
        } catch {
          resets++;
        }
      }
      // 40 draws at 0.5: all-or-nothing would be a broken knob (probability 2^-39).
      expect(resets).toBeGreaterThan(0);
      expect(resets).toBeLessThan(40);
    } finally {
      await s.close();
    }
  });
});

it('close() is idempotent and the port stops answering', async () => {
  const s = await startTestServer();
  await s.close();
  await s.close();
  await expect(
    fetch(`${s.url}/edges/tls`, { signal: AbortSignal.timeout(2000) }),
  ).rejects.toThrow();
});

describe('start-up and transport failures', () => {
  it('malformed HTTP gets a JSON 400 with an operation ID', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(server.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('GARBAGE\r\n\r\n'));
      let text = '';
      socket.on('data', (c) => {
        text += c.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5000, () => reject(new Error('timeout')));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/svc-operation-id: op_/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ status_code: 400, error_code: 'ERR_SVC_215' });
  });

  it('a port in use is a clear configuration error', async () => {
    const { port } = new URL(server.url);
    await expect(startTestServer({ port: Number(port) })).rejects.toThrow(
      /cannot listen on 127\.0\.0\.1:\d+: address in use/,
    );
  });

  it('an unusable data directory is a clear store error', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'edgesync-bad-'));
    try {
      const file = join(dir, 'not-a-dir');
      await writeFile(file, 'x');
      await expect(startTestServer({ dataDir: file })).rejects.toThrow(
        /cannot open the data directory/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
