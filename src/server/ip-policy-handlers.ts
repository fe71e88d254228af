/**
 * The IP policy operations (`/ip_policies`, `ipp_`) and their rules' (`/ip_policy_rules`,
 * `ipr_`, listed account-wide): create, get, list (with a CEL `filter`), partial update and
 * delete, with the rules of account-resources.md section 2: a rule's CIDR (1413 no mask, 1406
 * invalid, 1409 not the range's lowest address, 1408 the same range twice in one policy whatever
 * the action), its action (1422), its description (1421), its policy (1414), and the limits
 * (1410, 1411). Deleting a policy deletes its rules, and succeeds even while a traffic policy
 * names it. CIDRs are read by the one CIDR reader, src/policy-eval/ip.ts.
 */
import { z } from 'zod';
import { utf8Bytes } from '../hosted/edge-api.js';
import { type Cidr, parseCidr, ruleCidrProblem } from '../policy-eval/ip.js';
import {
  ACCOUNT_ID_PREFIX,
  ACCOUNT_LIMITS,
  IP_POLICY_ERROR_CODE as CODE,
} from './account-codes.js';
import {
  checkFixedFields,
  checkNotEmpty,
  describedCel,
  describedFields,
  describedJson,
  describedWrite,
  JsonCache,
  lookup,
} from './account-common.js';
import { RequestError } from './errors.js';
import { type Call, type HandlerDeps, json, noContent, type Reply } from './handler-common.js';
import { filteredList } from './list-filter.js';
import { type IpPolicyRec, type IpRuleAction, type IpRuleRec, rfc3339Seconds } from './model.js';
import type { Renderer } from './render.js';
import { obj } from './schema-blocks.js';
import type { AccountState } from './store.js';
import { parseBody } from './validate.js';

const ACTIONS: readonly IpRuleAction[] = ['allow', 'deny'];
const RULE_DESCRIPTION_BYTES = 255;

const POLICY_FIELDS: ReadonlySet<string> = new Set(['id', 'created_at', 'description', 'metadata']);
const RULE_FIELDS: ReadonlySet<string> = new Set([...POLICY_FIELDS, 'ip_policy', 'cidr', 'action']);

const policyWriteSchema = obj(describedFields);
const ruleFields = {
  cidr: z.string(),
  // Checked in the handler, each with its own code (1422, 1421).
  action: z.string(),
  description: z.string().optional(),
  metadata: describedFields.metadata,
};
const ruleCreateSchema = obj({ ...ruleFields, ip_policy_id: z.string() });
const ruleUpdateSchema = obj({
  cidr: ruleFields.cidr.optional(),
  description: ruleFields.description,
  metadata: ruleFields.metadata,
});

/** The range a rule's CIDR names; 1413, 1406 or 1409 when it is not a CIDR as the API takes it. */
export function checkRuleCidr(text: string): Cidr {
  const problem = ruleCidrProblem(text);
  if (problem !== undefined) {
    const code = {
      noMask: CODE.noMask,
      invalid: CODE.badCidr,
      notLowest: CODE.notLowestAddress,
    }[problem.problem];
    throw new RequestError(400, code, problem.message);
  }
  return parseCidr(text) as Cidr;
}

const sameRange = (a: Cidr, b: Cidr) =>
  a.version === b.version && a.first === b.first && a.bits === b.bits;

/** 1408: the policy already has a rule on the same range (whatever its action). */
function checkUniqueCidr(
  account: AccountState,
  policyId: string,
  cidr: Cidr,
  text: string,
  selfId?: string,
): void {
  for (const rule of account.rulesOf(policyId)) {
    if (rule.id === selfId) continue;
    const other = parseCidr(rule.cidr);
    if (other !== undefined && sameRange(other, cidr)) {
      throw new RequestError(
        400,
        CODE.duplicateCidr,
        `cidr ${text}: IP policy ${policyId} already has it (rule ${rule.id}, ${rule.action}); to change its action, delete that rule first`,
      );
    }
  }
}

function checkAction(action: string): IpRuleAction {
  const found = ACTIONS.find((a) => a === action);
  if (found === undefined) {
    throw new RequestError(
      400,
      CODE.badAction,
      `action must be allow or deny, was ${JSON.stringify(action)}`,
    );
  }
  return found;
}

function checkRuleDescription(description: string | undefined): void {
  if (description !== undefined && utf8Bytes(description) > RULE_DESCRIPTION_BYTES) {
    throw new RequestError(
      400,
      CODE.ruleDescriptionTooLong,
      `description must be at most ${RULE_DESCRIPTION_BYTES} bytes`,
    );
  }
}

const policyOf = (call: Call): IpPolicyRec =>
  lookup(call, 'IP policy', (id) => call.account.ipPolicies.get(id), CODE.policyNotFound);
const ruleOf = (call: Call): IpRuleRec =>
  lookup(call, 'IP policy rule', (id) => call.account.ipRules.get(id), CODE.ruleNotFound);

/** Read shapes, cached by record identity. */
class IpPolicyRenderer {
  readonly #render: Renderer;
  readonly #cache = new JsonCache();

  constructor(render: Renderer) {
    this.#render = render;
  }

  policyRef(id: string) {
    return this.#render.ref(`ip_policies/${id}`, id);
  }

  policy(rec: IpPolicyRec): string {
    return this.#cache.of(rec, () => ({
      id: rec.id,
      uri: this.policyRef(rec.id).uri,
      created_at: rec.created_at,
      ...describedJson(rec),
    }));
  }

  rule(rec: IpRuleRec): string {
    return this.#cache.of(rec, () => ({
      id: rec.id,
      uri: this.#render.ref(`ip_policy_rules/${rec.id}`, rec.id).uri,
      created_at: rec.created_at,
      ...describedJson(rec),
      cidr: rec.cidr,
      ip_policy: this.policyRef(rec.ip_policy_id),
      action: rec.action,
    }));
  }
}

