/**
 * Shape and semantic errors in one run: a document with shape errors still takes part in the
 * semantic phase with the parts that did parse (issue 14, item 8).
 */
import { describe, expect, it } from 'vitest';
import { buildFrom, errorLines } from './helpers.js';

describe('shape and semantic errors together', () => {
  it('a duplicate hostport is reported beside a shape error in the same document', () => {
    const result = buildFrom({
      'a.yaml': 'kind: TLSEdge\nname: a\nhostports: [x.example.com:443]\n',
      'b.yaml': 'kind: TLSEdge\nname: b\nhostports: [x.example.com:443]\ndescripton: typo\n',
    });
    expect(errorLines(result)).toEqual([
      'b.yaml:3:13: hostports[0]: hostport "x.example.com:443" is already served by TLSEdge "a" (a.yaml:3:13)',
      'b.yaml:4:1: unknown field "descripton"; did you mean "description"?',
    ]);
  });

  it('a broken route is left out; rules on the other routes still run, at their written index', () => {
    const result = buildFrom({
      'web.yaml': [
        'kind: HTTPSEdge',
        'name: web',
        'hostports: [web.example.com:443]',
        'routes:',
        '  - match_type: path_prefix',
        '    match: /broken',
        '    backnd: {}',
        '  - match_type: path_prefix',
        '    match: /a',
        '  - match_type: path_prefix',
        '    match: /a',
        '',
      ].join('\n'),
    });
    const lines = errorLines(result);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^web\.yaml:7:5: routes\[0\]: unknown field "backnd"/);
    expect(lines[1]).toMatch(
      /^web\.yaml:11:12: routes\[2\]\.match: duplicate route match "\/a" on this edge \(first at web\.yaml:9:12\)$/,
    );
  });

  it('a document whose name is broken sits the semantic phase out (no guessing)', () => {
    const result = buildFrom({
      'a.yaml': 'kind: TLSEdge\nname: a\nhostports: [x.example.com:443]\n',
      'b.yaml': 'kind: TLSEdge\nname: [not, a, name]\nhostports: [x.example.com:443]\n',
    });
    const lines = errorLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^b\.yaml:2:7: name: /);
  });

  it('the field with a shape error is not also reported by a rule about it', () => {
    const result = buildFrom({
      'a.yaml': 'kind: TLSEdge\nname: a\nhostports: [x.example.com:443, 7]\n',
      'b.yaml': 'kind: TLSEdge\nname: a\nhostports: [y.example.com:443]\n',
    });
    const lines = errorLines(result);
    expect(lines.some((l) => l.startsWith('a.yaml:3:') && l.includes('hostports[1]'))).toBe(true);
    expect(lines.filter((l) => l.includes('duplicate TLSEdge name "a"'))).toHaveLength(1);
    expect(result.ok).toBe(false);
  });
});
