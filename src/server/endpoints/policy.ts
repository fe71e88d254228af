/**
 * Validation of a cloud endpoint's traffic policy (cloud-endpoints.md, section 3): the document
 * (YAML or JSON, read with the `yaml` library), its phases, the shape of each rule, CEL in
 * expressions and interpolations (./cel.ts), each action's type, phases and config
 * (./actions.ts), `${...}` only where the action allows it, unreachable actions, one
 * authentication action, one ai-gateway, and the terminating last rule of the entry phase. Every violation names its path inside the document
 * (`on_http_request[2].actions[0].config.headers`); the answer carries the first one's code and
 * lists them all.
 */

import { Lexer, parseDocument } from 'yaml';
import type { z } from 'zod';
import { type CelIssue, celScopeOf, checkCel, interpolations } from '../../hosted/cel.js';
import { bufCel } from '../../hosted/cel-libraries.js';
import {
  ACTION_MISNAMES,
  ACTION_TYPES,
  AUTH_ACTIONS,
  PHASE_KEYS,
  type Phase,
} from '../../hosted/policy-actions.js';
import { RequestError } from '../errors.js';
import { actionSpec, type PolicyContext, phaseOf, templateAllowed } from './actions.js';
import { ENDPOINT_ERROR_CODE as CODE, type EndpointErrorCode } from './codes.js';

interface Violation {
  readonly code: EndpointErrorCode;
  readonly path: string;
  readonly message: string;
}

const MAX_LISTED = 10;

/** A CEL problem, with the character it is at (1-based) in the expression or string value. */
function celMessage(issue: CelIssue): string {
  return `invalid CEL at character ${issue.offset + 1}: ${issue.message}`;
}
const HTTP_SCHEMES: ReadonlySet<string> = new Set(['http', 'https']);
const RULE_FIELDS: ReadonlySet<string> = new Set(['name', 'expressions', 'actions']);
const ACTION_FIELDS: ReadonlySet<string> = new Set(['type', 'config']);

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws the 400 for the first violation of `text` as the policy of an endpoint of `scheme`. */
export function checkTrafficPolicy(text: string, ctx: PolicyContext): void {
  const found = policyViolations(text, ctx);
  const first = found[0];
  if (first === undefined) return;
  const listed = found.slice(0, MAX_LISTED).map((v) => `${v.path}: ${v.message}`);
  if (found.length > MAX_LISTED) listed.push(`and ${found.length - MAX_LISTED} more`);
  throw new RequestError(400, first.code, `traffic_policy: ${listed.join('; ')}`);
}

/** Every violation, in document order, then the endpoint-wide ones. */
export function policyViolations(text: string, ctx: PolicyContext): Violation[] {
  const read = readDocument(text);
  if ('error' in read) return [{ code: CODE.badPolicy, path: '(document)', message: read.error }];
  const root = read.value;
  if (!isMap(root)) {
    return [
      { code: CODE.badPolicy, path: '(document)', message: 'must be a mapping of phases to rules' },
    ];
  }
  const out: Violation[] = [];
  const phases = new Map<Phase, string>();
  for (const [key, rules] of Object.entries(root)) {
    const phase = phaseOf(key);
    if (phase === undefined) {
      out.push({
        code: CODE.badPolicy,
        path: key,
        message: `unknown phase; expected one of ${PHASE_KEYS.join(', ')}`,
      });
      continue;
    }
    const seen = phases.get(phase);
    if (seen !== undefined) {
      out.push({ code: CODE.badPolicy, path: key, message: `the same phase as ${seen}` });
      continue;
    }
    phases.set(phase, key);
    if (phase !== 'on_tcp_connect' && !HTTP_SCHEMES.has(ctx.scheme)) {
      out.push({
        code: CODE.phaseProtocol,
        path: key,
        message: `invalid phase ${key} for protocol ${ctx.scheme} (only on_tcp_connect)`,
      });
      continue;
    }
    if (phase === 'on_tcp_connect' && ctx.internal && HTTP_SCHEMES.has(ctx.scheme)) {
      out.push({
        code: CODE.internalTcpConnect,
        path: key,
        message: `internal ${ctx.scheme} endpoints do not support on_tcp_connect`,
      });
      continue;
    }
    if (rules === null || rules === undefined) continue;
    if (!Array.isArray(rules)) {
      out.push({ code: CODE.badPolicy, path: key, message: 'must be a list of rules' });
      continue;
    }
    rules.forEach((rule, i) => {
      out.push(...ruleViolations(rule, `${key}[${i}]`, phase, ctx));
    });
  }
  out.push(...endpointViolations(root, phases, ctx));
  return out;
}

