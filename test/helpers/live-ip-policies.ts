/**
 * Test helper: a traffic policy's `ipp_` IDs made real. The local server refuses a policy naming
 * an IP policy its account does not have (2216), so tables that write made-up IDs
 * (`ipp_abc123`) have each one replaced, in the text sent, by a policy created on the account
 * the first time that ID is seen (the same made-up ID, the same real one).
 */
import type { Call } from '../integration/server/client.js';

const IP_POLICY_ID = /\bipp_[A-Za-z0-9]+\b/g;

export function liveIpPolicies(call: Call): (text: string) => Promise<string> {
  const real = new Map<string, string>();
  return async (text) => {
    for (const made of new Set(text.match(IP_POLICY_ID) ?? [])) {
      if (real.has(made)) continue;
      const created = await call('POST', '/ip_policies', { description: `stands for ${made}` });
      if (created.status !== 201) throw new Error(`cannot create an IP policy: ${created.text}`);
      real.set(made, created.json.id as string);
    }
    return text.replace(IP_POLICY_ID, (made) => real.get(made) ?? made);
  };
}
