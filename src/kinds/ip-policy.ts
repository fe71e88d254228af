/**
 * IP policies (`/ip_policies`, `ipp_`) with their rules inline (`/ip_policy_rules`, `ipr_`):
 * the `IPPolicy` manifest kind. A policy has no natural key, so it is owned through the owner
 * mark in its metadata and pruned like an endpoint (through the deletion guards); a policy a
 * live endpoint still names is not deleted until the plan stops the endpoint naming it
 * (`CLOUD_ENDPOINT.liveReferences`), and its delete runs after the endpoints' (the graph:
 * `CLOUD_ENDPOINT.refersTo`).
 *
 * Its rules are a child collection, listed account-wide in one paginated list and planned
 * within the policy's root in the safe order of the service: new deny rules, then each range
 * whose action flips (its rule deleted, then created: never created first, 1408), new allow
 * rules, the rules no longer declared deleted, then descriptions updated. Ranges are compared
 * canonically (lowest address, IPv6 lower-case: `canonicalCidr`), and the manifest refuses a
 * range the service would (no mask, not its lowest address, twice in one policy), located.
 */
import { z } from 'zod';
import { utf8Bytes } from '../hosted/edge-api.js';
import { describedText, labels, NAME_PATTERN, refable } from '../manifest/modules.js';
import { canonicalCidr, parseCidr, ruleCidrProblem } from '../policy-eval/ip.js';
import type {
  ChildCollection,
  Declared,
  DeclaredChild,
  KindDefinition,
  LiveRecord,
} from './definition.js';

/** The service's limit on a rule's description (1421). */
const RULE_DESCRIPTION_BYTES = 255;

export type IpRuleAction = 'allow' | 'deny';

interface DeclaredRule {
  readonly cidr: string;
  readonly action: IpRuleAction;
  readonly description?: string | undefined;
}

/** A rule's range as a key: the same text however the range was written. */
export function ruleKey(cidr: string): string {
  const parsed = parseCidr(cidr);
  return parsed === undefined ? cidr : canonicalCidr(parsed);
}

const ruleSchema = z
  .strictObject({
    cidr: z.string().superRefine((text, ctx) => {
      const problem = ruleCidrProblem(text);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem.message });
    }),
    action: z.enum(['allow', 'deny'], { error: 'action must be allow or deny' }),
    description: refable(
      z.string().refine((v) => utf8Bytes(v) <= RULE_DESCRIPTION_BYTES, {
        error: `must be at most ${RULE_DESCRIPTION_BYTES} bytes (UTF-8)`,
      }),
    ).optional(),
  })
  .meta({ description: 'One rule: a CIDR (written with its lowest address), allow or deny.' });

const rulesSchema = z
  .array(ruleSchema)
  .superRefine((rules, ctx) => {
    const first = new Map<string, number>();
    rules.forEach((rule, i) => {
      const key = ruleKey(rule.cidr);
      const earlier = first.get(key);
      if (earlier === undefined) first.set(key, i);
      else {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'cidr'],
          message: `cidr ${rule.cidr} is already a rule of this policy (rules[${earlier}]): one rule per range, whatever its action`,
        });
      }
    });
  })
  .default([]);

export const IpPolicySchema = z
  .strictObject({
    kind: z.literal('IPPolicy'),
    name: refable(
      z.string().regex(NAME_PATTERN, {
        error:
          'names are 1-63 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit',
      }),
    ),
    id: z
      .string()
      .regex(/^ipp_[A-Za-z0-9]+$/, { error: 'must be an ipp_ ID' })
      .optional()
      .meta({ description: 'Adopt this existing IP policy (by ID) rather than create one.' }),
    description: describedText().optional(),
    metadata: labels(),
    protect: z.boolean().default(false),
    ensure: z.enum(['present', 'absent']).default('present').meta({
      description: 'absent: delete the policy (with its rules).',
    }),
    suspend: z.boolean().optional().meta({
      description:
        'true: edgesync leaves this policy and its rules exactly as they are live until it is false again.',
    }),
    rules: rulesSchema.meta({
      description:
        'The rules, inline: every live rule of the policy not listed here is deleted. A range is compared in its canonical form.',
    }),
  })
  .meta({
    description:
      'An IP policy with its rules, keyed by name; restrict-ips names it as { ref: NAME }.',
  });

const rulesOf = (d: Declared): readonly DeclaredRule[] =>
  (d.rules ?? []) as readonly DeclaredRule[];

/** Steps of the safe order (lower first). */
const RANK = { denyCreate: 0, flip: 1, allowCreate: 2, delete: 3, update: 4 } as const;

export const IP_POLICY_RULES: ChildCollection = {
  kind: 'ip_policy_rule',
  plural: 'ip_policy_rules',
  api: {
    list: 'listIpPolicyRules',
    create: 'createIpPolicyRule',
    update: 'updateIpPolicyRule',
    delete: 'deleteIpPolicyRule',
  },
  parentOf: (l) => {
    const ref = l.ip_policy as { id?: unknown } | undefined;
    return typeof ref?.id === 'string' ? ref.id : undefined;
  },
  key: (l) => ruleKey(String(l.cidr)),
  declared: (d) =>
    rulesOf(d).map(
      (rule, i): DeclaredChild => ({
        key: ruleKey(rule.cidr),
        path: ['rules', i],
        values: {
          cidr: rule.cidr,
          action: rule.action,
          description: rule.description ?? '',
        },
      }),
    ),
  parentField: 'ip_policy_id',
  fields: [
    { name: 'action', live: (l) => l.action, replace: true },
    { name: 'description', live: (l) => (typeof l.description === 'string' ? l.description : '') },
  ],
  rank: (step, values) => {
    if (step === 'create') return values.action === 'deny' ? RANK.denyCreate : RANK.allowCreate;
    if (step === 'replace') return RANK.flip;
    return step === 'delete' ? RANK.delete : RANK.update;
  },
  describe: (values) => `${String(values.action)} ${String(values.cidr)}`,
};

export const IP_POLICY: KindDefinition = {
  kind: 'ip_policy',
  plural: 'ip_policies',
  manifestKinds: ['IPPolicy'],
  description:
    'An IP policy with its rules, keyed by name; restrict-ips names it as { ref: NAME }. protect: true forbids deleting it.',
  schema: IpPolicySchema,
  api: {
    list: 'listIpPolicies',
    create: 'createIpPolicy',
    update: 'updateIpPolicy',
    delete: 'deleteIpPolicy',
  },
  ownership: { by: 'metadata' },
  fields: [
    {
      name: 'description',
      desired: (d) => (typeof d.description === 'string' ? d.description : ''),
      live: (l) => (typeof l.description === 'string' ? l.description : ''),
    },
  ],
  children: IP_POLICY_RULES,
  toManifest: (l, _names, children = []) => ({
    ...(typeof l.description === 'string' && l.description !== ''
      ? { description: l.description }
      : {}),
    rules: [...children]
      .sort((a, b) => ruleOrder(a, b))
      .map((r: LiveRecord) => ({
        cidr: String(r.cidr),
        action: String(r.action),
        ...(typeof r.description === 'string' && r.description !== ''
          ? { description: r.description }
          : {}),
      })),
  }),
  prune: true,
  order: 20,
};

/** Imported rules in a stable order: by range as written, then ID. */
function ruleOrder(a: LiveRecord, b: LiveRecord): number {
  const ka = String(a.cidr);
  const kb = String(b.cidr);
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
