/**
 * Property tests for cloud endpoints: no body, policy document or filter, however malformed,
 * gets a 5xx or a non-JSON answer. Random JSON bodies, valid bodies and valid policies with one
 * value replaced by random JSON, and random filters; every answer is a 2xx or a 4xx with the
 * API's error body.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

/** `${expr}` as a policy writes it (not a JavaScript template). */
const interp = (expr: string) => `$${'{'}${expr}}`;

const POLICY = {
  on_tcp_connect: [{ actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }] }],
  on_http_request: [
    {
      name: 'r',
      expressions: ["req.url.path.startsWith('/a')"],
      actions: [
        { type: 'oauth', config: { provider: 'google', idle_session_timeout: '15m' } },
        { type: 'add-headers', config: { headers: { 'x-ip': interp('conn.client_ip') } } },
        { type: 'circuit-breaker', config: { error_threshold: 0.5, window_duration: '10s' } },
      ],
    },
    { actions: [{ type: 'forward-internal', config: { url: 'https://web.internal' } }] },
  ],
  on_http_response: [
    { actions: [{ type: 'compress-response', config: { algorithms: ['gzip'] } }] },
  ],
};

let server: RunningServer & { apiKey: string };
let call: Call;
let id: string;
let n = 0;

beforeAll(async () => {
  server = await startTestServer({ agentEndpoints: [{ url: 'https://agent.example.com' }] });
  call = clientFor(server, server.apiKey);
  const r = await call('POST', '/endpoints', {
    url: 'https://fuzz.example.com',
    traffic_policy: JSON.stringify(POLICY),
  });
  expect(r.status, r.text).toBe(201);
  id = r.json.id;
});
afterAll(async () => {
  await server.close();
});

async function expectWellFormed(method: string, path: string, raw?: string): Promise<number> {
  const r = await call(method, path, undefined, raw === undefined ? {} : { raw });
  const shown = `${method} ${path} ${(raw ?? '').slice(0, 300)} -> ${r.text.slice(0, 300)}`;
  expect(r.status, shown).toBeLessThan(500);
  if (r.status >= 400) {
    expect(r.json, shown).toMatchObject({ status_code: r.status, msg: expect.any(String) });
    expect(r.json.error_code, shown).toMatch(/^ERR_SVC_\d+$|^invalid_cel_expression$/);
  } else if (r.status !== 204) {
    expect(r.json).toBeTypeOf('object');
  }
  return r.status;
}

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

const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    '',
    interp('').slice(0, 2),
    interp(')'),
    'é'.repeat(300),
    -1,
    1e308,
    0.5,
  ),
);

it('random JSON bodies never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(fc.boolean(), fc.jsonValue({ maxDepth: 4 }), async (create, value) => {
      const [method, path] = create ? ['POST', '/endpoints'] : ['PATCH', `/endpoints/${id}`];
      await expectWellFormed(method, path, JSON.stringify(value) ?? 'null');
    }),
    { numRuns: 100 },
  );
});

it('valid policies with one value replaced never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(fc.nat(), replacement, fc.boolean(), async (choice, value, yamlText) => {
      const policy = mutate(POLICY, choice + 1, value);
      const text = yamlText
        ? JSON.stringify(policy, null, 2).replace(/^\{\n|\n\}$/g, '')
        : JSON.stringify(policy);
      const body = { url: `https://f${++n}.example.com`, traffic_policy: text };
      await expectWellFormed('POST', '/endpoints', JSON.stringify(body));
    }),
    { numRuns: 200 },
  );
});

it('valid bodies with one value replaced never produce a 5xx', async () => {
  const valid = {
    url: 'https://v.example.com',
    traffic_policy: JSON.stringify(POLICY),
    bindings: ['public'],
    pooling_enabled: true,
    description: 'd',
    metadata: 'm',
  };
  await fc.assert(
    fc.asyncProperty(fc.nat(), replacement, fc.boolean(), async (choice, value, create) => {
      const body = mutate(valid, choice + 1, value);
      const [method, path] = create ? ['POST', '/endpoints'] : ['PATCH', `/endpoints/${id}`];
      await expectWellFormed(method, path, JSON.stringify(body) ?? 'null');
    }),
    { numRuns: 150 },
  );
});

it('random filters never produce a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string({ maxLength: 60 }),
        fc.constantFrom(
          'obj.',
          'obj.type.size()',
          'obj.bindings[5]',
          '1/0 == 1',
          'obj.port / 0 > 1',
          'obj.x.y.z',
        ),
      ),
      async (filter) => {
        await expectWellFormed('GET', `/endpoints?filter=${encodeURIComponent(filter)}`);
      },
    ),
    { numRuns: 150 },
  );
});
