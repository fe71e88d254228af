import { describe, expect, it } from 'vitest';
import { resolveApiConfig } from '../../../src/api/config.js';
import { ConfigError, UsageError } from '../../../src/errors.js';

const KEY = 'sk_live_SECRETKEY123';

describe('resolveApiConfig', () => {
  it.each([
    ['nothing configured', {}, {}, undefined],
    [
      'empty strings count as unset',
      { apiUrl: '', apiKey: '' },
      { EDGESYNC_API_URL: '' },
      undefined,
    ],
    [
      'flags',
      { apiUrl: 'https://api.example.test/', apiKey: KEY },
      {},
      { baseUrl: 'https://api.example.test', apiKey: KEY },
    ],
    [
      'environment',
      {},
      { EDGESYNC_API_URL: 'http://127.0.0.1:8080/v2//', EDGESYNC_API_KEY: `${KEY}\n` },
      { baseUrl: 'http://127.0.0.1:8080/v2', apiKey: KEY },
    ],
    [
      'flags win over the environment, field by field',
      { apiKey: 'flagkey' },
      { EDGESYNC_API_URL: 'http://127.0.0.1:1', EDGESYNC_API_KEY: 'envkey' },
      { baseUrl: 'http://127.0.0.1:1', apiKey: 'flagkey' },
    ],
  ])('%s', (_name, flags, env, expected) => {
    expect(resolveApiConfig({ flags, env })).toEqual(expected);
  });

  it.each([
    ['key without URL', {}, { EDGESYNC_API_KEY: KEY }, /no API URL/],
    ['URL without key', { apiUrl: 'http://127.0.0.1:1' }, {}, /no API key/],
    ['key of blanks', { apiUrl: 'http://127.0.0.1:1', apiKey: '  \n' }, {}, /no API key/],
    [
      'key with inner whitespace',
      { apiUrl: 'http://127.0.0.1:1', apiKey: 'a b' },
      {},
      /whitespace/,
    ],
    ['swapped flags', { apiUrl: KEY, apiKey: 'http://127.0.0.1:1' }, {}, /not an absolute/],
    ['ftp scheme', { apiUrl: 'ftp://h/x', apiKey: KEY }, {}, /scheme ftp:/],
    ['credentials in URL', { apiUrl: `https://u:${KEY}@h`, apiKey: KEY }, {}, /credentials/],
    ['query in URL', { apiUrl: `https://h/?key=${KEY}`, apiKey: KEY }, {}, /no query/],
  ])('refuses %s, without echoing the key', (_name, flags, env, message) => {
    let caught: unknown;
    try {
      resolveApiConfig({ flags, env });
    } catch (err) {
      caught = err;
    }
    // A bad --api-url flag is a usage error (exit 64); the rest are configuration errors.
    const badUrl = /not an absolute|scheme|credentials|no query/.test(String(message));
    expect(caught).toBeInstanceOf(badUrl ? UsageError : ConfigError);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain(KEY);
  });
});
