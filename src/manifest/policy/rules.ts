/**
 * The traffic policy rules that need more than one value: phases per scheme (tls and tcp
 * endpoints have only on_tcp_connect, internal http and https ones have no on_tcp_connect),
 * one key per phase (a legacy name and its new name together), each action in a phase it
 * supports (deny takes no config in on_tcp_connect), forward-internal's target, unreachable
 * actions after a terminating one, at most one authentication action and one ai-gateway, the
 * entry phase's terminating last rule, and CEL: the rules' expressions, `${...}` only where the
 * action table allows it, bare expressions, each checked against the service's variables and
 * functions (src/hosted/cel.ts), and no set-vars value built on `vars`. Runs on a document that
 * passed its shape (`./schema.ts`); every issue names the exact place inside the document. Pure.
 */

import {
  type CelIssue,
  celScopeOf,
  checkCel,
  checkInterpolations,
  interpolatesIdentifier,
} from '../../hosted/cel.js';
import {
  AUTH_ACTIONS,
  actionSpec,
  type FieldSpec,
  interpolationAllowed,
  isTemplated,
  PHASE_KEYS,
  type Phase,
  type PhaseKey,
  phaseOf,
  SECRET_CONFIG_FIELDS,
} from '../../hosted/policy-actions.js';
import { forwardTargetProblem } from '../endpoint-url.js';
import type { FieldPath } from '../paths.js';

export interface PolicyIssue {
  /** Relative to the policy document. */
  readonly path: FieldPath;
  /** Where in the string value at `path` (a CEL expression's offending token). */
  readonly offset?: number;
  readonly message: string;
}

function cel(issue: CelIssue): string {
  return `CEL: ${issue.message}`;
}

type Json = Readonly<Record<string, unknown>>;
interface Action {
  readonly type: string;
  readonly config?: Json | null;
}
interface Rule {
  readonly expressions?: readonly string[] | null;
  readonly actions: readonly Action[];
}

const HTTP_SCHEMES: ReadonlySet<string> = new Set(['http', 'https']);
const TERMINATING_NAMES =
  'deny, custom-response, forward-internal without on_error: continue, close-connection';

/** The endpoint a policy is for: its scheme, and whether it is internal (binding `internal`). */
export interface PolicyEndpoint {
  readonly scheme: string;
  readonly internal: boolean;
}

/** Every rule of a shape-valid policy of `endpoint`, in document order. */
export function policyIssues(
  policy: Json,
  endpoint: PolicyEndpoint,
  sensitive: (path: FieldPath) => boolean = () => false,
): PolicyIssue[] {
  const { scheme } = endpoint;
  const out: PolicyIssue[] = [];
  const keys = new Map<Phase, PhaseKey>();
  const auth: FieldPath[] = [];
  const gateways: FieldPath[] = [];
  for (const key of PHASE_KEYS) {
    if (!Object.hasOwn(policy, key)) continue;
    const phase = phaseOf(key);
    const seen = keys.get(phase);
    if (seen !== undefined) {
      out.push({ path: [key], message: `the same phase as ${seen}: write one of them` });
      continue;
    }
    keys.set(phase, key);
    if (phase !== 'on_tcp_connect' && !HTTP_SCHEMES.has(scheme)) {
      out.push({
        path: [key],
        message: `a ${scheme} endpoint has no HTTP phases (only on_tcp_connect)`,
      });
      continue;
    }
    if (phase === 'on_tcp_connect' && endpoint.internal && HTTP_SCHEMES.has(scheme)) {
      out.push({
        path: [key],
        message: `an internal ${scheme} endpoint has no on_tcp_connect phase (traffic forwarded to it opens no connection)`,
      });
      continue;
    }
    const rules = (policy[key] ?? []) as readonly Rule[];
    rules.forEach((rule, r) => {
      out.push(...ruleIssues(rule, [key, r], { phase, scheme, sensitive }));
      rule.actions.forEach((a, k) => {
        if (AUTH_ACTIONS.has(a.type)) auth.push([key, r, 'actions', k, 'type']);
        if (a.type === 'ai-gateway') gateways.push([key, r, 'actions', k, 'type']);
      });
    });
  }
  const [gateway, another] = gateways;
  if (gateway !== undefined && another !== undefined) {
    out.push({
      path: another,
      message: `a second ai-gateway action (the first is ${formatted(gateway)}); a policy has at most one`,
    });
  }
  const [first, second] = auth;
  if (first !== undefined && second !== undefined) {
    out.push({
      path: second,
      message: `a second authentication action (the first is ${formatted(first)}); an endpoint has at most one of oauth, openid-connect, saml`,
    });
  }
  const end = entryIssue(policy, keys, scheme);
  if (end !== undefined) out.push(end);
  return out;
}

function formatted(path: FieldPath): string {
  return path
    .slice(0, -1)
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');
}

interface Context {
  readonly phase: Phase;
  readonly scheme: string;
  /** Whether the value at a path (in the policy) was read from env or file. */
  readonly sensitive: (path: FieldPath) => boolean;
}