/** Nesting bound of the document, and of nodes visited (aliases share nodes, expanded here). */
const MAX_DEPTH = 64;
const MAX_NODES = 100_000;
const MAX_ALIASES = 100;
/**
 * Indentation plus block indicators on one line: far above any real policy, far below what makes
 * the parser spend seconds and hundreds of MiB (a MiB of `- - - ...` is 500,000 levels).
 */
const MAX_LINE_DEPTH = 512;

/**
 * Whether the text nests deeper than the bounds, read from `yaml`'s own tokens (its lexer is
 * cheap; composing a hostile document is not): flow collections by their brackets, block ones
 * by each line's indentation and indicators (an over-count, so a bound only).
 */
function nestsTooDeep(text: string): boolean {
  let flow = 0;
  let line = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      flow += 1;
      if (flow > MAX_DEPTH) return true;
    } else if (token === ']' || token === '}') flow -= 1;
    else if (token === '\n') line = 0;
    else if (token === '-' || token === '?' || token === ':') line += 1;
    else if (line === 0 && /^ +$/.test(token)) line = token.length;
    if (line > MAX_LINE_DEPTH) return true;
  }
  return false;
}

/**
 * The document as plain values, with `yaml` (JSON is YAML; the core schema): exactly one
 * document (a second is refused, never dropped), duplicate keys,
 * unknown tags and documents nested deeper than the bounds are errors, and aliases may expand to
 * at most `MAX_NODES` values.
 */
