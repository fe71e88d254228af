/** Hostile input: bounded, refused or reported, never a crash, never a polluted prototype. */
import { describe, expect, it } from 'vitest';
import { buildFrom, errorLines } from './helpers.js';

function aliasBomb(levels: number): string {
  const lines = ['kind: TLSEdge', 'name: x', 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < levels; i++) {
    lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
  }
  lines.push(`description: *a${levels - 1}`);
  return `${lines.join('\n')}\n`;
}

describe('hostile input', () => {
  it('bounds alias expansion (billion laughs)', () => {
    // Unbounded expansion would not finish within the test's timeout; speed is a benchmark's job.
    const result = buildFrom({ 'bomb.yaml': aliasBomb(9) });
    expect(errorLines(result)).toEqual([
      'bomb.yaml:1:1: too many alias expansions (limit 100): refusing a possible alias bomb',
    ]);
  });

  it.each([
    [
      'a self-referencing list',
      'kind: HTTPSEdge\nname: x\nhostports: &h [*h]\n',
      'a.yaml:3:16: recursive alias *h: it refers to the node that contains it',
    ],
    [
      'a self-referencing mapping',
      'kind: TLSEdge\nname: x\nmetadata: &m { a: *m }\n',
      'a.yaml:3:19: recursive alias *m: it refers to the node that contains it',
    ],
    [
      'a recursive merge key',
      'kind: TLSEdge\nname: x\nmetadata: &m\n  <<: *m\n',
      'a.yaml:4:7: recursive alias *m: it refers to the node that contains it',
    ],
    [
      'an undefined alias',
      'kind: TLSEdge\nname: x\ndescription: *nope\n',
      'a.yaml:3:14: undefined alias *nope: no anchor &nope before it',
    ],
  ])('reports %s as a located error, not a crash', (_name, text, line) => {
    expect(errorLines(buildFrom({ 'a.yaml': text }))).toEqual([line]);
  });

  it('allows a few ordinary aliases', () => {
    const result = buildFrom({
      'a.yaml': `kind: HTTPSEdge
name: x
routes:
  - match_type: path_prefix
    match: /a
    backend: &be { backend_id: bkdhr_2a }
  - match_type: path_prefix
    match: /b
    backend: *be
`,
    });
    expect(result.ok && result.set.httpsEdges[0]?.routes.map((r) => r.backend?.backend_id)).toEqual(
      ['bkdhr_2a', 'bkdhr_2a'],
    );
  });

  it('refuses files over the size cap', () => {
    const result = buildFrom(
      { 'big.yaml': `kind: TLSEdge\nname: x\n# ${'x'.repeat(100)}\n` },
      { maxFileBytes: 64 },
    );
    expect(errorLines(result)).toEqual(['big.yaml:1:1: file is 125 bytes, over the 64-byte limit']);
  });

  it('reports duplicate keys', () => {
    const result = buildFrom({ 'a.yaml': 'kind: TLSEdge\nname: x\nname: y\n' });
    expect(errorLines(result)).toEqual([
      'a.yaml:3:1: duplicate key "name": each key may appear only once in a mapping',
    ]);
  });

  it.each([
    ['a key indented too far', 'kind: HTTPSEdge\nname: shop\n  description: x\nroutes: []\n', 2],
    [
      'a nested key indented too far',
      'kind: HTTPSEdge\nname: shop\nroutes:\n  - match_type: path_prefix\n    match: /\n      oauth:\n      provider: {}\n',
      5,
    ],
    [
      'mapping items at three columns',
      'kind: HTTPSEdge\nname: s\nroutes:\n  - match_type: path_prefix\n    match: /\n  backend:\n     x: 1\n   y: 2\n',
      6,
    ],
  ])('one indentation mistake is one error, with a hint: %s', (_name, text, line) => {
    const lines = errorLines(buildFrom({ 'a.yaml': text }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^a\\.yaml:${line}:\\d+: invalid YAML: .*\\(check the indentation of this line and the next\\)$`,
      ),
    );
  });

  it.each([
    [
      'at the top',
      'kind: TLSEdge\nname: x\n__proto__: { polluted: true }\n',
      'a.yaml:3:1: unknown field "__proto__"',
    ],
    [
      'in labels',
      'kind: TLSEdge\nname: x\nmetadata:\n  __proto__: { polluted: true }\n',
      'a.yaml:4:3: metadata: unknown field "__proto__"',
    ],
    [
      'in a traffic policy mapping',
      'kind: TLSEdge\nname: x\ntraffic_policy:\n  value: { "__proto__": { polluted: true } }\n',
      'a.yaml:4:12: traffic_policy.value: unknown field "__proto__"',
    ],
    [
      'as a request header name',
      'kind: HTTPSEdge\nname: x\nroutes:\n  - match_type: path_prefix\n    match: /\n    request_headers: { add: { X-A: a, __proto__: b } }\n',
      'a.yaml:6:39: routes[0].request_headers.add: unknown field "__proto__"',
    ],
    [
      'as a response header name',
      'kind: HTTPSEdge\nname: x\nroutes:\n  - match_type: path_prefix\n    match: /\n    response_headers:\n      add:\n        "__proto__": b\n',
      'a.yaml:8:9: routes[0].response_headers.add: unknown field "__proto__"',
    ],
  ])('refuses __proto__ keys %s without polluting any prototype', (_where, text, expected) => {
    const result = buildFrom({ 'a.yaml': text });
    expect(errorLines(result)).toEqual([expected]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('a constructor key is an ordinary unknown field', () => {
    const result = buildFrom({
      'a.yaml': 'kind: TLSEdge\nname: x\nconstructor: { prototype: { polluted: true } }\n',
    });
    expect(errorLines(result)).toEqual(['a.yaml:3:1: unknown field "constructor"']);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('reports binary files', () => {
    const bytes = new Uint8Array([0x6b, 0x69, 0x6e, 0x64, 0x3a, 0x00, 0x01, 0x02]);
    expect(errorLines(buildFrom({ 'a.yaml': bytes }))).toEqual([
      'a.yaml:1:1: binary file (contains NUL bytes): not a YAML manifest',
    ]);
  });

  it('reports files that are not UTF-8', () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('kind: TLSEdge\nname: caf'),
      0xe9,
      0x0a,
    ]);
    expect(errorLines(buildFrom({ 'a.yaml': bytes }))).toEqual([
      'a.yaml:1:1: file is not valid UTF-8',
    ]);
  });

  it('accepts a UTF-8 byte order mark', () => {
    const bytes = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...new TextEncoder().encode('kind: BotUser\nname: ci\n'),
    ]);
    const result = buildFrom({ 'a.yaml': bytes });
    expect(result.ok && result.set.botUsers[0]?.name).toBe('ci');
  });

  it('survives deeply nested input', () => {
    const deep = `kind: TLSEdge\nname: x\ntraffic_policy:\n  value: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const result = buildFrom({ 'a.yaml': deep });
    expect(result.ok).toBe(false);
  });
});
