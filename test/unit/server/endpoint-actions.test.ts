/**
 * Every documented action on the local server (policy-actions.md, section 2, with section 0's
 * decisions), table-driven: per action, configs the service takes are accepted and each config
 * it refuses is refused with its 22xx code and the path of the field inside the document; where
 * `${...}` may stand, a template is taken (and one that is not CEL refused with 2224), and
 * elsewhere it is refused (2204).
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ACTION_TYPES, ACTIONS, POLICY_LIMITS } from '../../../src/hosted/policy-actions.js';
import { ACTION_RULES, actionSpec } from '../../../src/server/endpoints/actions.js';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import { policyViolations } from '../../../src/server/endpoints/policy.js';
import { type Config, ACTION_CASES as ROWS } from '../../helpers/policy-action-cases.js';

/** A policy of an https endpoint with the action in `phase`, its request phase ending in deny. */
function policy(type: string, phase: string, config: Config): string {
  const rule = { expressions: ['true'], actions: [{ type, config }] };
  const last = { actions: [{ type: 'deny' }] };
  const doc =
    phase === 'on_http_request'
      ? { on_http_request: [rule, last] }
      : { [phase]: [rule], on_http_request: [last] };
  return stringify(doc);
}

const valid = ROWS.flatMap((row) => row.valid.map((config) => ({ ...row, config })));
const invalid = ROWS.flatMap((row) =>
  row.invalid.map(([config, code, field]) => ({ ...row, config, code, field })),
);
const ctx = { scheme: 'https', internal: false };
const shown = (c: Config) => JSON.stringify(c).slice(0, 60);

describe('each documented action, on the server', () => {
  it.each(valid.map((c) => ({ ...c, shown: shown(c.config) })))(
    '$type takes $shown',
    ({ type, phase, config }) => {
      expect(policyViolations(policy(type, phase, config), ctx)).toEqual([]);
    },
  );

  it.each(invalid.map((c) => ({ ...c, shown: shown(c.config) })))(
    '$type refuses $shown with $code',
    ({ type, phase, config, code, field }) => {
      const found = policyViolations(policy(type, phase, config), ctx);
      const at = `${phase}[0].actions[0].config${field}`;
      expect(found[0], JSON.stringify(found)).toMatchObject({ code, path: at });
    },
  );
});

describe('what the service refuses besides the fields', () => {
  it('close-connection is not an on_http_response action (2202)', () => {
    const text = policy('close-connection', 'on_http_response', {});
    expect(policyViolations(text, ctx)[0]?.code).toBe(CODE.actionPhase);
  });

  it('on_tcp_connect on an internal https endpoint is 2262; on a public one it runs', () => {
    const doc = stringify({
      on_tcp_connect: [{ actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }] }],
      on_http_request: [{ actions: [{ type: 'deny' }] }],
    });
    expect(policyViolations(doc, { scheme: 'https', internal: true })[0]?.code).toBe(
      CODE.internalTcpConnect,
    );
    expect(policyViolations(doc, ctx)).toEqual([]);
  });

  it('an http phase on a tcp endpoint is 2230', () => {
    const doc = stringify({
      on_tcp_connect: [{ actions: [{ type: 'deny' }] }],
      on_http_response: [{ actions: [{ type: 'log', config: { metadata: { a: 1 } } }] }],
    });
    expect(policyViolations(doc, { scheme: 'tcp', internal: false })[0]?.code).toBe(
      CODE.phaseProtocol,
    );
  });

  it('two ai-gateway actions are 2266', () => {
    const gw = { type: 'ai-gateway', config: { on_error: 'continue' } };
    const doc = stringify({
      on_http_request: [
        { expressions: ['true'], actions: [gw] },
        { actions: [gw, { type: 'deny' }] },
      ],
    });
    expect(policyViolations(doc, ctx).map((v) => v.code)).toContain(CODE.severalGateways);
  });

  it('redirect does not end the phase: a policy ending in it is 2235', () => {
    const doc = stringify({
      on_http_request: [
        { actions: [{ type: 'redirect', config: { to: 'https://x.example.com' } }] },
      ],
    });
    expect(policyViolations(doc, ctx)[0]?.code).toBe(CODE.notTerminated);
  });

  it.each([
    ['oidc', 'openid-connect'],
    ['webhook-validation', 'verify-webhook'],
    ['ip-restriction', 'restrict-ips'],
  ])('%s is unknown (2201), naming %s', (type, meant) => {
    const found = policyViolations(policy(type, 'on_http_request', {}), ctx);
    expect(found[0]).toMatchObject({ code: CODE.unknownAction });
    expect(found[0]?.message).toContain(`did you mean ${meant}?`);
  });
});

describe("the oracle's policy: facts imported, rules its own", () => {
  it('states its own config rules for every action type of the table, and for no other', () => {
    expect(Object.keys(ACTION_RULES)).toEqual(ACTION_TYPES);
  });

  it("reads each action's phases and whether it ends its phase from the table", () => {
    for (const type of ACTION_TYPES) {
      expect(actionSpec(type)?.phases, type).toBe(ACTIONS[type]?.phases);
      expect(actionSpec(type)?.terminating, type).toBe(ACTIONS[type]?.terminating);
    }
    expect(actionSpec('constructor')).toBeUndefined();
  });

  it("judges a bound by the table's value", () => {
    const headers = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, 'v']));
    const max = POLICY_LIMITS.headersPerAction;
    const at = (n: number) =>
      policyViolations(policy('add-headers', 'on_http_request', { headers: headers(n) }), ctx);
    expect(at(max)).toEqual([]);
    expect(at(max + 1)[0]?.code).toBe(CODE.tooManyHeaders);
  });
});