function ruleIssues(rule: Rule, at: FieldPath, ctx: Context): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  (rule.expressions ?? []).forEach((expression, e) => {
    for (const issue of checkCel(expression, 'bool')) {
      out.push({ path: [...at, 'expressions', e], offset: issue.offset, message: cel(issue) });
    }
  });
  let terminatedBy: number | undefined;
  rule.actions.forEach((action, k) => {
    const here: FieldPath = [...at, 'actions', k];
    if (terminatedBy !== undefined) {
      out.push({
        path: [...here, 'type'],
        message: `unreachable: actions[${terminatedBy}] (${rule.actions[terminatedBy]?.type}) ends the phase before it`,
      });
    }
    const found = actionIssues(action, here, ctx);
    out.push(...found);
    const spec = actionSpec(action.type);
    if (terminatedBy === undefined && found.length === 0 && spec?.terminating(action.config ?? {}))
      terminatedBy = k;
  });
  return out;
}

function actionIssues(action: Action, at: FieldPath, ctx: Context): PolicyIssue[] {
  const { phase, scheme } = ctx;
  const spec = actionSpec(action.type);
  if (spec === undefined) return []; // the shape phase reported it
  if (!spec.phases.includes(phase)) {
    return [
      {
        path: [...at, 'type'],
        message: `${action.type} cannot run in ${phase} (only in ${spec.phases.join(', ')})`,
      },
    ];
  }
  const config = action.config ?? {};
  const out: PolicyIssue[] = [];
  if (spec.noConfigIn?.includes(phase)) {
    for (const key of Object.keys(config)) {
      out.push({
        path: [...at, 'config', key],
        message: `${action.type} takes no config in ${phase}`,
      });
    }
  }
  if (
    action.type === 'forward-internal' &&
    typeof config.url === 'string' &&
    !isTemplated(config.url)
  ) {
    const why = forwardTargetProblem(config.url, scheme);
    if (why !== undefined) out.push({ path: [...at, 'config', 'url'], message: why });
  }
  for (const [name, value] of Object.entries(config)) {
    const field = Object.hasOwn(spec.fields, name) ? spec.fields[name] : undefined;
    if (field === undefined) continue; // the shape phase reported it
    const base: FieldPath = [...at, 'config', name];
    walkStrings(value, base, (text, path) => {
      const found = celIssues(action.type, name, field, text, path.slice(base.length));
      if (found.length === 0) return;
      // A secret's text must not show, not even the names the CEL checker quotes, nor where.
      const secret = SECRET_CONFIG_FIELDS.has(name) || field.secret === true || ctx.sensitive(path);
      if (secret && found.some((f) => f.quotes)) {
        out.push({ path, message: SECRET_CEL_MESSAGE });
        return;
      }
      for (const f of found) {
        out.push(
          f.offset === undefined
            ? { path, message: f.message }
            : { path, offset: f.offset, message: f.message },
        );
      }
    });
  }
  return out;
}

const SECRET_CEL_MESSAGE = 'a ${...} interpolation in this sensitive value is not CEL';

/**
 * What is wrong with the CEL of a string in a config field, each at its offset in the string
 * where the checker gives one, and whether the message quotes the text (never shown for a
 * secret).
 */
function celIssues(
  type: string,
  name: string,
  field: FieldSpec,
  text: string,
  inner: FieldPath,
): { readonly message: string; readonly quotes: boolean; readonly offset?: number }[] {
  const located = (issues: CelIssue[]) =>
    issues.map((i) => ({ message: cel(i), quotes: true, offset: i.offset }));
  if (field.cel === true) return located(checkCel(text, 'any', celScopeOf(type, name)));
  if (!isTemplated(text)) return [];
  if (!interpolationAllowed(field, inner)) {
    return [
      {
        message: `${name} takes no \${...} interpolation here (the service reads it as written)`,
        quotes: false,
      },
    ];
  }
  const found = checkInterpolations(text);
  if (found.length > 0) return located(found);
  if (type === 'set-vars' && interpolatesIdentifier(text, 'vars')) {
    return [
      { message: 'a set-vars value cannot use variables set by set-vars (vars.*)', quotes: false },
    ];
  }
  return [];
}

function walkStrings(
  value: unknown,
  path: FieldPath,
  visit: (s: string, path: FieldPath) => void,
): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walkStrings(v, [...path, i], visit);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) walkStrings(v, [...path, k], visit);
  }
}

/** The entry phase (on_http_request for http and https, else on_tcp_connect) must end the request. */
function entryIssue(
  policy: Json,
  keys: ReadonlyMap<Phase, PhaseKey>,
  scheme: string,
): PolicyIssue | undefined {
  const entry: Phase = HTTP_SCHEMES.has(scheme) ? 'on_http_request' : 'on_tcp_connect';
  const key = keys.get(entry);
  const must = `a ${scheme} endpoint's policy must end in a terminating action in ${entry} (${TERMINATING_NAMES})`;
  const rules = key === undefined ? undefined : (policy[key] as readonly Rule[] | null | undefined);
  const last = rules?.[rules.length - 1];
  if (key === undefined || rules === undefined || rules === null || last === undefined) {
    return { path: key === undefined ? [] : [key], message: `${must}: ${entry} has no rules` };
  }
  const r = rules.length - 1;
  if (last.expressions !== undefined && last.expressions !== null && last.expressions.length > 0) {
    return {
      path: [key, r, 'expressions'],
      message: `${must}: its last rule has expressions, so it may not run`,
    };
  }
  const final = last.actions[last.actions.length - 1];
  const spec = final === undefined ? undefined : actionSpec(final.type);
  if (final !== undefined && spec !== undefined && !spec.terminating(final.config ?? {})) {
    return {
      path: [key, r, 'actions', last.actions.length - 1, 'type'],
      message: `${must}: its last rule ends with ${final.type}, which does not end the phase`,
    };
  }
  return undefined;
}