function readDocument(text: string): { value: unknown } | { error: string } {
  const refuse = (why: string) => ({ error: `not a YAML or JSON document: ${why}` });
  if (nestsTooDeep(text)) return refuse(`nesting exceeded (more than ${MAX_DEPTH} levels)`);
  const doc = parseDocument(text, {
    schema: 'core',
    uniqueKeys: true,
    strict: true,
    prettyErrors: false,
    // Not 'silent': that level also drops the error for a second document, and the parser
    // would hand back the first one alone.
    logLevel: 'error',
  });
  const problem = [...doc.errors, ...doc.warnings][0];
  if (problem !== undefined) {
    if (problem.code === 'MULTIPLE_DOCS') {
      return { error: 'holds more than one YAML document (a policy is exactly one document)' };
    }
    return refuse(
      problem.code === 'DUPLICATE_KEY' ? 'duplicate key' : (problem.message.split('\n')[0] ?? ''),
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    if (err instanceof ReferenceError)
      return { error: `the document expands to more than ${MAX_NODES} values (aliases included)` };
    return refuse(err instanceof RangeError ? 'nesting exceeded' : (err as Error).message);
  }
  let budget = MAX_NODES;
  const count = (v: unknown, depth: number): boolean => {
    if (--budget < 0 || depth > MAX_DEPTH) return false;
    if (Array.isArray(v)) return v.every((x) => count(x, depth + 1));
    if (isMap(v)) return Object.values(v).every((x) => count(x, depth + 1));
    return true;
  };
  if (!count(value, 0)) {
    return budget < 0
      ? { error: `the document expands to more than ${MAX_NODES} values (aliases included)` }
      : refuse(`nesting exceeded (more than ${MAX_DEPTH} levels)`);
  }
  return { value };
}

function ruleViolations(
  rule: unknown,
  path: string,
  phase: Phase,
  ctx: PolicyContext,
): Violation[] {
  const bad = (where: string, message: string, code: EndpointErrorCode = CODE.badPolicy) => ({
    code,
    path: where,
    message,
  });
  if (!isMap(rule)) return [bad(path, 'a rule must be a mapping with actions')];
  const out: Violation[] = [];
  for (const key of Object.keys(rule)) {
    if (!RULE_FIELDS.has(key))
      out.push(bad(`${path}.${key}`, `unknown field; a rule has ${[...RULE_FIELDS].join(', ')}`));
  }
  if (rule.name !== undefined && typeof rule.name !== 'string')
    out.push(bad(`${path}.name`, 'must be a string'));
  const exprs = rule.expressions;
  if (exprs !== undefined && exprs !== null) {
    if (!Array.isArray(exprs))
      out.push(bad(`${path}.expressions`, 'must be a list of CEL expressions'));
    else {
      exprs.forEach((e, j) => {
        const where = `${path}.expressions[${j}]`;
        if (typeof e !== 'string') out.push(bad(where, 'must be a string'));
        else {
          for (const issue of checkCel(e, 'bool')) out.push(bad(where, celMessage(issue)));
        }
      });
    }
  }
  const actions = rule.actions;
  if (!Array.isArray(actions) || actions.length === 0) {
    out.push(bad(`${path}.actions`, 'a rule needs a non-empty list of actions'));
    return out;
  }
  let terminatedBy: string | undefined;
  actions.forEach((action, k) => {
    const where = `${path}.actions[${k}]`;
    if (terminatedBy !== undefined) {
      out.push(
        bad(where, `unreachable: ${terminatedBy} before it ends the phase`, CODE.unreachableAction),
      );
    }
    const result = actionViolations(action, where, phase, ctx);
    out.push(...result.violations);
    if (result.terminates && terminatedBy === undefined) terminatedBy = `${path}.actions[${k}]`;
  });
  return out;
}

function actionViolations(
  action: unknown,
  path: string,
  phase: Phase,
  ctx: PolicyContext,
): { violations: Violation[]; terminates: boolean } {
  const fail = (where: string, message: string, code: EndpointErrorCode = CODE.badPolicy) => ({
    violations: [{ code, path: where, message }],
    terminates: false,
  });
  if (!isMap(action)) return fail(path, 'an action must be a mapping with a type');
  const unknown = Object.keys(action).filter((k) => !ACTION_FIELDS.has(k));
  if (unknown.length > 0)
    return fail(`${path}.${unknown[0]}`, 'unknown field; an action has type and config');
  if (typeof action.type !== 'string')
    return fail(`${path}.type`, 'must be an action type (a string)');
  const spec = actionSpec(action.type);
  if (spec === undefined) {
    const meant = Object.hasOwn(ACTION_MISNAMES, action.type)
      ? ` (did you mean ${ACTION_MISNAMES[action.type]}?)`
      : '';
    return fail(
      `${path}.type`,
      `unknown action type ${JSON.stringify(action.type)}${meant}; known: ${ACTION_TYPES.join(', ')}`,
      CODE.unknownAction,
    );
  }
  if (!spec.phases.includes(phase)) {
    return fail(
      `${path}.type`,
      `${action.type} cannot run in ${phase} (only ${spec.phases.join(', ')})`,
      CODE.actionPhase,
    );
  }
  const config = action.config ?? {};
  if (!isMap(config)) return fail(`${path}.config`, 'must be a mapping', CODE.configParse);
  const violations = [
    ...configViolations(spec.config(phase, ctx), config, `${path}.config`),
    ...celViolations(action.type, spec, config, `${path}.config`),
  ];
  return { violations, terminates: violations.length === 0 && spec.terminating(config) };
}

function configViolations(schema: z.ZodType, config: Json, path: string): Violation[] {
  const result = schema.safeParse(config);
  if (result.success) return [];
  return result.error.issues.map((issue) => {
    const sub = issue.path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('');
    const missing = issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
    return {
      code: issueCode(issue, missing),
      path: `${path}${sub}`,
      message: missing ? 'is required' : issue.message,
    };
  });
}

/** The service's code for a config issue: its own, else by the issue's kind. */
function issueCode(issue: z.core.$ZodIssue, missing: boolean): EndpointErrorCode {
  const own = (issue as { params?: { code?: unknown } }).params?.code;
  if (typeof own === 'string') return own as EndpointErrorCode;
  if (missing) return CODE.missingElement;
  switch (issue.code) {
    case 'invalid_type':
    case 'unrecognized_keys':
    case 'invalid_union':
      return CODE.configParse;
    case 'invalid_value':
      return CODE.notMember;
    case 'invalid_format':
      return CODE.notUrl;
    case 'too_big':
      return issue.origin === 'array'
        ? CODE.tooManyEntries
        : issue.origin === 'string'
          ? CODE.tooLong
          : CODE.outOfRange;
    case 'too_small':
      if (issue.origin === 'array' || issue.origin === 'string')
        return Number(issue.minimum) <= 1 ? CODE.empty : CODE.tooShort;
      return CODE.outOfRange;
    default:
      return CODE.configValue;
  }
}

/**
 * CEL in config strings: `${...}` only where the action allows it (2204 elsewhere: the service
 * would read it as plain text), each interpolation parsed (2224), bare CEL fields parsed (2200),
 * and no set-vars value built on variables set-vars made (2251).
 */
function celViolations(
  type: string,
  spec: NonNullable<ReturnType<typeof actionSpec>>,
  config: Json,
  path: string,
): Violation[] {
  const out: Violation[] = [];
  for (const [field, value] of Object.entries(config)) {
    const bare = spec.bareCel?.includes(field) === true;
    walkStrings(value, `${path}.${field}`, [], (text, where, at) => {
      if (bare) {
        for (const issue of checkCel(text, 'any', celScopeOf(type, field))) {
          out.push({
            code: CODE.badExpression,
            path: where,
            message: `not a CEL expression: ${celMessage(issue)}`,
          });
        }
        return;
      }
      if (!text.includes('${')) return;
      if (!templateAllowed(spec, field, at)) {
        out.push({
          code: CODE.configValue,
          path: where,
          message: `${type} ${field} does not take \${...} templates`,
        });
        return;
      }
      const found = interpolations(text);
      if ('unterminated' in found) {
        out.push({
          code: CODE.badTemplate,
          path: where,
          message: `unterminated \${ at character ${found.unterminated + 1}: no matching }`,
        });
        return;
      }
      for (const { expr, offset } of found.exprs) {
        const why = checkCel(expr)[0];
        if (why !== undefined) {
          out.push({
            code: CODE.badTemplate,
            path: where,
            message: celMessage({ offset: offset + why.offset, message: why.message }),
          });
        } else if (type === 'set-vars' && namesVars(expr)) {
          out.push({
            code: CODE.varsFromVars,
            path: where,
            message: 'cannot set variables based on variables previously created by set-vars',
          });
        }
      }
    });
  }
  return out;
}

/** Whether a parsed CEL expression reads the `vars` identifier. */
function namesVars(expr: string): boolean {
  const stack: unknown[] = [bufCel().parse(expr).expr];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const kind = (node as { exprKind?: { case?: string; value?: { name?: string } } }).exprKind;
    if (kind?.case === 'identExpr' && kind.value?.name === 'vars') return true;
    for (const v of Object.values(node)) if (typeof v === 'object') stack.push(v);
  }
  return false;
}

