/**
 * Property tests: no body, however malformed, gets a 5xx or a non-JSON answer. Random JSON
 * values, random bytes, and valid bodies with one value replaced by random JSON are sent to
 * every write endpoint; every answer must be a 2xx or a 4xx with the API's error body.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let targets: Array<{ method: string; path: string; valid: unknown }>;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  const tls = (await call('POST', '/edges/tls', {})).json.id;
  const https = (await call('POST', '/edges/https', {})).json.id;
  const route = (
    await call('POST', `/edges/https/${https}/routes`, { match_type: 'exact_path', match: '/' })
  ).json.id;
  const bot = (await call('POST', '/bot_users', { name: 'b' })).json.id;
  const r = `/edges/https/${https}/routes/${route}`;
  targets = [
    {
      method: 'POST',
      path: '/edges/tls',
      valid: {
        description: 'd',
        hostports: ['10.9.0.1:1'],
        backend: { backend_id: 'bkdtg_1' },
        tls_termination: { terminate_at: 'edge', min_version: '1.3' },
      },
    },
    {
      method: 'PATCH',
      path: `/edges/tls/${tls}`,
      valid: { metadata: 'm', ip_restriction: { ip_policy_ids: ['ipp_1'] } },
    },
    {
      method: 'POST',
      path: '/edges/https',
      valid: {
        hostports: ['10.9.0.2:2'],
        mutual_tls: { certificate_authority_ids: ['ca_1'] },
      },
    },
    {
      method: 'PATCH',
      path: `/edges/https/${https}`,
      valid: { tls_termination: { min_version: '1.2' } },
    },
    {
      method: 'POST',
      path: `/edges/https/${https}/routes`,
      valid: {
        match_type: 'path_prefix',
        match: '/x',
        circuit_breaker: {
          tripped_duration: 10,
          rolling_window: 10,
          volume_threshold: 20,
          num_buckets: 5,
          error_threshold_percentage: 0.5,
        },
      },
    },
    {
      method: 'PATCH',
      path: r,
      valid: {
        oauth: {
          provider: {
            github: { client_id: 'a', client_secret: 'b', scopes: ['s'], teams: ['o/t'] },
          },
        },
      },
    },
    { method: 'PUT', path: `${r}/saml`, valid: { idp_metadata: '<x/>', authorized_groups: ['g'] } },
    { method: 'PUT', path: `${r}/response_headers`, valid: { add: { 'X-A': 'b' }, remove: ['y'] } },
    { method: 'PUT', path: `${r}/webhook_verification`, valid: { provider: 'slack', secret: 's' } },
    { method: 'PUT', path: `${r}/user_agent_filter`, valid: { allow: ['a.*'] } },
    { method: 'POST', path: '/bot_users', valid: { name: 'x', active: false } },
    { method: 'PATCH', path: `/bot_users/${bot}`, valid: { active: true } },
  ];
});
afterAll(async () => {
  await server.close();
});

async function expectWellFormed(method: string, path: string, raw: string): Promise<void> {
  const r = await call(method, path, undefined, { raw });
  expect(
    r.status,
    `${method} ${path} ${raw.slice(0, 200)} -> ${r.text.slice(0, 300)}`,
  ).toBeLessThan(500);
  if (r.status >= 400) {
    expect(r.json).toMatchObject({ status_code: r.status, msg: expect.any(String) });
    expect(r.json.error_code).toMatch(/^ERR_SVC_\d+$/);
  } else {
    expect(r.json).toBeTypeOf('object');
  }
}

const target = () =>
  fc.integer({ min: 0, max: 11 }).map((i) => targets[i] as (typeof targets)[number]);

it('random JSON values never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(target(), fc.jsonValue({ maxDepth: 4 }), async (t, value) => {
      await expectWellFormed(t.method, t.path, JSON.stringify(value) ?? 'null');
    }),
    { numRuns: 150 },
  );
});

it('random text never produces a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(target(), fc.string({ unit: 'binary', maxLength: 200 }), async (t, text) => {
      await expectWellFormed(t.method, t.path, text);
    }),
    { numRuns: 100 },
  );
});

/** Replaces the value at a random path of `value` with `replacement`. */
function mutate(value: unknown, choice: number, replacement: unknown): unknown {
  if (value === null || typeof value !== 'object') return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0 || choice % 5 === 0) return replacement;
  const key = keys[choice % keys.length] as string;
  const copy: Record<string, unknown> = Array.isArray(value) ? ([...value] as never) : { ...value };
  copy[key] = mutate((value as Record<string, unknown>)[key], Math.floor(choice / 7), replacement);
  return copy;
}

it('valid bodies with one value replaced never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(
      target(),
      fc.nat(),
      fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(
          '__proto__',
          'constructor',
          '',
          '\u0000',
          'é'.repeat(300),
          -1,
          2 ** 32,
          1e308,
          0.5,
        ),
      ),
      async (t, choice, replacement) => {
        const body = mutate(t.valid, choice + 1, replacement);
        await expectWellFormed(t.method, t.path, JSON.stringify(body) ?? 'null');
      },
    ),
    { numRuns: 250 },
  );
});

it('deeply nested and prototype-named bodies are refused cleanly', async () => {
  const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
  await expectWellFormed('POST', '/edges/tls', deep);
  await expectWellFormed('POST', '/bot_users', '{"__proto__":{"name":"x"},"name":"y"}');
  await expectWellFormed('POST', '/bot_users', '{"constructor":{"prototype":{}}}');
});
