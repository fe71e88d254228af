/**
 * The impact of a policy change: the old and the new policy evaluated on the endpoint's declared
 * cases and on probes generated from both policies' guards (./probes.ts), and the requests whose
 * outcome changes, in words ("GET https://app.example.com/admin: oauth google -> forwarded to
 * https://admin.internal"). A change that lets a request reach the upstream (or an answer)
 * without an authentication, IP restriction or refusal it went through before is flagged. Pure.
 */
import type { PolicyCase, PolicyGiven } from '../manifest/policy/tests.js';
import { describeOutcome } from './cases.js';
import {
  type Evaluation,
  evaluatePolicy,
  evaluateWatched,
  headerLists,
  type PolicyRequest,
  phaseRules,
} from './evaluate.js';
import { probesFor } from './probes.js';

type Json = Readonly<Record<string, unknown>>;

export interface ImpactChange {
  /** The request, in words (method, URL, client address, headers, login, case name). */
  readonly request: string;
  readonly before: string;
  readonly after: string;
  /** Set when the request now gets through without a protection it had (`without oauth`). */
  readonly weakened?: string;
}

export interface PolicyImpact {
  readonly changes: ImpactChange[];
  /** Requests evaluated (declared cases and probes). */
  readonly requests: number;
}

/** Actions that stand between a request and the upstream. */
const PROTECTIONS: ReadonlySet<string> = new Set([
  'oauth',
  'openid-connect',
  'saml',
  'restrict-ips',
  'basic-auth',
  'jwt-validation',
  'verify-webhook',
  'deny',
]);

function protections(e: Evaluation): Set<string> {
  const out = new Set(e.applied.filter((t) => PROTECTIONS.has(t)));
  const o = e.outcome;
  if ((o.kind === 'refuse' || o.kind === 'close' || o.kind === 'auth') && PROTECTIONS.has(o.by))
    out.add(o.by);
  return out;
}

const reachable = (e: Evaluation) => e.outcome.kind === 'forward' || e.outcome.kind === 'respond';

/** The outcome in words, with the protections a request that got through went through. */
function shown(e: Evaluation): string {
  const through = reachable(e) ? [...protections(e)] : [];
  const text = describeOutcome(e.outcome);
  return through.length === 0 ? text : `${text} (through ${through.join(', ')})`;
}

function describeRequest(request: PolicyRequest, given: PolicyGiven, name?: string): string {
  const parts = [`${request.method} ${request.url}`];
  if (request.clientIp !== undefined) parts.push(`from ${request.clientIp}`);
  for (const [h, values] of Object.entries(request.headers ?? {}))
    parts.push(`${h}: ${values.join(', ')}`);
  if (given.identity !== undefined) {
    const who = given.identity.email ?? given.identity.name ?? 'someone';
    parts.push(`logged in as ${who}`);
  }
  if (name !== undefined) parts.push(`(case ${JSON.stringify(name)})`);
  return parts.join(' ');
}

/**
 * The rules `larger` adds to `smaller` (`key/index`), when each phase of `larger` runs the rules
 * of `smaller`'s in the same order with others among them (rules removed, or rules added, not
 * both); undefined otherwise. A request on which none of the added rules fires (its guard holds
 * or fails) goes through `larger` exactly as through `smaller`: a guard that does not hold
 * changes nothing, so the other rules see the same state.
 */
function addedRules(smaller: Json, larger: Json): Added | undefined {
  const small = phaseRules(smaller);
  const keys = new Set<string>();
  let last: readonly [number, number] | undefined;
  for (const [i, { key, rules }] of phaseRules(larger).entries()) {
    const theirs = small[i]?.rules;
    if (!Array.isArray(rules) || !Array.isArray(theirs)) return undefined;
    const texts = theirs.map((rule) => JSON.stringify(rule));
    let matched = 0;
    for (const [r, rule] of rules.entries()) {
      if (matched < texts.length && JSON.stringify(rule) === texts[matched]) matched += 1;
      else {
        keys.add(`${key}/${r}`);
        last = [i, r];
      }
    }
    if (matched < texts.length) return undefined;
  }
  return { keys, last };
}

