/** Which header names import treats as credentials, and which values it warns about. */
import { describe, expect, it } from 'vitest';
import { credentialLikeReason } from '../../../src/apply/credentials.js';
import { isCredentialHeader } from '../../../src/manifest/credential-headers.js';

describe('isCredentialHeader', () => {
  it.each([
    'Authorization',
    'proxy-authorization',
    'Cookie',
    'SET-COOKIE',
    'X-Api-Key',
    'x-auth-token',
    'X-Client-Secret',
    'X-Password',
    'X-Hub-Signature-256',
    'X-Amz-Security-Token',
  ])('%s is a credential', (name) => expect(isCredentialHeader(name)).toBe(true));

  it.each(['X-Team', 'Content-Type', 'X-Served-By', 'Accept', 'X-Request-Id'])(
    '%s is not',
    (name) => expect(isCredentialHeader(name)).toBe(false),
  );
});

describe('credentialLikeReason', () => {
  it.each([
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIE...', 'a private key'],
    ['use Bearer abcdefghijklmnop.qrstu', 'a bearer token'],
    ['legacy, password=hunter22', 'an assignment of a secret'],
    ['{"api_key": "k_1234567890"}', 'an assignment of a secret'],
    ['AKIAIOSFODNN7EXAMPLE', 'an AWS access key'],
    [`ghp_${'a1B2'.repeat(9)}`, 'a GitHub token'],
    ['xoxb-1234567890-abcdef', 'a Slack token'],
    [`sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`, 'a Stripe key'],
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'a webhook secret'],
    [
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'a JSON Web Token',
    ],
    ['k9Xq2Lm8Pz4Rt7Vw1Yb6Nc3Hd5Jf0Gs2Ka', 'a long random-looking string'],
  ])('%s: %s', (text, reason) => expect(credentialLikeReason(text)).toBe(reason));

  it.each([
    'Public storefront',
    'the token bucket refills every minute',
    'shop.example.com:443 and api.example.com:443',
    '{"on_http_request":[{"actions":[{"type":"deny"}]}]}',
    '/api/v1/customers/orders/history/export/all-of-them',
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1',
  ])('%s is not', (text) => expect(credentialLikeReason(text)).toBeUndefined());
});
