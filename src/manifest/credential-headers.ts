/**
 * Which header names carry a credential: one rule for every place a header's value is written
 * (an edge's request and response headers modules, a traffic policy's header maps). Below the
 * masking module and the policy's action table, which both read it.
 */

const CREDENTIAL_HEADER_EXACT: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
]);
const CREDENTIAL_HEADER_PART = /key|token|secret|password|signature|auth/i;

/**
 * Whether a header with this name carries a credential: `Authorization`, `Proxy-Authorization`,
 * `Cookie`, `Set-Cookie`, or any name containing `key`, `token`, `secret`, `password`,
 * `signature` or `auth` (case-insensitive).
 */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADER_EXACT.has(name.toLowerCase()) || CREDENTIAL_HEADER_PART.test(name);
}

/**
 * Whether `text` may name a credential header or a secret field (`client_secret`,
 * `server_private_key`, `secret`): the words of the rule above, so that a policy text mentioning
 * none of them need not be parsed to look for secrets. A cheap filter, never a verdict.
 */
export function mayNameCredential(text: string): boolean {
  return CREDENTIAL_HEADER_PART.test(text) || /cookie/i.test(text);
}
