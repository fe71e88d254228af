import { describe, expect, it } from 'vitest';
import { parseTarget, sendOperation, targetEdgeId } from '../../../src/apply/dispatch.js';
import { fakeClient } from './fake.js';

describe('parseTarget', () => {
  it.each([
    ['/edges/tls', { kind: 'edges', edgeKind: 'tls' }],
    ['/edges/https', { kind: 'edges', edgeKind: 'https' }],
    ['/edges/tls/edgtls_1', { kind: 'edge', edgeKind: 'tls', id: 'edgtls_1' }],
    [
      '/edges/tls/edgtls_1/backend',
      { kind: 'module', owner: { kind: 'tls_edge', id: 'edgtls_1' }, module: 'backend' },
    ],
    [
      '/edges/https/edghts_1/tls_termination',
      { kind: 'module', owner: { kind: 'https_edge', id: 'edghts_1' }, module: 'tls_termination' },
    ],
    ['/edges/https/edghts_1/routes', { kind: 'routes', edgeId: 'edghts_1' }],
    ['/edges/https/edghts_1/routes/rt_1', { kind: 'route', edgeId: 'edghts_1', id: 'rt_1' }],
    [
      '/edges/https/edghts_1/routes/rt_1/oauth',
      { kind: 'module', owner: { kind: 'route', edgeId: 'edghts_1', id: 'rt_1' }, module: 'oauth' },
    ],
    ['/bot_users', { kind: 'bot_users' }],
    ['/bot_users/bot_1', { kind: 'bot_user', id: 'bot_1' }],
  ])('%s', (path, expected) => {
    expect(parseTarget(path)).toEqual(expected);
  });

  it.each([
    '/edges',
    '/edges/udp',
    '/edges/https/edghts_1/backend', // HTTPS edges carry no backend module
    '/edges/tls/edgtls_1/oauth',
    '/edges/tls/edgtls_1/routes',
    '/edges/https/edghts_1/routes/rt_1/nope',
    '/edges/https/{https_edge.a}/routes', // placeholders must be filled first
    '/bot_users/a/b',
    '/edges/tls/%E0%A4%A',
  ])('%s is no write target', (path) => {
    expect(parseTarget(path)).toBeUndefined();
  });

  it.each([
    ['/edges/https/edghts_1/routes/rt_1/backend', 'edghts_1'],
    ['/edges/tls/edgtls_1', 'edgtls_1'],
    ['/edges/https/edghts_9/routes', 'edghts_9'],
    ['/bot_users/bot_1', undefined],
    ['/edges/tls', undefined],
  ])('the edge of %s is %s', (path, id) => {
    const target = parseTarget(path);
    expect(target).toBeDefined();
    if (target) expect(targetEdgeId(target)).toBe(id);
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
    await sendOperation(client, method, path, body);
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
    await expect(sendOperation(client, method, path, body)).rejects.toThrow(message);
    expect(calls).toEqual([]);
  });

  it('never echoes body values in its errors', async () => {
    const { client } = fakeClient();
    const secret = 'SUPER-SECRET-VALUE';
    const body = { match_type: 'exact_path', match: '/', oidc: { client_secret: secret } };
    const err = await sendOperation(client, 'POST', '/edges/https/edghts_1/routes', body).catch(
      (e: unknown) => e,
    );
    expect(String((err as Error).message)).not.toContain(secret);
  });
});
