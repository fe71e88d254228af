/**
 * `validate` on every documented action, from the same table as the local server's test
 * (test/helpers/policy-action-cases.ts): a config the service takes passes the manifest
 * pipeline, and one it refuses is a located error naming the field. Also the service's
 * refusals beyond a field (an action's phases, on_tcp_connect on an internal endpoint, the
 * documented misnames of types) and the table's own facts (28 types, terminating column).
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ACTION_TYPES, ACTIONS } from '../../../src/hosted/policy-actions.js';
import { isSecretField } from '../../../src/manifest/secrets.js';
import { ACTION_CASES, type Config } from '../../helpers/policy-action-cases.js';
import { buildFrom, errorLines } from './helpers.js';

function manifest(type: string, phase: string, config: Config, url = 'https://app.example.com') {
  const rule = { expressions: ['true'], actions: [{ type, config }] };
  const last = { actions: [{ type: 'deny' }] };
  const policy =
    phase === 'on_http_request'
      ? { on_http_request: [rule, last] }
      : { [phase]: [rule], on_http_request: [last] };
  return stringify({ kind: 'CloudEndpoint', name: 'ep', url, traffic_policy: policy });
}

const shown = (c: Config) => JSON.stringify(c).slice(0, 60);
const valid = ACTION_CASES.flatMap((row) =>
  row.valid.map((config) => ({ ...row, config, shown: shown(config) })),
);
const invalid = ACTION_CASES.flatMap((row) =>
  row.invalid.map(([config, , field]) => ({ ...row, config, field, shown: shown(config) })),
);

describe('each documented action in validate', () => {
  it.each(valid)('$type takes $shown', ({ type, phase, config }) => {
    const built = buildFrom({ 'ep.yaml': manifest(type, phase, config) });
    expect(errorLines(built)).toEqual([]);
  });

  it.each(invalid)('$type refuses $shown', ({ type, phase, config, field }) => {
    const built = buildFrom({ 'ep.yaml': manifest(type, phase, config) });
    const at = `traffic_policy.${phase}[0].actions[0].config${field}`;
    expect(built.ok).toBe(false);
    expect(errorLines(built).join('\n')).toContain(at);
  });
});

describe('the action table', () => {
  it('has the 28 documented types', () => {
    expect(ACTION_TYPES).toHaveLength(28);
    expect(ACTION_TYPES).toEqual(
      expect.arrayContaining(['rate-limit', 'sse-find-replace', 'ai-gateway']),
    );
  });

  it('ends the phase with deny, custom-response, close-connection, forward-internal and ai-gateway unless on_error: continue; redirect does not', () => {
    const ends = Object.entries(ACTIONS)
      .filter(([, spec]) => spec.terminating({}))
      .map(([type]) => type)
      .sort();
    expect(ends).toEqual([
      'ai-gateway',
      'close-connection',
      'custom-response',
      'deny',
      'forward-internal',
    ]);
    expect(ACTIONS['forward-internal']?.terminating({ on_error: 'continue' })).toBe(false);
  });
});

describe('what the service refuses besides the fields', () => {
  it('close-connection in on_http_response', () => {
    const built = buildFrom({ 'ep.yaml': manifest('close-connection', 'on_http_response', {}) });
    expect(errorLines(built).join('\n')).toContain(
      'close-connection cannot run in on_http_response',
    );
  });

  it('on_tcp_connect on an internal https endpoint, not on a public one', () => {
    const text = (url: string) =>
      stringify({
        kind: 'CloudEndpoint',
        name: 'ep',
        url,
        traffic_policy: {
          on_tcp_connect: [
            { actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }] },
          ],
          on_http_request: [{ actions: [{ type: 'deny' }] }],
        },
      });
    expect(errorLines(buildFrom({ 'ep.yaml': text('https://api.internal') })).join('\n')).toContain(
      'traffic_policy.on_tcp_connect: an internal https endpoint has no on_tcp_connect phase',
    );
    expect(errorLines(buildFrom({ 'ep.yaml': text('https://api.example.com') }))).toEqual([]);
  });

  it.each([
    ['oidc', 'openid-connect'],
    ['webhook-validation', 'verify-webhook'],
    ['ip-restriction', 'restrict-ips'],
  ])('%s is an unknown type that names %s', (type, meant) => {
    const built = buildFrom({ 'ep.yaml': manifest(type, 'on_http_request', {}) });
    expect(errorLines(built).join('\n')).toContain(`did you mean ${meant}?`);
  });
});

describe('secrets inside the new actions', () => {
  const config = ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config'];
  it.each([
    [[...config, 'credentials', 0], true],
    [[...config, 'providers', 0, 'api_keys', 0, 'value'], true],
    [[...config, 'secret'], true],
    [[...config, 'metadata', 'route'], false],
    [[...config, 'replacements', 0, 'to'], false],
  ] as const)('%j is a secret: %s', (path, secret) => {
    expect(isSecretField(path)).toBe(secret);
  });
});

describe('alias fields', () => {
  it("openid-connect's idle_session_timeout is sent as idle_session_duration", () => {
    const built = buildFrom({
      'ep.yaml': manifest('openid-connect', 'on_http_request', {
        issuer_url: 'https://id.example.com',
        idle_session_timeout: '1h',
      }),
    });
    expect(errorLines(built)).toEqual([]);
    const policy = JSON.stringify(built.ok ? built.set.cloudEndpoints[0]?.traffic_policy : null);
    expect(policy).toContain('"idle_session_duration":"1h"');
    expect(policy).not.toContain('idle_session_timeout');
  });
});