/** The rules one policy adds to the other (`key/index`), and the last of them (phase, rule). */
interface Added {
  readonly keys: Set<string>;
  readonly last: readonly [number, number] | undefined;
}

/**
 * `request` through both policies, or undefined when they decide it alike. When one only adds
 * rules to the other, the larger one is evaluated, and the smaller one only if an added rule
 * fired: otherwise its evaluation is the larger one's, and the larger one's run stops as soon as
 * it is past the last added rule (what follows decides alike for both).
 */
function evaluateBoth(
  before: Json,
  after: Json,
  extends_: { readonly larger: 'before' | 'after'; readonly added: Added } | undefined,
  endpointUrl: string,
  request: PolicyRequest,
  given: PolicyGiven,
): [Evaluation, Evaluation] | undefined {
  if (extends_ === undefined) {
    return [
      evaluatePolicy(before, endpointUrl, request, given),
      evaluatePolicy(after, endpointUrl, request, given),
    ];
  }
  const [larger, smaller] = extends_.larger === 'before' ? [before, after] : [after, before];
  const { keys, last } = extends_.added;
  let addedFired = false;
  const big = evaluateWatched(larger, endpointUrl, request, given, {
    fired: (key, rule) => {
      if (keys.has(`${key}/${rule}`)) addedFired = true;
    },
    stop: (phase, rule) =>
      !addedFired &&
      (last === undefined || phase > last[0] || (phase === last[0] && rule > last[1])),
  });
  if (!addedFired) return undefined;
  const small = evaluatePolicy(smaller, endpointUrl, request, given);
  // An added rule fired, so the run was not stopped.
  const decided = big as Evaluation;
  return extends_.larger === 'before' ? [decided, small] : [small, decided];
}

/**
 * What changes for requests to the endpoint at `endpointUrl` when its policy goes from `before`
 * (undefined: no policy yet, nothing to compare) to `after`.
 */
export function policyImpact(
  endpointUrl: string,
  before: Json | undefined,
  after: Json,
  cases: readonly PolicyCase[] = [],
): PolicyImpact {
  if (before === undefined) return { changes: [], requests: 0 };
  const requests: { request: PolicyRequest; given: PolicyGiven; name?: string }[] = [
    ...cases.map((c) => ({
      request: {
        method: c.request.method.toUpperCase(),
        url: c.request.url,
        clientIp: c.request.client_ip,
        headers: headerLists(c.request.headers),
        ...(c.request.tls === undefined ? {} : { tls: c.request.tls }),
      },
      given: c.given ?? {},
      name: c.name,
    })),
    ...probesFor(endpointUrl, [before, after]),
  ];
  const changes: ImpactChange[] = [];
  const seen = new Set<string>();
  /** Method, URL and the change: a variant (an address, a login) that changes the same way folds. */
  const folded = new Set<string>();
  const removed = addedRules(after, before);
  const added = removed === undefined ? addedRules(before, after) : undefined;
  const extends_ =
    removed !== undefined
      ? { larger: 'before' as const, added: removed }
      : added !== undefined
        ? { larger: 'after' as const, added }
        : undefined;
  for (const { request, given, name } of requests) {
    const both = evaluateBoth(before, after, extends_, endpointUrl, request, given);
    if (both === undefined) continue;
    const [old, now] = both;
    const was = shown(old);
    const is = shown(now);
    if (was === is) continue;
    const words = describeRequest(request, given, name);
    const fold = JSON.stringify([request.method, request.url, was, is]);
    if (seen.has(words) || (name === undefined && folded.has(fold))) continue;
    seen.add(words);
    folded.add(fold);
    const lost = [...protections(old)].filter((p) => !protections(now).has(p));
    changes.push({
      request: words,
      before: was,
      after: is,
      ...(reachable(now) && lost.length > 0 ? { weakened: `without ${lost.join(', ')}` } : {}),
    });
  }
  return { changes, requests: requests.length };
}
