import { describe, expect, it } from 'vitest';
import {
  authorize,
  type ControlAccess,
  controlPolicy,
  controlTokenProblem,
  crossSiteRefusal,
  isLoopbackHost,
} from '../../../src/daemon/control.js';

const TOKEN = 'a-long-enough-control-token';

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.3.2.1', true],
    ['localhost', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.7', false],
    ['128.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['fe80::1%eth0', false],
    ['metrics.internal', false],
  ])('%s -> %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('controlPolicy', () => {
  it('turns the POSTs off on a non-loopback listener without a token, and says why', () => {
    const policy = controlPolicy({ host: '0.0.0.0', port: 9090 }, undefined, undefined);
    expect(policy.main.kind).toBe('off');
    expect(policy.warning).toMatch(/are off: the listener 0\.0\.0\.0:9090 is not loopback-only/);
    expect(policy.warning).toMatch(/--control-token-file.*EDGESYNC_CONTROL_TOKEN.*--admin-listen/);
  });

  it('keeps them open on a loopback listener (the default 127.0.0.1:9090)', () => {
    const policy = controlPolicy({ host: '127.0.0.1', port: 9090 }, undefined, undefined);
    expect(policy.main).toEqual({ kind: 'open' });
    expect(policy.warning).toBeUndefined();
  });

  it('requires the token on the main listener whatever its address', () => {
    for (const host of ['0.0.0.0', '127.0.0.1']) {
      const policy = controlPolicy({ host, port: 9090 }, TOKEN, undefined);
      expect(policy.main.kind).toBe('token');
      expect(policy.warning).toBeUndefined();
    }
  });

  it('serves them on the admin listener only when one is given without a token', () => {
    const policy = controlPolicy({ host: '0.0.0.0', port: 9090 }, undefined, {
      host: '127.0.0.1',
      port: 9091,
    });
    expect(policy.main.kind).toBe('off');
    expect(policy.admin).toEqual({ kind: 'open' });
    expect(policy.warning).toBeUndefined();
  });

  it('never keeps the token itself, only its digest', () => {
    const policy = controlPolicy({ host: '0.0.0.0', port: 1 }, TOKEN, undefined);
    expect(JSON.stringify(policy)).not.toContain(TOKEN);
  });
});

describe('authorize', () => {
  const token = controlPolicy({ host: '0.0.0.0', port: 1 }, TOKEN, undefined).main;
  it.each([
    [undefined, 401],
    ['', 401],
    [`Basic ${TOKEN}`, 401],
    ['Bearer', 401],
    ['Bearer wrong-token-of-some-length', 401],
    [`Bearer ${TOKEN}x`, 401],
    [`Bearer ${TOKEN.slice(0, -1)}`, 401],
  ])('refuses %j with %i', (header, status) => {
    expect(authorize(token, header)).toMatchObject({ ok: false, status });
  });

  it.each([`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `Bearer  ${TOKEN} `])('accepts %j', (header) => {
    expect(authorize(token, header)).toEqual({ ok: true });
  });

  it('answers 403 where the endpoints are off, token or not', () => {
    const off = controlPolicy({ host: '::', port: 1 }, undefined, undefined).main;
    expect(authorize(off, `Bearer ${TOKEN}`)).toMatchObject({ ok: false, status: 403 });
  });
});

describe('controlTokenProblem', () => {
  it.each([
    ['short', true],
    ['sixteen-chars-ok', false],
    ['has a space in the middle', true],
    [TOKEN, false],
  ])('%j refused: %s', (token, refused) => {
    expect(controlTokenProblem(token) !== undefined).toBe(refused);
  });
});

describe('crossSiteRefusal', () => {
  const open: ControlAccess = { kind: 'open' };
  const token = controlPolicy({ host: '0.0.0.0', port: 9090 }, TOKEN, undefined).main;
  const local = { host: '127.0.0.1:9090' };

  it.each([
    ['curl, git-sync and the CLI (no Origin, no body)', local],
    ['localhost', { host: 'localhost:9090' }],
    ['IPv6 loopback', { host: '[::1]:9090' }],
    ['an HTTP/1.0 request without Host', {}],
    ['a JSON body', { ...local, 'content-type': 'application/json', 'content-length': '2' }],
    ['a JSON type with a charset', { ...local, 'content-type': 'application/json; charset=utf-8' }],
    ['a page served by this listener', { ...local, origin: 'http://127.0.0.1:9090' }],
  ])('lets through %s', (_, headers) => {
    expect(crossSiteRefusal(open, headers)).toBeUndefined();
  });

  it.each([
    ['a foreign Origin', { ...local, origin: 'https://evil.example' }, 403, /cross-site/],
    ['Origin null', { ...local, origin: 'null' }, 403, /cross-site/],
    ['an Origin on another port', { ...local, origin: 'http://127.0.0.1:8080' }, 403, /cross-site/],
    ['a rebound Host', { host: 'evil.example:9090' }, 403, /DNS-rebinding/],
    [
      'a rebound Host with its own Origin',
      { host: 'evil.example:9090', origin: 'http://evil.example:9090' },
      403,
      /DNS-rebinding/,
    ],
    ['a Host with user info', { host: 'x@127.0.0.1:9090' }, 403, /not a host name/],
    [
      'a text/plain body',
      { ...local, 'content-type': 'text/plain', 'content-length': '2' },
      415,
      /empty body or a JSON one/,
    ],
    [
      'a form body',
      { ...local, 'content-type': 'application/x-www-form-urlencoded', 'content-length': '3' },
      415,
      /empty body or a JSON one/,
    ],
    ['a body without a type', { ...local, 'content-length': '5' }, 415, /JSON/],
    ['a chunked body without a type', { ...local, 'transfer-encoding': 'chunked' }, 415, /JSON/],
  ])('refuses %s', (_, headers, status, error) => {
    const verdict = crossSiteRefusal(open, headers);
    expect(verdict).toMatchObject({ ok: false, status });
    expect(verdict?.ok === false && verdict.error).toMatch(error);
  });

  it('does not check Host where a token is required (a Service name), but still Origin and body', () => {
    expect(crossSiteRefusal(token, { host: 'edgesync.ops.svc:9090' })).toBeUndefined();
    expect(
      crossSiteRefusal(token, { host: 'edgesync.ops.svc:9090', origin: 'https://evil.example' }),
    ).toMatchObject({ status: 403 });
    expect(
      crossSiteRefusal(token, { host: 'edgesync.ops.svc:9090', 'content-type': 'text/plain' }),
    ).toMatchObject({ status: 415 });
  });
});
