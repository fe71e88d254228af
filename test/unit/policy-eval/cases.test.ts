import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PolicyTestsSchema } from '../../../src/manifest/policy/tests.js';
import { failureMessage, runCase } from '../../../src/policy-eval/cases.js';

/** The form of `tests:` users write, with one case of each kind of expectation. */
const TESTS = `
- name: admin from outside is refused
  request: { method: GET, url: https://app.example.com/admin, client_ip: 203.0.113.9,
             headers: { x-team: [ops] } }
  expect: { status: 403 }
- name: the app is served
  request: { url: https://app.example.com/ }
  expect: { forward: https://app.internal }
- name: old path moves
  request: { url: https://app.example.com/old }
  expect: { redirect: https://app.example.com/new, status: 301 }
- name: staff log in
  request: { url: https://app.example.com/staff }
  expect: { auth: google }
- name: staff logged in
  request: { url: https://app.example.com/staff }
  given: { identity: { email: a@example.com } }
  expect: { forward: https://staff.internal, headers_added: { x-user: a@example.com } }
`;

const ENDPOINT = {
  url: 'https://app.example.com',
  traffic_policy: {
    on_http_request: [
      {
        name: 'office',
        expressions: ["req.url.path.startsWith('/admin')"],
        actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }],
      },
      {
        name: 'old',
        expressions: ["req.url.path == '/old'"],
        actions: [
          { type: 'redirect', config: { to: 'https://app.example.com/new', status_code: 301 } },
        ],
      },
      {
        name: 'staff',
        expressions: ["req.url.path.startsWith('/staff')"],
        actions: [
          { type: 'oauth', config: { provider: 'google' } },
          {
            type: 'add-headers',
            config: { headers: { 'X-User': `$${'{'}actions.svc.oauth.identity.email}` } },
          },
          { type: 'forward-internal', config: { url: 'https://staff.internal' } },
        ],
      },
      {
        name: 'app',
        actions: [{ type: 'forward-internal', config: { url: 'https://app.internal/' } }],
      },
    ],
  },
};

describe('policy tests', () => {
  const cases = PolicyTestsSchema.parse(parse(TESTS));

  it.each(cases.map((c) => [c.name, c] as const))('%s passes', (_name, c) => {
    const r = runCase(ENDPOINT, c);
    expect(r.passed, failureMessage(r)).toBe(true);
  });

  it('a failure names the case, what was expected, what happened and the rule', () => {
    const [first] = cases;
    const open = {
      ...ENDPOINT,
      traffic_policy: { on_http_request: ENDPOINT.traffic_policy.on_http_request.slice(1) },
    };
    expect(failureMessage(runCase(open, first!))).toBe(
      'policy test "admin from outside is refused" failed: expected status 403; got forwarded to https://app.internal/ (decided by on_http_request[2] "app" actions[0] (forward-internal))',
    );
  });

  it('refuses duplicate names and an expectation without a key, each at its place', () => {
    const bad = PolicyTestsSchema.safeParse([
      { name: 'a', request: { url: 'https://x.example.com/' }, expect: { status: 200 } },
      { name: 'a', request: { url: 'ftp://x.example.com/' }, expect: {} },
    ]);
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual(
      expect.arrayContaining([
        ['1.request.url', 'must be an absolute http:// or https:// URL'],
        ['1.expect', 'expect needs at least one key'],
      ]),
    );
  });
});
