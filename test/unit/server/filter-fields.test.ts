import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../src/server/endpoints/cel.js';

const FIELDS: ReadonlySet<string> = new Set(['id', 'name', 'description', 'ip_policy']);

describe("a list filter held to its kind's filterable fields", () => {
  it.each([
    "obj.name == 'a'",
    'has(obj.description)',
    "obj['name'] == 'a'",
    "obj.ip_policy.id == 'ipp_1'",
    "obj.name.startsWith('a') && !(obj.description == null)",
    "['a', 'b'].exists(n, obj.name == n)",
    "size(obj.name) > 0 || obj.id in ['x']",
  ])('takes %s', (text) => {
    expect(() => compileFilter(text, FIELDS)).not.toThrow();
  });

  it.each([
    ["obj.cidr == 'x'", 'field "cidr"'],
    ['has(obj.uri)', 'field "uri"'],
    ["obj['uri'] == 'x'", 'field "uri"'],
    ["obj['na' + 'me'] == 'x'", 'a computed index of obj'],
    ['obj == obj', 'obj itself'],
    ["'name' in obj", 'obj itself'],
  ])('refuses %s (names %s)', (text, named) => {
    expect(() => compileFilter(text, FIELDS)).toThrow(named);
    try {
      compileFilter(text, FIELDS);
    } catch (err) {
      expect((err as { errorCode?: string }).errorCode).toBe('invalid_cel_expression');
    }
  });

  it('takes any field when the kind lists none (endpoints)', () => {
    expect(compileFilter("obj.anything == 'x'")({ anything: 'x' })).toBe(true);
  });

  it('takes a field listed only by a member through that member only', () => {
    const members: ReadonlySet<string> = new Set(['domain', 'certificate.id']);
    expect(() => compileFilter("obj.certificate.id == 'cert_1'", members)).not.toThrow();
    expect(() => compileFilter('has(obj.certificate.id)', members)).not.toThrow();
    expect(() => compileFilter('obj.certificate == null', members)).toThrow('field "certificate"');
    expect(() => compileFilter("obj.certificate.uri == 'x'", members)).toThrow(
      'field "certificate.uri"',
    );
  });

  it('sees an unset field as null', () => {
    const match = compileFilter('obj.description == null', FIELDS);
    expect(match({ description: null })).toBe(true);
    expect(match({ description: 'd' })).toBe(false);
  });
});