// Long on purpose: a table of one short handler per operation, over shared deps.
export function ipPolicyHandlers({ store, render, ids, now }: HandlerDeps) {
  const view = new IpPolicyRenderer(render);
  const policyJson = (rec: IpPolicyRec) => view.policy(rec);
  const ruleJson = (rec: IpRuleRec) => view.rule(rec);
  return {
    createIpPolicy(call: Call): Reply {
      const b = parseBody(policyWriteSchema, call.body ?? {});
      if (call.account.ipPolicies.size >= ACCOUNT_LIMITS.ipPoliciesPerAccount) {
        throw new RequestError(
          400,
          CODE.tooManyPolicies,
          `this account has the most IP policies it may have (${ACCOUNT_LIMITS.ipPoliciesPerAccount})`,
        );
      }
      const rec: IpPolicyRec = {
        id: ids.next(ACCOUNT_ID_PREFIX.ipPolicy),
        created_at: rfc3339Seconds(now()),
        ...describedWrite(b),
      };
      const durable = store.commit({ t: 'put', k: 'ipp', a: call.accountId, r: rec });
      return json(201, policyJson(rec), durable);
    },
    getIpPolicy: (call: Call): Reply => json(200, policyJson(policyOf(call))),
    listIpPolicies: (call: Call): Promise<Reply> =>
      filteredList(render, call, {
        collection: call.account.ipPolicies,
        key: 'ip_policies',
        path: '/ip_policies',
        one: policyJson,
        fields: POLICY_FIELDS,
        cel: (rec) => ({ id: rec.id, created_at: rec.created_at, ...describedCel(rec) }),
      }),
    updateIpPolicy(call: Call): Reply {
      const policy = policyOf(call);
      const b = parseBody(policyWriteSchema, call.body);
      checkNotEmpty(b);
      const rec: IpPolicyRec = {
        ...policy,
        ...describedWrite(b, policy),
      };
      const durable = store.commit({ t: 'put', k: 'ipp', a: call.accountId, r: rec });
      return json(200, policyJson(rec), durable);
    },
    deleteIpPolicy(call: Call): Reply {
      // A traffic policy that names it keeps doing so: the reference then has no rules.
      const policy = policyOf(call);
      return noContent(store.commit({ t: 'del', k: 'ipp', a: call.accountId, id: policy.id }));
    },

    createIpPolicyRule(call: Call): Reply {
      const b = parseBody(ruleCreateSchema, call.body);
      const action = checkAction(b.action);
      checkRuleDescription(b.description);
      if (call.account.ipPolicies.get(b.ip_policy_id) === undefined) {
        throw new RequestError(
          400,
          CODE.unknownPolicy,
          `ip_policy_id ${b.ip_policy_id}: no such IP policy on this account`,
        );
      }
      const cidr = checkRuleCidr(b.cidr);
      if (call.account.rulesOf(b.ip_policy_id).length >= ACCOUNT_LIMITS.rulesPerIpPolicy) {
        throw new RequestError(
          400,
          CODE.tooManyRules,
          `IP policy ${b.ip_policy_id} has the most rules a policy may have (${ACCOUNT_LIMITS.rulesPerIpPolicy})`,
        );
      }
      checkUniqueCidr(call.account, b.ip_policy_id, cidr, b.cidr);
      const rec: IpRuleRec = {
        id: ids.next(ACCOUNT_ID_PREFIX.ipPolicyRule),
        created_at: rfc3339Seconds(now()),
        ip_policy_id: b.ip_policy_id,
        cidr: b.cidr,
        action,
        ...describedWrite(b),
      };
      const durable = store.commit({ t: 'put', k: 'ipr', a: call.accountId, r: rec });
      return json(201, ruleJson(rec), durable);
    },
    getIpPolicyRule: (call: Call): Reply => json(200, ruleJson(ruleOf(call))),
    listIpPolicyRules: (call: Call): Promise<Reply> =>
      filteredList(render, call, {
        collection: call.account.ipRules,
        key: 'ip_policy_rules',
        path: '/ip_policy_rules',
        one: ruleJson,
        fields: RULE_FIELDS,
        cel: (rec) => ({
          id: rec.id,
          created_at: rec.created_at,
          ...describedCel(rec),
          ip_policy: view.policyRef(rec.ip_policy_id),
          cidr: rec.cidr,
          action: rec.action,
        }),
      }),
    updateIpPolicyRule(call: Call): Reply {
      const rule = ruleOf(call);
      const body = call.body;
      checkFixedFields(
        body,
        ['action', 'ip_policy_id'],
        (field) => `${field} cannot change in place: delete the rule and create it anew`,
      );
      const b = parseBody(ruleUpdateSchema, body);
      checkNotEmpty(b);
      checkRuleDescription(b.description);
      if (b.cidr !== undefined) {
        const cidr = checkRuleCidr(b.cidr);
        checkUniqueCidr(call.account, rule.ip_policy_id, cidr, b.cidr, rule.id);
      }
      const rec: IpRuleRec = {
        ...rule,
        cidr: b.cidr ?? rule.cidr,
        ...describedWrite(b, rule),
      };
      const durable = store.commit({ t: 'put', k: 'ipr', a: call.accountId, r: rec });
      return json(200, ruleJson(rec), durable);
    },
    deleteIpPolicyRule(call: Call): Reply {
      const rule = ruleOf(call);
      return noContent(store.commit({ t: 'del', k: 'ipr', a: call.accountId, id: rule.id }));
    },
  };
}
