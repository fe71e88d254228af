import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { executePlan, type ProgressEvent } from '../../../src/apply/executor.js';
import { GuardError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import {
  apiError,
  type Call,
  change,
  defaultAnswer,
  fakeClient,
  op,
  owned,
  plan,
  snapshot,
} from './fake.js';

const noSleep = async () => {};
const base = { sleep: noSleep, now: () => 0, random: () => 0 };

/** `fn arg0` for each call, e.g. `updateHttpsEdge edghts_a`: enough to assert order. */
function trace(calls: readonly Call[]): string[] {
  return calls.map((c) => `${c.fn}${typeof c.args[0] === 'string' ? ` ${c.args[0]}` : ''}`);
}

describe('executePlan', () => {
  it('runs phases in order, each root in plan order', async () => {
    const { client, calls } = fakeClient();
    const p = plan([
      change('https_edge.b', [op('DELETE', '/edges/https/edghts_b', { phase: 'delete' })]),
      change('https_edge.a', [
        op('PATCH', '/edges/https/edghts_a', { body: { hostports: [] }, phase: 'release' }),
        op('PATCH', '/edges/https/edghts_a', { body: { description: 'x' } }),
      ]),
      change('https_edge.c', [
        op('PATCH', '/edges/https/edghts_c', { body: { hostports: ['a.example:443'] } }),
      ]),
    ]);
    const result = await executePlan(p, { client, concurrency: 1, ...base });
    expect(trace(calls)).toEqual([
      'updateHttpsEdge edghts_a',
      'updateHttpsEdge edghts_a',
      'updateHttpsEdge edghts_c',
      'deleteHttpsEdge edghts_b',
    ]);
    expect(result).toMatchObject({
      total: 4,
      done: 4,
      failed: 0,
      writes: 4,
      deletesSkipped: false,
    });
  });

  it('fills placeholders from the IDs earlier POSTs returned', async () => {
    const { client, calls } = fakeClient((call) =>
      call.fn === 'createHttpsEdge'
        ? { id: 'edghts_new' }
        : call.fn === 'createRoute'
          ? { id: 'edghtsrt_new' }
          : undefined,
    );
    const route = 'https_edge.a.route["/api"]';
    const p = plan([
      change('https_edge.a', [
        op('POST', '/edges/https', { body: { metadata: owned('a') }, binds: 'https_edge.a' }),
      ]),
      change(route, [
        op('POST', '/edges/https/{https_edge.a}/routes', {
          body: { match_type: 'path_prefix', match: '/api' },
          binds: route,
        }),
        op('PUT', `/edges/https/{https_edge.a}/routes/{${route}}/compression`, {
          body: { enabled: true },
        }),
      ]),
    ]);
    const result = await executePlan(p, { client, ...base });
    expect(calls.map((c) => [c.fn, ...c.args.slice(0, 2)])).toEqual([
      ['createHttpsEdge', { metadata: owned('a') }],
      ['createRoute', 'edghts_new', { match_type: 'path_prefix', match: '/api' }],
      ['putModule', { kind: 'route', edgeId: 'edghts_new', id: 'edghtsrt_new' }, 'compression'],
    ]);
    expect(result.created).toEqual({ 'https_edge.a': 'edghts_new', [route]: 'edghtsrt_new' });
  });

  it('counts a DELETE of something already gone as done, not as a write', async () => {
    const { client } = fakeClient((call) =>
      call.fn === 'deleteHttpsEdge' ? apiError('DELETE', '/edges/https/edghts_a', 404) : undefined,
    );
    const events: ProgressEvent[] = [];
    const p = plan([
      change('https_edge.a', [op('DELETE', '/edges/https/edghts_a', { phase: 'delete' })]),
    ]);
    const result = await executePlan(p, { client, onProgress: (e) => events.push(e), ...base });
    expect(result).toMatchObject({ done: 1, failed: 0, writes: 0 });
    expect(events.map((e) => [e.outcome, e.status])).toEqual([['gone', 404]]);
  });

  it('stops a root whose resource vanished, says so, and skips the deletes', async () => {
    const { client, calls } = fakeClient((call) =>
      call.fn === 'updateHttpsEdge' && call.args[0] === 'edghts_a'
        ? apiError('PATCH', '/edges/https/edghts_a', 404)
        : undefined,
    );
    const p = plan([
      change('https_edge.a', [
        op('PATCH', '/edges/https/edghts_a', { body: { description: 'x' } }),
        op('PUT', '/edges/https/edghts_a/mutual_tls', {
          body: { certificate_authority_ids: ['ca_1'] },
        }),
      ]),
      change('https_edge.b', [
        op('PATCH', '/edges/https/edghts_b', { body: { description: 'y' } }),
      ]),
      change('https_edge.c', [op('DELETE', '/edges/https/edghts_c', { phase: 'delete' })]),
    ]);
    const result = await executePlan(p, { client, concurrency: 1, ...base });
    expect(trace(calls)).toEqual(['updateHttpsEdge edghts_a', 'updateHttpsEdge edghts_b']);
    expect(result).toMatchObject({
      done: 1,
      failed: 1,
      skipped: 2,
      vanished: ['https_edge.a'],
      deletesSkipped: true,
    });
    expect(result.errors[0]?.message).toBe(
      'https_edge.a vanished; it will be recreated on the next run',
    );
    expect(result.messages.join('\n')).toMatch(/delete operation\(s\) skipped because 1/);
  });

  it('looks before re-sending a POST of unknown outcome, and binds what it finds', async () => {
    const { client, calls } = fakeClient((call) => {
      if (call.fn === 'createHttpsEdge') return apiError('POST', '/edges/https', 503, true);
      if (call.fn === 'listHttpsEdges') {
        return {
          items: [
            { id: 'edghts_other', metadata: owned('a', 'someone-else'), routes: [] },
            { id: 'edghts_found', metadata: owned('a'), routes: [] },
          ],
          calls: 1,
        };
      }
      if (call.fn === 'createRoute') return { id: 'edghtsrt_1' };
      return undefined;
    });
    const p = plan([
      change('https_edge.a', [
        op('POST', '/edges/https', { body: { metadata: owned('a') }, binds: 'https_edge.a' }),
        op('POST', '/edges/https/{https_edge.a}/routes', {
          body: { match_type: 'exact_path', match: '/' },
        }),
      ]),
    ]);
    const result = await executePlan(p, { client, ...base });
    expect(trace(calls)).toEqual(['createHttpsEdge', 'listHttpsEdges', 'createRoute edghts_found']);
    expect(result).toMatchObject({ done: 2, failed: 0, writes: 2 });
  });

  it.each([
    ['an edge', '/edges/tls', { metadata: owned('t') }, 'createTlsEdge', 'listTlsEdges'],
    [
      'a route',
      '/edges/https/edghts_a/routes',
      { match_type: 'exact_path', match: '/x' },
      'createRoute',
      'getHttpsEdge',
    ],
    ['a bot user', '/bot_users', { name: 'ci' }, 'createBotUser', 'listBotUsers'],
  ])(
    're-sends %s create only after a lookup shows it did not land',
    async (_, path, body, create, look) => {
      let attempts = 0;
      const { client, calls } = fakeClient((call) => {
        if (call.fn === create) {
          attempts += 1;
          return attempts === 1 ? apiError('POST', path, 0, true) : defaultAnswer(call);
        }
        if (call.fn === 'getHttpsEdge')
          return { id: 'edghts_a', routes: [{ id: 'r', match: '/y' }] };
        return defaultAnswer(call);
      });
      const p = plan([change('tls_edge.t', [op('POST', path, { body })])]);
      const result = await executePlan(p, { client, ...base });
      expect(calls.map((c) => c.fn)).toEqual([create, look, create]);
      expect(result).toMatchObject({ done: 1, failed: 0 });
    },
  );

  it('gives up on a create after its bounded attempts', async () => {
    const { client, calls } = fakeClient((call) =>
      call.fn === 'createBotUser' ? apiError('POST', '/bot_users', 503, true) : defaultAnswer(call),
    );
    const p = plan([change('bot_user.ci', [op('POST', '/bot_users', { body: { name: 'ci' } })])]);
    const result = await executePlan(p, { client, createAttempts: 3, ...base });
    expect(calls.filter((c) => c.fn === 'createBotUser')).toHaveLength(3);
    expect(result).toMatchObject({ done: 0, failed: 1 });
  });

  it('waits a jittered, doubling backoff between re-sent creates', async () => {
    const { client } = fakeClient((call) =>
      call.fn === 'createBotUser' ? apiError('POST', '/bot_users', 503, true) : defaultAnswer(call),
    );
    const waits: number[] = [];
    const p = plan([change('bot_user.ci', [op('POST', '/bot_users', { body: { name: 'ci' } })])]);
    await executePlan(p, {
      client,
      createAttempts: 4,
      ...base,
      random: () => 0.5,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(waits).toEqual([100, 200, 400]);
  });

  it('an abort during the wait before a re-sent create ends it at once: outcome unknown', async () => {
    const controller = new AbortController();
    const { client, calls } = fakeClient((call) =>
      call.fn === 'createBotUser' ? apiError('POST', '/bot_users', 503, true) : defaultAnswer(call),
    );
    // A wait that only an abort ends (as the real one does when its signal fires).
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        queueMicrotask(() => controller.abort());
      });
    const p = plan([change('bot_user.ci', [op('POST', '/bot_users', { body: { name: 'ci' } })])]);
    const result = await executePlan(p, { client, ...base, sleep, signal: controller.signal });
    expect(calls.filter((c) => c.fn === 'createBotUser')).toHaveLength(1);
    expect(result).toMatchObject({ aborted: true, done: 0, failed: 1 });
    expect(result.errors[0]?.message).toContain('503');
  });

  it('does not re-send a POST that failed with a definite answer', async () => {
    const { client, calls } = fakeClient((call) =>
      call.fn === 'createBotUser' ? apiError('POST', '/bot_users', 400) : undefined,
    );
    const p = plan([change('bot_user.ci', [op('POST', '/bot_users', { body: { name: 'ci' } })])]);
    const result = await executePlan(p, { client, ...base });
    expect(calls.map((c) => c.fn)).toEqual(['createBotUser']);
    expect(result.errors[0]).toMatchObject({ address: 'bot_user.ci', code: 'ES_API' });
  });

  it('fails the operations that depend on a create that failed', async () => {
    const { client } = fakeClient((call) =>
      call.fn === 'createHttpsEdge' ? apiError('POST', '/edges/https', 400) : undefined,
    );
    const route = 'https_edge.a.route["/"]';
    const p = plan([
      change('https_edge.a', [
        op('POST', '/edges/https', { body: { metadata: owned('a') }, binds: 'https_edge.a' }),
      ]),
      change(route, [
        op('POST', '/edges/https/{https_edge.a}/routes', {
          body: { match_type: 'exact_path', match: '/' },
        }),
      ]),
    ]);
    const result = await executePlan(p, { client, ...base });
    expect(result).toMatchObject({ failed: 1, skipped: 1, done: 0 });
  });

  it('keeps at most `concurrency` roots in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const { client } = fakeClient(() => undefined);
    const slow = new Proxy(client, {
      get(target, fn: string) {
        const inner = Reflect.get(target, fn) as (...a: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          inFlight += 1;
          peak = Math.max(peak, inFlight);
          await new Promise((r) => setImmediate(r));
          const out = await inner(...args);
          inFlight -= 1;
          return out;
        };
      },
    });
    const changes = Array.from({ length: 12 }, (_, i) =>
      change(`https_edge.e${i}`, [
        op('PATCH', `/edges/https/edghts_${i}`, { body: { description: 'a' } }),
        op('PATCH', `/edges/https/edghts_${i}`, { body: { description: 'b' } }),
      ]),
    );
    const result = await executePlan(plan(changes), { client: slow, concurrency: 3, ...base });
    expect(result.done).toBe(24);
    expect(peak).toBe(3);
  });

  it('starts nothing new once aborted, and reports it', async () => {
    const controller = new AbortController();
    const { client, calls } = fakeClient((call) => {
      if (call.fn === 'updateHttpsEdge') controller.abort();
      return undefined;
    });
    const p = plan([
      change('https_edge.a', [
        op('PATCH', '/edges/https/edghts_a', { body: { description: 'a' } }),
        op('PATCH', '/edges/https/edghts_a', { body: { description: 'b' } }),
      ]),
      change('https_edge.b', [
        op('PATCH', '/edges/https/edghts_b', { body: { description: 'c' } }),
      ]),
    ]);
    const result = await executePlan(p, {
      client,
      concurrency: 1,
      signal: controller.signal,
      ...base,
    });
    expect(calls).toHaveLength(1);
    expect(result).toMatchObject({ aborted: true, done: 1, skipped: 2 });
  });

  it('logs one line per operation with no body and no secret', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).trim().split('\n'));
        cb();
      },
    });
    const logger = createLogger({ destination, level: 'info' });
    const secret = 'oidc-secret-value';
    const { client } = fakeClient();
    const p = plan([
      change('https_edge.a.route["/"]', [
        op('PUT', '/edges/https/edghts_a/routes/rt_1/oidc', {
          body: { issuer: 'https://i', client_id: 'c', client_secret: secret },
          sensitive_paths: [['client_secret']],
        }),
      ]),
    ]);
    await executePlan(p, { client, logger, ...base });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(secret);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      method: 'PUT',
      path: '/edges/https/edghts_a/routes/rt_1/oidc',
      address: 'https_edge.a.route["/"]',
      status: 200,
      durationMs: 0,
      outcome: 'ok',
    });
  });
});

