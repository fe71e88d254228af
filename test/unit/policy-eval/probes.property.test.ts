/**
 * The impact preview's probes are told apart by construction (src/policy-eval/probes.ts keeps
 * no key per probe): on random pairs of policies whose guards name paths (some with a query),
 * hosts (the endpoint's own among them), methods (GET among them), headers and their values,
 * query parameters, logins and address ranges, no two probes are the same request (method, URL,
 * client address, headers, login), and there are never more than `MAX_PROBES`. Fixed seed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PROBES, probesFor } from '../../../src/policy-eval/probes.js';

const SEED = 20261130;

const GUARDS = [
  "req.url.path.startsWith('/admin')",
  "req.url.path == '/a?x=1'",
  "req.url.path.matches('^/api/v[0-9]')",
  "req.method == 'GET' || req.method == 'POST'",
  "req.host == 'app.example.com'",
  "req.host == 'other.example.com'",
  "hasQueryParam('x')",
  "getReqHeader('x-team').exists(t, t == 'ops' || t == 'edgesync-probe')",
  "req.headers['x-who'][0] == 'someone@example.com'",
  "inCidrRange(conn.client_ip, '10.0.0.0/8')",
  "conn.client_ip == '192.168.1.1'",
  "'/staff' == req.url.path",
] as const;

const ACTIONS = [
  { type: 'forward-internal', config: { url: 'https://a.internal' } },
  { type: 'deny' },
  { type: 'oauth', config: { provider: 'google' } },
  { type: 'restrict-ips', config: { allow: ['10.0.0.0/8'], deny: ['192.168.0.0/30'] } },
] as const;

const rule = fc.record({
  expressions: fc.subarray([...GUARDS], { maxLength: 3 }),
  actions: fc.array(fc.constantFrom(...ACTIONS), { minLength: 1, maxLength: 2 }),
});
const policy = fc.array(rule, { maxLength: 6 }).map((rules) => ({ on_http_request: rules }));

describe('probesFor', () => {
  it('never generates the same request twice, nor more than MAX_PROBES', () => {
    fc.assert(
      fc.property(policy, policy, (before, after) => {
        const probes = probesFor('https://app.example.com', [before, after]);
        const keys = probes.map(({ request, given }) =>
          JSON.stringify([
            request.method,
            request.url,
            request.clientIp ?? null,
            request.headers ?? null,
            given.identity ?? null,
          ]),
        );
        expect(new Set(keys).size).toBe(keys.length);
        expect(probes.length).toBeLessThanOrEqual(MAX_PROBES);
      }),
      { seed: SEED, numRuns: 400 },
    );
  }, 120_000);
});
