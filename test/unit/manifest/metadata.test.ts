/** The stored metadata string (design section 3) and "did you mean". */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseStoredMetadata,
  storedMetadata,
  storedRouteMetadata,
} from '../../../src/manifest/metadata.js';
import { formatPath } from '../../../src/manifest/paths.js';
import { didYouMean, editDistance } from '../../../src/manifest/suggest.js';

describe('stored metadata', () => {
  it.each([
    [
      {},
      { owner: 'default', name: 'shop', protect: false },
      '{"edgesync/name":"shop","edgesync/owner":"default"}',
    ],
    [
      { z: '1', a: 'é' },
      { owner: 'eu', name: 'shop', protect: true },
      '{"a":"é","edgesync/name":"shop","edgesync/owner":"eu","edgesync/protect":"true","z":"1"}',
    ],
  ])('writes key-sorted JSON of labels plus edgesync keys %#', (labels, own, expected) => {
    expect(storedMetadata(labels, own)).toBe(expected);
    expect(parseStoredMetadata(expected)).toEqual({
      labels,
      owner: own.owner,
      name: own.name,
      protect: own.protect,
    });
  });

  it('is JSON.stringify of the key-sorted labels, index-like keys included', () => {
    const key = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9._/-]{0,6}[A-Za-z0-9])?$/),
      fc.constantFrom('0', '1', '10', '2', '01', 'a"b', 'é'),
    );
    fc.assert(
      fc.property(fc.dictionary(key, fc.string(), { maxKeys: 6 }), (labels) => {
        const sorted: Record<string, string> = {};
        for (const k of Object.keys(labels).sort()) sorted[k] = labels[k] as string;
        expect(storedRouteMetadata(labels)).toBe(
          Object.keys(labels).length === 0 ? '' : JSON.stringify(sorted),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('route metadata: labels only, empty string when none', () => {
    expect(storedRouteMetadata({})).toBe('');
    expect(storedRouteMetadata({ b: '2', a: '1' })).toBe('{"a":"1","b":"2"}');
  });

  it.each([['not json'], ['[1]'], ['{"a":1}'], ['null']])(
    'metadata written by someone else: %s',
    (text) => {
      expect(parseStoredMetadata(text)).toBeUndefined();
    },
  );

  it('empty or missing metadata is no labels and no owner', () => {
    for (const m of ['', null, undefined]) {
      expect(parseStoredMetadata(m)).toEqual({
        labels: {},
        owner: undefined,
        name: undefined,
        protect: false,
      });
    }
  });
});

describe('paths and suggestions', () => {
  it.each([
    [[], ''],
    [['routes', 0, 'oauth', 'provider'], 'routes[0].oauth.provider'],
    [['metadata', 'edgesync/owner'], 'metadata["edgesync/owner"]'],
    [['request_headers', 'add', 'X-Key'], 'request_headers.add["X-Key"]'],
  ])('formatPath(%j) = %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });

  it.each([
    ['hostport', ['hostports', 'name'], '; did you mean "hostports"?'],
    ['HOSTPORTS', ['hostports'], '; did you mean "hostports"?'],
    ['oath', ['oauth', 'oidc', 'saml'], '; did you mean "oauth"?'],
    ['tls_termiantion', ['tls_termination'], '; did you mean "tls_termination"?'],
    ['zzz', ['hostports', 'name'], ''],
  ])('didYouMean(%s)', (input, candidates, expected) => {
    expect(didYouMean(input, candidates)).toBe(expected);
  });

  it('edit distance counts a transposition as one edit', () => {
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});