describe('executePlan guards', () => {
  const deletes = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      change(`https_edge.e${i}`, [op('DELETE', `/edges/https/edghts_${i}`, { phase: 'delete' })], {
        action: 'delete',
      }),
    );

  it.each([
    ['more edge deletions than --max-deletes', plan(deletes(11)), {}, /more than --max-deletes 10/],
    [
      'an empty manifest set that deletes',
      plan(deletes(1)),
      { desiredCount: 0 },
      /manifest set is empty.*--allow-empty/,
    ],
    [
      'a blocked guard entry',
      plan([], { blocked: [{ address: 'https_edge.x', reason: 'nope', kind: 'guard' }] }),
      {},
      /https_edge.x: nope/,
    ],
    [
      'an operation on a foreign edge',
      plan([
        change('https_edge.a', [op('PATCH', '/edges/https/edghts_f', { body: {} })], {
          id: 'edghts_f',
        }),
      ]),
      { live: snapshot([{ id: 'edghts_f', metadata: owned('a', 'other-team') }]) },
      /refusing to touch edge edghts_f, owned by "other-team"/,
    ],
    [
      'an operation on an unmanaged edge',
      plan([
        change('https_edge.a', [op('PATCH', '/edges/https/edghts_f', { body: {} })], {
          id: 'edghts_f',
        }),
      ]),
      { live: snapshot([{ id: 'edghts_f', metadata: 'hand made' }]) },
      /edghts_f, not managed by edgesync/,
    ],
    [
      'an operation of one edge on another',
      plan([
        change('https_edge.a', [op('PATCH', '/edges/https/edghts_b', { body: {} })], {
          id: 'edghts_a',
        }),
      ]),
      {},
      /targets edge edghts_b, not edghts_a/,
    ],
    [
      'the deletion of a protected edge',
      plan(deletes(1)),
      { live: snapshot([{ id: 'edghts_0', metadata: owned('e0', 'default', true) }]) },
      /protected/,
    ],
  ])('refuses %s before any write', async (_, p, guards, message) => {
    const { client, calls } = fakeClient();
    const err = await executePlan(p, { client, guards, ...base }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GuardError);
    expect((err as Error).message).toMatch(message);
    expect(calls).toEqual([]);
  });

  it.each([
    ['ten deletions', plan(deletes(10)), {}],
    ['more deletions with a raised limit', plan(deletes(11)), { maxDeletes: 11 }],
    ['an empty set with --allow-empty', plan(deletes(1)), { desiredCount: 0, allowEmpty: true }],
    [
      'an adoption of an unowned edge',
      plan([
        change('https_edge.a', [op('PATCH', '/edges/https/edghts_f', { body: {} })], {
          id: 'edghts_f',
          action: 'adopt',
        }),
      ]),
      { live: snapshot([{ id: 'edghts_f', metadata: '' }]) },
    ],
    [
      'a foreign hostport conflict (reported, not fatal)',
      plan(deletes(1), {
        blocked: [{ address: 'https_edge.x', reason: 'held', kind: 'conflict' }],
      }),
      {},
    ],
  ])('allows %s', async (_, p, guards) => {
    const { client, calls } = fakeClient();
    const result = await executePlan(p, { client, guards, ...base });
    expect(result.failed).toBe(0);
    expect(calls.length).toBe(result.total);
  });
});
