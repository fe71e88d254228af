/**
 * The service's CEL environment: the documented variables, fields and functions check; unknown
 * names, wrong types and bounds are refused with the offset of the offending token; bounds are
 * checked on the text before any parser runs.
 */
import { describe, expect, it } from 'vitest';
import {
  CEL_LIMITS,
  celBoundIssue,
  checkCel,
  checkInterpolations,
  createCelEnvironment,
  interpolations,
} from '../../../src/hosted/cel.js';

describe('checkCel', () => {
  it.each([
    "req.url.path.startsWith('/api')",
    "req.url == 'https://a.example.com/'",
    "req.url.startsWith('https')",
    "'x' == req.url",
    "conn.client_ip == '1.2.3.4' || inCidrRange(conn.client_ip, '10.0.0.0/8')",
    "conn.client_ip.categories.exists(c, c.startsWith('proxy'))",
    'conn.client_ip.geo.location.is_eu',
    "conn.tls.client.subject.common_name == 'x' && conn.tls.client.subject != 'y'",
    "actions.svc.oauth.identity.email.endsWith('@example.com')",
    "hasReqHeader('user-agent') ? getReqHeader('user-agent').exists(ua, ua.matches('bot')) : true",
    'timestamp(time.now).getHours() >= 9',
    "vars.tier == 'gold'",
    "req.cookies['session'][0].value != ''",
    "res.cookies['a'][0].max_age > duration('60s')",
    "size(req.url.query_params['q']) > 0",
    "secrets.get('vault', 'name').size() > 0",
    "base64.decode('eA==').size() == 1",
    "hash.sha256('x', 'hex') != ''",
    "'x'.sha256() != '' && 'x'.lower() == 'x'",
    "req.url.path in ['/a', '/b']",
    'req.user_agent.is_bot || req.user_agent.is_mobile',
    'res.status_code >= 500 && endpoint.port == 443',
    "json.decode('{}').a == 1",
    '[3, 1, 2].sort().distinct().size() == 3',
  ])('accepts %s', (expr) => {
    expect(checkCel(expr, 'bool')).toEqual([]);
  });

  it.each([
    // [expression, offset of the offending token, message start]
    ["req.url.pathh == '/'", 8, 'No such key: pathh'],
    ["request.path == '/'", 0, 'Unknown variable: request'],
    ["req.path == '/'", 4, 'No such key: path'],
    ["1 + 'a'", 0, 'no such overload: int + string'],
    ['nosuch(1)', 0, "found no matching overload for 'nosuch(int)'"],
    ["'x'.includes('y')", 0, "found no matching overload for 'string.includes(string)'"],
    ["req.method == 'GET' &&", 22, 'Unexpected token: EOF'],
    ['req.url.path == )', 16, 'Unexpected token'],
    ['inCidrRange(conn.client_ip, 8)', 0, 'found no matching overload'],
  ] as const)('refuses %s at offset %i', (expr, offset, message) => {
    const issues = checkCel(expr);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.offset).toBe(offset);
    expect(issues[0]?.message.startsWith(message), issues[0]?.message).toBe(true);
  });

  it('wants a bool from a rule expression', () => {
    expect(checkCel('req.url.path', 'bool')).toEqual([
      { offset: 0, message: 'the expression is a string, not a bool' },
    ]);
    expect(checkCel('req.url.path')).toEqual([]);
  });

  it('never quotes the whole expression (no code frame in the message)', () => {
    const [issue] = checkCel("req.url.pathh == 'secret-looking-text'");
    expect(issue?.message).not.toContain('secret-looking-text');
    expect(issue?.message).not.toContain('\n');
  });
});

