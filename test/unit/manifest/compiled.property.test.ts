/**
 * Documents are checked by the compiled manifest schemas (`compiledCheck`, `z.compile`); zod's
 * runtime parser (`SCHEMA_BY_KIND`) stays the reference: same success, same value, same issues,
 * for valid and invalid documents alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonTree } from '../../../src/manifest/modules.js';
import { SCHEMA_BY_KIND } from '../../../src/manifest/schema.js';
import { compiledCheck } from '../../../src/manifest/shape.js';

const anyValue = fc.oneof(
  fc.constantFrom(
    'edge',
    'upstream',
    '1.2',
    '1.3',
    '',
    'x',
    'bkdhr_1',
    'ipp_1',
    '/',
    '/a',
    'GitHub',
  ),
  fc.integer({ min: -2, max: 5_000_000_000 }),
  fc.constantFrom(0.5, 1.5, Number.POSITIVE_INFINITY, Number.NaN),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);
const module = (fields: readonly string[]) =>
  fc.dictionary(fc.constantFrom(...fields, 'enabled', 'unknown_field'), anyValue, { maxKeys: 3 });
const json = fc.jsonValue({ maxDepth: 3 });

const tls = fc.record(
  {
    kind: fc.constant('TLSEdge'),
    name: fc.constantFrom('a', 'edge-1', 'Bad Name', ''),
    description: anyValue,
    protect: anyValue,
    hostports: fc.array(fc.constantFrom('a.example.com:443', 'x', 'A.example.com:443'), {
      maxLength: 3,
    }),
    backend: module(['backend_id']),
    tls_termination: module(['terminate_at', 'min_version']),
    traffic_policy: fc.record(
      {
        enabled: fc.boolean(),
        value: fc.oneof(fc.string(), fc.dictionary(fc.string(), json), anyValue),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['kind'] },
);
const https = fc.record(
  {
    kind: fc.constant('HTTPSEdge'),
    name: fc.constantFrom('web', 'x'),
    routes: fc.array(
      fc.record(
        {
          match_type: fc.constantFrom('path_prefix', 'exact', 'bad'),
          match: fc.constantFrom('/', '/a', 'a'),
          circuit_breaker: module([
            'tripped_duration',
            'error_threshold_percentage',
            'num_buckets',
          ]),
          request_headers: fc.record(
            { add: fc.dictionary(fc.constantFrom('X-A', 'bad header'), anyValue) },
            { requiredKeys: [] },
          ),
          webhook_verification: module(['provider', 'secret']),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ['kind'] },
);
const bot = fc.record(
  {
    kind: fc.constant('BotUser'),
    name: fc.constantFrom('ci', ''),
    active: anyValue,
    ensure: anyValue,
  },
  { requiredKeys: ['kind'] },
);

describe('compiled manifest schemas', () => {
  it('answer exactly what the runtime parser answers', () => {
    fc.assert(
      fc.property(fc.oneof(tls, https, bot), (doc) => {
        const kind = doc.kind as keyof typeof SCHEMA_BY_KIND;
        const compiled = compiledCheck(kind).safeParse(doc);
        const runtime = SCHEMA_BY_KIND[kind].safeParse(doc);
        expect(compiled.success).toBe(runtime.success);
        if (runtime.success) expect(compiled.data).toStrictEqual(runtime.data);
        else
          expect(compiled.error?.issues.map((i) => [i.path, i.code, i.message])).toStrictEqual(
            runtime.error.issues.map((i) => [i.path, i.code, i.message]),
          );
      }),
      { numRuns: 3000 },
    );
  });

  it('takes JSON values only in a traffic policy mapping', () => {
    expect(isJsonTree({ a: [1, 'x', null, true, { b: 2.5 }] })).toBe(true);
    expect(isJsonTree({ a: [1, Number.POSITIVE_INFINITY] })).toBe(false);
    expect(isJsonTree({ a: { b: Number.NaN } })).toBe(false);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(isJsonTree(deep)).toBe(true);
    const r = SCHEMA_BY_KIND.TLSEdge.safeParse({
      kind: 'TLSEdge',
      name: 'a',
      traffic_policy: { value: { on_tcp_connect: [{ n: Number.POSITIVE_INFINITY }] } },
    });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe('must hold JSON values only (no .inf or .nan)');
  });
});
