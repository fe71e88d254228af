/**
 * One YAML reader (`yaml`, YAML 1.2 core schema) decides every value: numbers-looking words that
 * YAML 1.2 core does not read as numbers stay strings, merge keys are enabled and behave as
 * `yaml` does them, and an unrelated edit elsewhere in a file never changes a value.
 */
import { describe, expect, it } from 'vitest';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildFrom, errorLines } from './helpers.js';

function load(files: Record<string, string>): DesiredSet {
  const result = buildFrom(files);
  if (!result.ok) throw new Error(errorLines(result).join('\n'));
  return result.set;
}

const tls = (extra: string) => `kind: TLSEdge\nname: edge\n${extra}`;

describe('YAML 1.2 core values', () => {
  it.each(['0b1010', '-0x1F', '+0o17'])('%s stays the string written', (word) => {
    const set = load({
      'a.yaml': tls(`description: ${word}\nmetadata: { n: ${word} }\n`),
    });
    expect(set.tlsEdges[0]?.description).toBe(word);
    expect(set.tlsEdges[0]?.metadata).toEqual({ n: word });
  });

  it('reads the integers YAML 1.2 core knows as integers', () => {
    const set = load({
      'a.yaml': tls('traffic_policy: { value: { hex: 0x1F, oct: 0o17, neg: -17 } }\n'),
    });
    expect(JSON.parse(set.tlsEdges[0]?.traffic_policy?.value ?? '')).toEqual({
      hex: 31,
      oct: 15,
      neg: -17,
    });
  });

  it('a traffic_policy value keeps the string: sent as JSON with the words as strings', () => {
    const set = load({
      'a.yaml': tls(
        'traffic_policy:\n  value:\n    on_tcp_connect:\n      - { name: 0b1010, limit: -0x1F, rate: +0o17 }\n',
      ),
    });
    expect(JSON.parse(set.tlsEdges[0]?.traffic_policy?.value ?? '')).toEqual({
      on_tcp_connect: [{ name: '0b1010', limit: '-0x1F', rate: '+0o17' }],
    });
  });

  it('num_buckets: 0b1010 is a validation error, not 10', () => {
    const result = buildFrom({
      'a.yaml': `kind: HTTPSEdge
name: web
routes:
  - match_type: path_prefix
    match: /
    circuit_breaker: { num_buckets: 0b1010 }
`,
    });
    expect(result.ok).toBe(false);
    expect(errorLines(result)).toEqual([
      'a.yaml:6:37: routes[0].circuit_breaker.num_buckets: must be a whole number',
    ]);
  });
});

describe('merge keys (enabled, as yaml reads them)', () => {
  it('<< merges the aliased mapping; keys written beside it win', () => {
    const set = load({
      'a.yaml': `kind: HTTPSEdge
name: web
routes:
  - match_type: path_prefix
    match: /
    circuit_breaker: &cb { num_buckets: 10, rolling_window: 30, tripped_duration: 5, volume_threshold: 2 }
  - match_type: path_prefix
    match: /b
    circuit_breaker:
      <<: *cb
      num_buckets: 20
`,
    });
    const routes = set.httpsEdges[0]?.routes ?? [];
    expect(routes[0]?.circuit_breaker).toMatchObject({ num_buckets: 10, rolling_window: 30 });
    expect(routes[1]?.circuit_breaker).toMatchObject({ num_buckets: 20, rolling_window: 30 });
  });

  it('a << key with a plain value (no alias) is refused, not read as a key', () => {
    const result = buildFrom({ 'a.yaml': tls('metadata:\n  <<: plain\n') });
    expect(errorLines(result)).toEqual([
      'a.yaml:1:1: cannot read YAML document: Merge sources must be maps or map aliases',
    ]);
  });
});

describe('an unrelated edit elsewhere in the file', () => {
  // Valid whichever way the words are read: nothing else in the file forces a reading.
  const edge = tls('traffic_policy: { value: { on_tcp_connect: [{ v: +0o17, w: 0b1010 }] } }\n');

  it('never changes a value: adding a document with an anchor and an alias', () => {
    const before = load({ 'a.yaml': edge });
    const after = load({
      'a.yaml': `${edge}---
kind: TLSEdge
name: other
description: &d 0b1010
traffic_policy: { value: { on_tcp_connect: [{ v: *d }] } }
`,
    });
    expect(after.tlsEdges.find((e) => e.name === 'edge')).toEqual(before.tlsEdges[0]);
    expect(before.tlsEdges[0]?.traffic_policy?.value).toBe(
      '{"on_tcp_connect":[{"v":"+0o17","w":"0b1010"}]}',
    );
  });
});