describe('the bounds, before parsing', () => {
  it('refuses an expression longer than the limit, at the limit', () => {
    const long = `req.url.path == '${'a'.repeat(CEL_LIMITS.maxLength)}'`;
    expect(celBoundIssue(long)).toEqual({
      offset: CEL_LIMITS.maxLength,
      message: `expression is ${long.length} characters long; at most ${CEL_LIMITS.maxLength} are allowed`,
    });
  });

  it.each([
    ['brackets', '('.repeat(CEL_LIMITS.maxNesting + 1)],
    ['unclosed (-(-', '(-'.repeat(400)],
    ['a unary chain', `${'!'.repeat(CEL_LIMITS.maxNesting + 1)}true`],
    ['lists', '['.repeat(CEL_LIMITS.maxNesting + 1)],
  ])('refuses %s nested deeper than the limit', (_what, text) => {
    expect(celBoundIssue(text)?.message).toBe(
      `expression nests deeper than ${CEL_LIMITS.maxNesting} levels`,
    );
    expect(checkCel(text)).toHaveLength(1);
  });

  it('counts neither brackets inside string literals nor != as nesting', () => {
    const brackets = `'${'('.repeat(100)}' == req.url.path`;
    expect(celBoundIssue(brackets)).toBeUndefined();
    const inequalities = Array.from({ length: 40 }, () => 'req.method != "x"').join(' && ');
    expect(celBoundIssue(inequalities)).toBeUndefined();
    expect(checkCel(inequalities)).toEqual([]);
  });

  it('keeps the pathological input cheap: 20 unclosed (-(-(- expressions under 50 ms', () => {
    const started = performance.now();
    for (let i = 0; i < 20; i++) checkCel(`${'(-'.repeat(350)}1`);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('bounds a list literal inside the limits too', () => {
    const list = `req.url.path in [${Array.from({ length: CEL_LIMITS.maxLiteralElements + 1 }, (_, i) => `'${i}'`).join(',')}]`;
    expect(list.length).toBeLessThan(CEL_LIMITS.maxLength);
    expect(checkCel(list)).toHaveLength(1);
  });
});

/** `${expr}`, written so that no string in this file looks like a template placeholder. */
const interp = (expr: string) => `$${'{'}${expr}}`;

describe('interpolations', () => {
  it('finds each interpolation with its offset, skipping braces of map literals and strings', () => {
    expect(interpolations(`a ${interp(' {"k": "}"}["k"] ')} b ${interp('x')}`)).toEqual({
      exprs: [
        { expr: ' {"k": "}"}["k"] ', offset: 4 },
        { expr: 'x', offset: 27 },
      ],
    });
    expect(interpolations(`x ${interp('req.host').slice(0, -1)}`)).toEqual({ unterminated: 2 });
  });

  it('checks each interpolation and reports every error, at offsets into the value', () => {
    const value = `${interp('req.host')} and ${interp('req.hostt')} and ${interp('1 + "a"')}`;
    expect(checkInterpolations(value)).toEqual([
      { offset: 22, message: 'No such key: hostt' },
      { offset: 35, message: 'no such overload: int + string' },
    ]);
  });
});

describe('createCelEnvironment', () => {
  it('evaluates with the implementations it is given, and names a missing one', () => {
    const env = createCelEnvironment({
      'hasReqHeader(string): bool': (name: string) => name === 'x-a',
    });
    expect(env.evaluate("hasReqHeader('x-a')", {})).toBe(true);
    expect(() => env.evaluate("hasResHeader('x-a')", {})).toThrow(/hasResHeader/);
  });
});

describe('names that are both a string and a parent of fields', () => {
  it.each([
    "conn.client_ip in ['10.0.0.1', '10.0.0.2']",
    "conn.client_ip in {'10.0.0.1': true}",
    "req.url < 'z' && req.url + '/x' != ''",
    "size(req.url) > 0 && req.user_agent.contains('bot')",
  ])('accepts %s', (expr) => {
    expect(checkCel(expr, 'bool')).toEqual([]);
  });
});

describe('list.sortBy', () => {
  it('checks the key with the variable bound to an element, and sorts by it', () => {
    expect(checkCel("getReqHeader('x').sortBy(h, h.size()).size() > 0")).toEqual([]);
    expect(checkCel("getReqHeader('x').sortBy(h, h.nosuch()).size() > 0")).toHaveLength(1);
    const env = createCelEnvironment();
    expect(env.evaluate("['ccc', 'a', 'bb'].sortBy(s, size(s))", {})).toEqual(['a', 'bb', 'ccc']);
  });
});

it('refuses sortBy without a variable name, as an issue', () => {
  expect(checkCel("['a'].sortBy('x', 1) == ['a']")).toEqual([
    { offset: 0, message: 'sortBy(var, key): the first argument must be a name' },
  ]);
});
