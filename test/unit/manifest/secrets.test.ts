import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import {
  createValueMask,
  isSecretField,
  liveSecretValues,
  maskJson,
  maskValues,
  sensitiveValues,
} from '../../../src/manifest/secrets.js';
import { buildFrom } from './helpers.js';

describe('values read from env or file', () => {
  const built = buildFrom(
    {
      'a.yaml': [
        'kind: HTTPSEdge',
        'name: { env: EDGE_NAME }',
        'hostports: [{ file: hp.txt }]',
        'routes:',
        '  - match_type: path_prefix',
        '    match: /',
        '    request_headers: { add: { X-Key: { env: KEY } } }',
        '',
      ].join('\n'),
      'b.yaml': 'kind: BotUser\nname: ci\n',
    },
    {
      env: { EDGE_NAME: 'hidden-shop', KEY: 'k3y-value' },
      refFiles: { 'hp.txt': 'hidden.example.com:443\n' },
    },
  );

  it('are collected from every field, the name included', () => {
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(sensitiveValues(built.set).sort()).toEqual([
      'hidden-shop',
      'hidden.example.com:443',
      'k3y-value',
    ]);
  });

  it('are masked in text, in any case and JSON-escaped, longest first', () => {
    const values = ['hidden-shop', 'hidden', 'a"quoted"b', 'abc'];
    expect(maskValues('https_edge.hidden-shop, HIDDEN, abc', values)).toBe(
      'https_edge.(sensitive), (sensitive), abc',
    );
    expect(maskValues(JSON.stringify({ v: 'a"quoted"b' }), values)).toBe('{"v":"(sensitive)"}');
    expect(maskValues('nothing', [])).toBe('nothing');
  });

  it('one list masks many texts alike (its pattern is built once), another list its own', () => {
    const values = Array.from({ length: 10_000 }, (_, i) => `secret-${i}-value`);
    for (let line = 0; line < 1000; line++) {
      expect(maskValues(`line ${line}: secret-${line}-value, SECRET-${line}-VALUE`, values)).toBe(
        `line ${line}: (sensitive), (sensitive)`,
      );
    }
    expect(maskValues('secret-1-value other-value', ['other-value'])).toBe(
      'secret-1-value (sensitive)',
    );
  });

  it('are masked in JSON string by string, the kept subtrees aside', () => {
    const text = JSON.stringify({ address: 'tls_edge.beef', fingerprint: { live: 'xxbeefxx' } });
    expect(JSON.parse(maskJson(text, ['beef'], ['fingerprint']))).toEqual({
      address: 'tls_edge.(sensitive)',
      fingerprint: { live: 'xxbeefxx' },
    });
  });

  it('are masked in log lines once the mask knows them', () => {
    let out = '';
    const destination = new Writable({
      write(chunk, _enc, cb) {
        out += String(chunk);
        cb();
      },
    });
    const mask = createValueMask();
    const logger = createLogger({ destination, mask: mask.apply });
    mask.set(['hidden-shop']);
    logger.info({ address: 'https_edge.hidden-shop' }, 'created hidden-shop');
    expect(out).not.toContain('hidden-shop');
    expect(JSON.parse(out)).toMatchObject({
      address: 'https_edge.(sensitive)',
      msg: 'created (sensitive)',
    });
  });
});

describe('secret fields by definition, on either side', () => {
  it.each([
    [['oauth', 'provider', 'google', 'client_secret'], true],
    [['routes', 0, 'oidc', 'client_secret'], true],
    [['webhook_verification', 'secret'], true],
    [['request_headers', 'add', 'Authorization'], true],
    [['response_headers', 'add', 'set-cookie'], true],
    [['request_headers', 'add', 'X-Api-Key'], true],
    [['request_headers', 'add', 'X-Trace'], false],
    [['request_headers', 'remove'], false],
    [['oauth', 'provider', 'google', 'client_id'], false],
    [['description'], false],
    // A traffic policy action's config: the action table's secret fields.
    [['traffic_policy', 'on_http_request', 0, 'actions', 1, 'config', 'secret'], true],
    [['traffic_policy', 'on_tcp_connect', 0, 'actions', 0, 'config', 'server_private_key'], true],
    [['on_http_request', 2, 'actions', 0, 'config', 'client_secret'], true],
    [['traffic_policy', 'on_tcp_connect', 0, 'actions', 0, 'config', 'server_certificate'], false],
    [['traffic_policy', 'on_http_request', 0, 'actions', 1, 'config', 'provider'], false],
    // A policy action's header map (add-headers, custom-response): the edges' credential rule.
    [
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'headers', 'authorization'],
      true,
    ],
    [
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'headers', 'x-api-key'],
      true,
    ],
    [['on_http_response', 1, 'actions', 2, 'config', 'headers', 'Set-Cookie'], true],
    [['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'headers', 'x-trace'], false],
    // remove-headers lists names: a name is no value.
    [['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'headers', 0], false],
    // Not under an action's config: an edge route's own `headers` is nothing of the kind.
    [['traffic_policy', 'headers', 'authorization'], false],
  ] as const)('%j: %s', (path, secret) => {
    expect(isSecretField(path)).toBe(secret);
  });

  it('collects a live policy’s credential header values, not the others', () => {
    const policy = [
      'on_http_request:',
      '  - actions:',
      '      - type: add-headers',
      '        config: { headers: { authorization: Bearer live-policy-token, x-trace: on-trace } }',
      '      - type: custom-response',
      '        config: { status_code: 200, headers: { x-auth-token: live-response-token } }',
    ].join('\n');
    expect(
      liveSecretValues({ httpsEdges: [], cloudEndpoints: [{ traffic_policy: policy }] }).sort(),
    ).toEqual(['Bearer live-policy-token', 'live-response-token']);
  });

  it('collects the live routes’ secret values (a header set by hand included)', () => {
    const route = {
      request_headers: { add: { authorization: 'Bearer live-token-1', 'x-trace': 'on-trace' } },
      oidc: { client_id: 'cid-value', client_secret: 'oidc-live-secret' },
      webhook_verification: { provider: 'stripe', secret: 'whsec-live' },
    };
    expect(liveSecretValues({ httpsEdges: [{ routes: [route] }] }).sort()).toEqual([
      'Bearer live-token-1',
      'oidc-live-secret',
      'whsec-live',
    ]);
  });
});