/** Every string below `value`, with its path in the document and its keys below the field. */
function walkStrings(
  value: unknown,
  path: string,
  at: readonly string[],
  visit: (s: string, path: string, at: readonly string[]) => void,
): void {
  if (typeof value === 'string') {
    visit(value, path, at);
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries())
      walkStrings(v, `${path}[${i}]`, [...at, String(i)], visit);
  } else if (isMap(value)) {
    for (const [k, v] of Object.entries(value)) walkStrings(v, `${path}.${k}`, [...at, k], visit);
  }
}

/** One authentication action per endpoint (2239); the entry phase ends in a terminating action (2235). */
function endpointViolations(
  root: Json,
  phases: ReadonlyMap<Phase, string>,
  ctx: PolicyContext,
): Violation[] {
  const out: Violation[] = [];
  const auth: string[] = [];
  const gateways: string[] = [];
  for (const key of phases.values()) {
    const rules = root[key];
    if (!Array.isArray(rules)) continue;
    rules.forEach((rule, i) => {
      const actions = isMap(rule) && Array.isArray(rule.actions) ? rule.actions : [];
      actions.forEach((a, k) => {
        if (isMap(a) && typeof a.type === 'string' && AUTH_ACTIONS.has(a.type))
          auth.push(`${key}[${i}].actions[${k}]`);
        if (isMap(a) && a.type === 'ai-gateway') gateways.push(`${key}[${i}].actions[${k}]`);
      });
    });
  }
  if (auth.length > 1) {
    out.push({
      code: CODE.severalAuthActions,
      path: auth[1] as string,
      message: `a second authentication action (the first is ${auth[0]}); at most one of oauth, openid-connect, saml per endpoint`,
    });
  }
  if (gateways.length > 1) {
    out.push({
      code: CODE.severalGateways,
      path: gateways[1] as string,
      message: `more than one ai-gateway action (the first is ${gateways[0]})`,
    });
  }
  const entry: Phase = HTTP_SCHEMES.has(ctx.scheme) ? 'on_http_request' : 'on_tcp_connect';
  const key = phases.get(entry) ?? entry;
  const rules = root[key];
  const last: unknown = Array.isArray(rules) ? rules[rules.length - 1] : undefined;
  const why = unterminatedReason(last, entry);
  if (why !== undefined) {
    const where = Array.isArray(rules) && rules.length > 0 ? `${key}[${rules.length - 1}]` : key;
    out.push({
      code: CODE.notTerminated,
      path: where,
      message: `a ${ctx.scheme} endpoint's policy must end in a terminating action in ${entry}: ${why}`,
    });
  }
  return out;
}

function unterminatedReason(last: unknown, entry: Phase): string | undefined {
  if (!isMap(last)) return `${entry} has no rules`;
  const exprs = last.expressions;
  if (Array.isArray(exprs) && exprs.length > 0)
    return 'its last rule has expressions (it may not run)';
  const actions = Array.isArray(last.actions) ? last.actions : [];
  const final: unknown = actions[actions.length - 1];
  if (!isMap(final) || typeof final.type !== 'string') return 'its last rule has no actions';
  const spec = actionSpec(final.type);
  const config = isMap(final.config) ? final.config : {};
  if (spec === undefined || !spec.terminating(config)) {
    return `its last rule ends with ${final.type}, which does not end the phase (deny, custom-response, forward-internal without on_error: continue, close-connection do)`;
  }
  return undefined;
}
