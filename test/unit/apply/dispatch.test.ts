import { describe, expect, it } from 'vitest';
import { sendOperation } from '../../../src/apply/dispatch.js';
import type { Target } from '../../../src/plan/target.js';
import {
  refersToCreated,
  resolveTarget,
  targetEdge,
  targetPath,
} from '../../../src/plan/target.js';
import { fakeClient, targetOf } from './fake.js';

const concrete = (path: string) => targetOf(path) as Target;

describe('targetPath', () => {
  it.each([
    ['/edges/tls'],
    ['/edges/https'],
    ['/edges/tls/edgtls_1'],
    ['/edges/tls/edgtls_1/backend'],
    ['/edges/https/edghts_1/tls_termination'],
    ['/edges/https/edghts_1/routes'],
    ['/edges/https/edghts_1/routes/rt_1'],
    ['/edges/https/edghts_1/routes/rt_1/oauth'],
    ['/edges/https/{https_edge.a}/routes'],
    ['/bot_users'],
    ['/bot_users/bot_1'],
  ])('%s renders back to itself', (path) => {
    expect(targetPath(targetOf(path))).toBe(path);
  });

  it('encodes IDs, and never lets one add a path segment', () => {
    expect(targetPath({ kind: 'edge', edge_kind: 'tls', id: 'a/../b' })).toBe(
      '/edges/tls/a%2F..%2Fb',
    );
  });

  it.each([
    ['/edges/https/edghts_1/routes/rt_1/backend', 'edghts_1'],
    ['/edges/tls/edgtls_1', 'edgtls_1'],
    ['/edges/https/edghts_9/routes', 'edghts_9'],
    ['/bot_users/bot_1', undefined],
    ['/edges/tls', undefined],
  ])('the edge of %s is %s', (path, id) => {
    expect(targetEdge(targetOf(path))).toBe(id);
  });

  it('resolves references to created resources, or says one is missing', () => {
    const t = targetOf('/edges/https/{https_edge.a}/routes');
    expect(refersToCreated(t)).toBe(true);
    expect(resolveTarget(t, (a) => (a === 'https_edge.a' ? 'edghts_7' : undefined))).toEqual({
      kind: 'routes',
      edge_id: 'edghts_7',
    });
    expect(resolveTarget(t, () => undefined)).toBeUndefined();
    expect(refersToCreated(targetOf('/edges/https/edghts_1/routes'))).toBe(false);
  });
});

describe('sendOperation', () => {
  it.each([
    ['POST', '/edges/https', { hostports: ['a.example:443'] }, 'createHttpsEdge'],
    ['PATCH', '/edges/tls/edgtls_1', { description: 'x' }, 'updateTlsEdge'],
    ['DELETE', '/edges/https/edghts_1', undefined, 'deleteHttpsEdge'],
    [
      'POST',
      '/edges/https/edghts_1/routes',
      { match_type: 'exact_path', match: '/' },
      'createRoute',
    ],
    ['PATCH', '/edges/https/edghts_1/routes/rt_1', { description: 'x' }, 'updateRoute'],
    ['DELETE', '/edges/https/edghts_1/routes/rt_1', undefined, 'deleteRoute'],
    ['PUT', '/edges/https/edghts_1/routes/rt_1/compression', { enabled: true }, 'putModule'],
    ['DELETE', '/edges/tls/edgtls_1/backend', undefined, 'deleteModule'],
    ['POST', '/bot_users', { name: 'ci' }, 'createBotUser'],
    ['PATCH', '/bot_users/bot_1', { active: false }, 'updateBotUser'],
    ['DELETE', '/bot_users/bot_1', undefined, 'deleteBotUser'],
  ] as const)('%s %s calls %s', async (method, path, body, fn) => {
    const { client, calls } = fakeClient(() => ({ id: 'x_1' }));
    await sendOperation(client, method, concrete(path), body);
    expect(calls.map((c) => c.fn)).toEqual([fn]);
  });

  it.each([
    ['PUT', '/edges/tls/edgtls_1', { description: 'x' }, /unsupported operation/],
    ['POST', '/edges/tls/edgtls_1', {}, /unsupported operation/],
    ['POST', '/edges/https', { hostports: 'a:1', nope: 1 }, /invalid body.*hostports/],
    ['PUT', '/edges/https/edghts_1/routes/rt_1/backend', { backend: 'x' }, /invalid body/],
    ['DELETE', '/edges/tls/edgtls_1', { x: 1 }, /must not carry a body/],
  ] as const)('%s %s is refused before any call', async (method, path, body, message) => {
    const { client, calls } = fakeClient();
    await expect(sendOperation(client, method, concrete(path), body)).rejects.toThrow(message);
    expect(calls).toEqual([]);
  });

  it('never echoes body values in its errors', async () => {
    const { client } = fakeClient();
    const secret = 'SUPER-SECRET-VALUE';
    const body = { match_type: 'exact_path', match: '/', oidc: { client_secret: secret } };
    const err = await sendOperation(
      client,
      'POST',
      concrete('/edges/https/edghts_1/routes'),
      body,
    ).catch((e: unknown) => e);
    expect(String((err as Error).message)).not.toContain(secret);
  });
});
