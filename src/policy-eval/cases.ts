/**
 * Policy tests: one case of `tests:` run through the evaluator, its outcome held to what the
 * case expects, and the words every output uses for an outcome ("forwarded to
 * https://app.internal", "oauth google", "refused by restrict-ips (403)") and for the rule that
 * decided it. Pure.
 */
import type { PolicyCase, PolicyExpect } from '../manifest/policy/tests.js';
import {
  type Evaluation,
  evaluatePolicy,
  headerLists,
  type Outcome,
  type RuleRef,
} from './evaluate.js';

/** An endpoint as the tests need it: its URL and its policy document. */
export interface TestedEndpoint {
  readonly url: string;
  readonly traffic_policy: Readonly<Record<string, unknown>>;
}

export interface CaseResult {
  readonly name: string;
  readonly passed: boolean;
  readonly evaluation: Evaluation;
  /** What the case expects, in words. */
  readonly expected: string;
  /** What the policy did, in words. */
  readonly actual: string;
  /** The rule that decided, in words (empty when none did). */
  readonly decidedBy: string;
}

/** The outcome in words. */
export function describeOutcome(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'forward':
      return `forwarded to ${outcome.url}`;
    case 'respond':
      return `answered ${outcome.status}`;
    case 'refuse':
      return `refused by ${outcome.by} (${outcome.status})`;
    case 'redirect':
      return `redirected ${outcome.status} to ${outcome.url}`;
    case 'auth':
      return `${outcome.by} ${outcome.provider}`;
    case 'close':
      return `connection closed by ${outcome.by}`;
    case 'unhandled':
      return 'not handled (no terminating action ran)';
    case 'error':
      return `error: ${outcome.message}`;
  }
}

/** `on_http_request[2] "admin" actions[0] (deny)`: where the decision was written. */
export function describeRule(ref: RuleRef | undefined): string {
  if (ref === undefined) return '';
  const name = ref.name === undefined ? '' : ` ${JSON.stringify(ref.name)}`;
  const action = ref.action < 0 ? ' expressions' : ` actions[${ref.action}] (${ref.type})`;
  return `${ref.phase}[${ref.rule}]${name}${action}`;
}

/** The status the client is answered with, when the outcome is an answer. */
export function outcomeStatus(outcome: Outcome): number | undefined {
  return outcome.kind === 'respond' || outcome.kind === 'refuse' || outcome.kind === 'redirect'
    ? outcome.status
    : undefined;
}

function sameUrl(a: string, b: string): boolean {
  if (URL.canParse(a) && URL.canParse(b)) return new URL(a).href === new URL(b).href;
  return a === b;
}

export function describeExpect(expect: PolicyExpect): string {
  const parts: string[] = [];
  if (expect.forward !== undefined) parts.push(`forwarded to ${expect.forward}`);
  if (expect.redirect !== undefined) parts.push(`redirected to ${expect.redirect}`);
  if (expect.auth !== undefined) parts.push(`sent to log in with ${expect.auth}`);
  if (expect.refused_by !== undefined) parts.push(`refused by ${expect.refused_by}`);
  if (expect.status !== undefined) parts.push(`status ${expect.status}`);
  if (expect.closed !== undefined) parts.push(expect.closed ? 'connection closed' : 'not closed');
  if (expect.rule !== undefined) parts.push(`decided by rule ${JSON.stringify(expect.rule)}`);
  for (const [name, value] of Object.entries(expect.headers_added ?? {}))
    parts.push(`header ${name}: ${value} added`);
  for (const name of expect.headers_removed ?? []) parts.push(`header ${name} removed`);
  return parts.join(', ');
}

/** Whether the evaluation is what `expect` says (every key it gives must hold). */
export function meets(evaluation: Evaluation, expect: PolicyExpect): boolean {
  const o = evaluation.outcome;
  if (expect.status !== undefined && outcomeStatus(o) !== expect.status) return false;
  if (expect.forward !== undefined && !(o.kind === 'forward' && sameUrl(o.url, expect.forward)))
    return false;
  if (expect.redirect !== undefined && !(o.kind === 'redirect' && sameUrl(o.url, expect.redirect)))
    return false;
  if (
    expect.auth !== undefined &&
    !(o.kind === 'auth' && (o.provider === expect.auth || o.by === expect.auth))
  )
    return false;
  if (
    expect.refused_by !== undefined &&
    !((o.kind === 'refuse' || o.kind === 'close') && o.by === expect.refused_by)
  )
    return false;
  if (expect.closed !== undefined && (o.kind === 'close') !== expect.closed) return false;
  if (expect.rule !== undefined && evaluation.decidedBy?.name !== expect.rule) return false;
  for (const [name, value] of Object.entries(expect.headers_added ?? {})) {
    if (!(evaluation.headersAdded[name.toLowerCase()] ?? []).includes(value)) return false;
  }
  for (const name of expect.headers_removed ?? []) {
    if (!evaluation.headersRemoved.includes(name.toLowerCase())) return false;
  }
  return true;
}

/** Runs one case against an endpoint's policy. */
export function runCase(endpoint: TestedEndpoint, test: PolicyCase): CaseResult {
  const evaluation = evaluatePolicy(
    endpoint.traffic_policy,
    endpoint.url,
    {
      method: test.request.method.toUpperCase(),
      url: test.request.url,
      clientIp: test.request.client_ip,
      headers: headerLists(test.request.headers),
      tls: test.request.tls,
    },
    test.given ?? {},
  );
  return {
    name: test.name,
    passed: meets(evaluation, test.expect),
    evaluation,
    expected: describeExpect(test.expect),
    actual: describeOutcome(evaluation.outcome),
    decidedBy: describeRule(evaluation.decidedBy),
  };
}

/** A failed case in one line: the case, what was expected, what happened and which rule did it. */
export function failureMessage(result: CaseResult): string {
  const by = result.decidedBy === '' ? '' : ` (decided by ${result.decidedBy})`;
  return `policy test "${result.name}" failed: expected ${result.expected}; got ${result.actual}${by}`;
}
