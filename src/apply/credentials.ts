/**
 * Which live values look like a credential, for `import`'s one credential rule. Pure.
 *
 * Secrets by field (`isSecretField` in src/manifest/secrets.ts: `client_secret`, the webhook
 * `secret`, credential headers) are always written as `{ env: EDGESYNC_... }` references.
 * Free text (a description, a label, a traffic policy) that merely looks like a credential is
 * moved out the same way, with a warning: a private key block, a bearer token,
 * `password=...`-style assignments, well-known token prefixes, a JSON Web Token, and long
 * high-entropy strings.
 */

const PATTERNS: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/, 'a private key'],
  [/\bbearer\s+[A-Za-z0-9\-._~+/]{12,}=*/i, 'a bearer token'],
  [/\bbasic\s+[A-Za-z0-9+/]{12,}={0,2}/i, 'basic credentials'],
  [
    /\b(?:api[_-]?key|access[_-]?key|secret|token|password|passwd|pwd|client[_-]?secret)["']?\s*[:=]\s*["']?[^\s"',;}]{6,}/i,
    'an assignment of a secret',
  ],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, 'an AWS access key'],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/, 'a GitHub token'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/, 'a Stripe key'],
  [/\bwhsec_[A-Za-z0-9+/=]{16,}/, 'a webhook secret'],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, 'a JSON Web Token'],
];

/** Shannon entropy in bits per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * Why `text` looks like it holds a credential, or undefined. Conservative: a long run of letters
 * and digits counts only with both letters and digits and high entropy, so hostnames, paths and
 * prose do not.
 */
export function credentialLikeReason(text: string): string | undefined {
  for (const [pattern, what] of PATTERNS) if (pattern.test(text)) return what;
  // Slashes split the runs: paths are common in policies, and rarely secret.
  for (const run of text.match(/[A-Za-z0-9+_=-]{32,}/g) ?? []) {
    if (/[0-9]/.test(run) && /[A-Za-z]/.test(run) && entropy(run) >= 4) {
      return 'a long random-looking string';
    }
  }
  return undefined;
}
