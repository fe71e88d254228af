/**
 * Where a traffic policy holds secrets, by the action table's facts (src/hosted/policy-actions.ts:
 * the config fields that are secrets, the header maps) and the one rule of which header names
 * carry a credential (../credential-headers.ts). Read on the manifest side: the sensitive paths
 * of a cloud endpoint, which every output masks. Pure.
 */
import { HEADER_MAP_CONFIG_FIELDS, SECRET_CONFIG_FIELDS } from '../../hosted/policy-actions.js';
import { isCredentialHeader } from '../credential-headers.js';
import type { FieldPath } from '../paths.js';

/**
 * The paths (from the resource, `traffic_policy.<phase>[r].actions[a].config.<field>`, and
 * `...config.headers.<name>` for a credential header) of the secret config fields a policy
 * sets, however they are written.
 */
export function policySecretPaths(policy: unknown): FieldPath[] {
  const out: FieldPath[] = [];
  // Also run on documents that did not pass their shape: nothing here may be assumed.
  const entries = (v: unknown): [string, unknown][] =>
    typeof v === 'object' && v !== null ? Object.entries(v) : [];
  for (const [phase, rules] of entries(policy)) {
    if (!Array.isArray(rules)) continue;
    for (const [r, rule] of rules.entries()) {
      const actions: unknown = (rule as { actions?: unknown } | null)?.actions;
      if (!Array.isArray(actions)) continue;
      for (const [a, action] of actions.entries()) {
        const config: unknown = (action as { config?: unknown } | null)?.config;
        for (const [field, value] of entries(config)) {
          const at: FieldPath = ['traffic_policy', phase, r, 'actions', a, 'config', field];
          if (SECRET_CONFIG_FIELDS.has(field)) out.push(at);
          if (!HEADER_MAP_CONFIG_FIELDS.has(field) || Array.isArray(value)) continue;
          for (const [name] of entries(value))
            if (isCredentialHeader(name)) out.push([...at, name]);
        }
      }
    }
  }
  return out;
}
