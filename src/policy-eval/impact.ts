/**
 * The impact of a policy change: the old and the new policy evaluated on the endpoint's declared
 * cases and on probes generated from both policies' guards (./probes.ts), and the requests whose
 * outcome changes, in words ("GET https://app.example.com/admin: oauth google -> forwarded to
 * https://admin.internal"). A change that lets a request reach the upstream (or an answer)
 * without an authentication, IP restriction or refusal it went through before is flagged. Pure.
 */
import type { PolicyCase, PolicyGiven } from '../manifest/policy/tests.js';
import { describeOutcome } from './cases.js';
import { type Evaluation, evaluatePolicy, headerLists, type PolicyRequest } from './evaluate.js';
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
  for (const { request, given, name } of requests) {
    const old = evaluatePolicy(before, endpointUrl, request, given);
    const now = evaluatePolicy(after, endpointUrl, request, given);
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
