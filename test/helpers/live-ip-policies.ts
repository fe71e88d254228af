/**
 * Test helper: a traffic policy's `ipp_` IDs made real. The local server refuses a policy naming
 * an IP policy its account does not have (2216), so tables that write made-up IDs
 * (`ipp_abc123`) have each one replaced, in the text sent, by a policy created on the account
 * the first time that ID is seen (the same made-up ID, the same real one).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Call } from '../integration/server/client.js';
import { CLOUD_SPEC } from './cloud-spec.js';

const EXAMPLES = join(import.meta.dirname, '../../config-examples');

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

/**
 * The `ipp_` IDs the specification's tables and the shipped examples name, for a server that
 * seeds them (`startTestServer({ ipPolicies })`): a whole apply of a generated or shipped
 * manifest then runs against an account that has the IP policies its policies name.
 */
export const NAMED_IP_POLICIES: readonly string[] = [
  ...new Set(
    [
      ...(JSON.stringify(CLOUD_SPEC).match(IP_POLICY_ID) ?? []),
      ...readdirSync(EXAMPLES, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.yaml'))
        .flatMap((f) => readFileSync(join(EXAMPLES, f), 'utf8').match(IP_POLICY_ID) ?? []),
    ].filter((id) => id !== 'ipp_'),
  ),
].sort();
