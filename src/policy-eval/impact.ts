/**
 * The impact of a policy change: the old and the new policy evaluated on the endpoint's declared
 * cases and on probes generated from both policies' guards (./probes.ts), and the requests whose
 * outcome changes, in words ("GET https://app.example.com/admin: oauth google -> forwarded to
 * https://admin.internal"). A change that lets a request reach the upstream (or an answer)
 * without an authentication, IP restriction or refusal it went through before is flagged. Pure.
 */
import type { PolicyCase, PolicyGiven } from '../manifest/policy/tests.js';
import { describeOutcome } from './cases.js';
import { guardReads } from './cel.js';
import {
  type Evaluation,
  evaluatePrepared,
  headerLists,
  type PhaseRules,
  type PolicyRequest,
  type PreparedRequest,
  phaseRules,
  prepareRequest,
  type RequestShare,
  type Watch,
} from './evaluate.js';
import { probesFor } from './probes.js';
import { type Differing, differingRules, numberRules } from './rules.js';

/*
 * How the preview's code is written (here, ./probes.ts, ./rules.ts). A plan previews each changed
 * endpoint once, in a process that plans once, so most of this code runs before V8 has compiled
 * it, and V8 compiling it is most of what it costs (bench/README.md, "Policy evaluation"). So
 * what runs once an endpoint is indexed loops over arrays, without callbacks or iterators:
 * - a closure's variables live in a context each call allocates, and each callback inlined
 *   grows what V8 compiles;
 * - `for...of` and `[a, b] = pair` run the iterator protocol, which V8 compiles with an implicit
 *   `try`/`finally` (over a Set, a loop cost about a millisecond of compiling);
 * - `map` gives a packed array while its caller runs unoptimised but a holey one once the caller
 *   is optimised, so every function its results reach is compiled a second time.
 */

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

/** The protections a request went through, each once, in the order it met them. */
function protections(e: Evaluation): string[] {
  const out: string[] = [];
  const { applied } = e;
  for (let i = 0; i < applied.length; i++) {
    const t = applied[i] as string;
    if (PROTECTIONS.has(t) && !out.includes(t)) out.push(t);
  }
  const o = e.outcome;
  if ((o.kind === 'refuse' || o.kind === 'close' || o.kind === 'auth') && PROTECTIONS.has(o.by))
    if (!out.includes(o.by)) out.push(o.by);
  return out;
}

const reachable = (e: Evaluation) => e.outcome.kind === 'forward' || e.outcome.kind === 'respond';

/** The outcome in words, with the protections a request that got through went through. */
function shown(e: Evaluation): string {
  const through = reachable(e) ? protections(e) : [];
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

/** One version of the policy, and the rules it has that the other lacks. */
interface Side {
  readonly policy: Json;
  readonly differing: Differing;
  /** Its runs' watch (one a side: a run at a time). */
  readonly watch: DifferingWatch;
  /**
   * The guard expressions of its differing rules; undefined when the run must tell whether one
   * fires: not a list of texts, or one reads what the actions before it wrote.
   */
  readonly guards: readonly (readonly string[])[] | undefined;
}

function side(policy: Json, differing: Differing): Side {
  // Loops, not callbacks: see "How the preview's code is written" (above).
  const guards: (readonly string[])[] = [];
  let known = true;
  const phases = phaseRules(policy);
  for (let p = 0; p < phases.length; p++) {
    const { key, rules } = phases[p] as PhaseRules;
    const indexes = key === undefined ? undefined : differing.byKey.get(key);
    if (indexes === undefined) continue;
    // In the order the rules stand (each set is filled so).
    const list = rules as readonly { expressions?: unknown }[];
    for (let r = 0; r < list.length; r++) {
      if (!indexes.has(r)) continue;
      const expressions = list[r]?.expressions;
      // As the evaluator reads them: none (or null) is a guard that holds.
      if (expressions === undefined || expressions === null) guards.push([]);
      else if (readsRequestAlone(expressions)) guards.push(expressions);
      else known = false;
    }
  }
  return {
    policy,
    differing,
    watch: new DifferingWatch(differing),
    guards: known ? guards : undefined,
  };
}

/** Whether a guard is a list of texts, each of which reads no run state. */
function readsRequestAlone(expressions: unknown): expressions is string[] {
  if (!Array.isArray(expressions)) return false;
  for (let i = 0; i < expressions.length; i++) {
    const e: unknown = expressions[i];
    if (typeof e !== 'string' || guardReads(e) === 'run') return false;
  }
  return true;
}

/**
 * Whether a differing rule of `side` may fire on the request: false when each one's guard,
 * reading the request alone (or the case's facts), does not hold on it, wherever it stands.
 */
function mayFire(side: Side, prepared: PreparedRequest): boolean {
  const { guards } = side;
  if (guards === undefined) return true;
  for (let i = 0; i < guards.length; i++)
    if (prepared.fires(guards[i] as readonly string[]) !== false) return true;
  return false;
}

/**
 * `policy` on `prepared`, watched for its differing rules: the run stops as soon as it is past
 * the last of them without one firing (what follows is in the other version too, in the same
 * order), and gives undefined. Whether one fired is then `side.watch.any` (the run then went
 * to its end).
 */
function watchedRun(
  side: Side,
  prepared: PreparedRequest,
  given: PolicyGiven,
): Evaluation | undefined {
  side.watch.any = false;
  if (!mayFire(side, prepared)) return undefined;
  return evaluatePrepared(side.policy, prepared, given, side.watch);
}

/** A run watched for its differing rules (one object a run, not two closures and their scope). */
class DifferingWatch implements Watch {
  /** Whether a differing rule fired. */
  any = false;

  constructor(readonly differing: Differing) {}

  fired(key: string, rule: number): void {
    if (this.differing.byKey.get(key)?.has(rule) === true) this.any = true;
  }

  stop(phase: number, rule: number): boolean {
    const { last } = this.differing;
    return (
      !this.any && (last === undefined || phase > last[0] || (phase === last[0] && rule > last[1]))
    );
  }
}

/**
 * `request` through both policies, or undefined when they decide it alike. With `sides` (the
 * rules each version has that the other lacks): a rule whose guard does not hold changes
 * nothing, so a request on which no differing rule of either version fires goes through both
 * as through the rules they share, alike. Such a request is found by the differing rules'
 * guards alone where they read no run state, by runs that stop past the last differing rule
 * otherwise; where one fires, both versions are evaluated to the end. Without `sides`: both
 * evaluated from scratch, each on a request prepared for it alone (the reference the shortcuts
 * are held to).
 */
function evaluateBoth(
  before: Json,
  after: Json,
  sides: readonly [Side, Side] | undefined,
  requests: Preparer,
  request: PolicyRequest,
  given: PolicyGiven,
): [Evaluation, Evaluation] | undefined {
  if (sides === undefined) {
    return [
      evaluatePrepared(before, requests.prepare(request, given), given) as Evaluation,
      evaluatePrepared(after, requests.prepare(request, given), given) as Evaluation,
    ];
  }
  const shared = requests.prepare(request, given);
  const old = watchedRun(sides[0], shared, given);
  if (sides[0].watch.any)
    return [old as Evaluation, evaluatePrepared(after, shared, given) as Evaluation];
  const now = watchedRun(sides[1], shared, given);
  if (!sides[1].watch.any) return undefined;
  return [old ?? (evaluatePrepared(before, shared, given) as Evaluation), now as Evaluation];
}

/**
 * Requests prepared for the evaluator. With shortcuts, by request object, for the givens whose
 * facts are not among a request's variables (a probe and its logged-in variants share their
 * request object), and their parts shared by the requests alike; without, each from scratch.
 */
class Preparer {
  readonly #prepared = new Map<PolicyRequest, PreparedRequest>();
  readonly #share: RequestShare | undefined;

  constructor(
    readonly endpointUrl: string,
    readonly shortcuts: boolean,
  ) {
    this.#share = shortcuts ? new Map() : undefined;
  }

  prepare(request: PolicyRequest, given: PolicyGiven): PreparedRequest {
    const shareable =
      this.shortcuts &&
      given.conn === undefined &&
      given.time === undefined &&
      given.secrets === undefined;
    let known = shareable ? this.#prepared.get(request) : undefined;
    if (known === undefined) {
      known = prepareRequest(this.endpointUrl, request, given, this.#share);
      if (shareable) this.#prepared.set(request, known);
    }
    return known;
  }
}

/**
 * By URL, the methods and changes listed: a variant (an address, a login) of a request that
 * changes the same way folds. A few per URL, read in place (no key text to write and hash).
 */
type Folded = Map<string, (readonly [string, string, string])[]>;

function isFolded(folded: Folded, method: string, url: string, was: string, is: string): boolean {
  const atUrl = folded.get(url);
  if (atUrl === undefined) return false;
  for (let i = 0; i < atUrl.length; i++) {
    const fold = atUrl[i] as readonly [string, string, string];
    if (fold[0] === method && fold[1] === was && fold[2] === is) return true;
  }
  return false;
}

/** The declared cases as the evaluator reads their requests, each with its name. */
function caseRequests(
  cases: readonly PolicyCase[],
): { request: PolicyRequest; given: PolicyGiven; name?: string }[] {
  const out: { request: PolicyRequest; given: PolicyGiven; name?: string }[] = [];
  for (const c of cases) {
    out.push({
      request: {
        method: c.request.method.toUpperCase(),
        url: c.request.url,
        clientIp: c.request.client_ip,
        headers: headerLists(c.request.headers),
        ...(c.request.tls === undefined ? {} : { tls: c.request.tls }),
      },
      given: c.given ?? {},
      name: c.name,
    });
  }
  return out;
}

/** How the preview is worked out; its result is the same either way. */
export interface ImpactOptions {
  /**
   * Shortcuts (the default): each request is prepared once for both policies (and a probe once
   * for its logged-in variants), the outcomes of guards that read the request alone are shared
   * between the policies, and a request on which no differing rule fires is not evaluated to
   * its end. Off: every request through both policies from scratch.
   */
  readonly shortcuts?: boolean;
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
  options: ImpactOptions = {},
): PolicyImpact {
  const shortcuts = options.shortcuts !== false;
  if (before === undefined) return { changes: [], requests: 0 };
  // The two versions' rules numbered by content once, for the probes and the differing rules.
  const numbers = numberRules([before, after]);
  const probes = probesFor(endpointUrl, [before, after], numbers);
  // The declared cases first, then the probes (a list of its own only when there are cases).
  const requests: readonly { request: PolicyRequest; given: PolicyGiven; name?: string }[] =
    cases.length === 0 ? probes : [...caseRequests(cases), ...probes];
  const changes: ImpactChange[] = [];
  const seen = new Set<string>();
  const folded: Folded = new Map();
  const differing = shortcuts ? differingRules(before, after, numbers) : undefined;
  const sides: readonly [Side, Side] | undefined =
    differing === undefined ? undefined : [side(before, differing[0]), side(after, differing[1])];
  const preparer = new Preparer(endpointUrl, shortcuts);
  for (let i = 0; i < requests.length; i++) {
    const { request, given, name } = requests[i] as (typeof requests)[number];
    const both = evaluateBoth(before, after, sides, preparer, request, given);
    if (both === undefined) continue;
    const old = both[0];
    const now = both[1];
    const was = shown(old);
    const is = shown(now);
    if (was === is) continue;
    if (name === undefined && isFolded(folded, request.method, request.url, was, is)) continue;
    const words = describeRequest(request, given, name);
    if (seen.has(words)) continue;
    seen.add(words);
    const fold = [request.method, was, is] as const;
    const atUrl = folded.get(request.url);
    if (atUrl === undefined) folded.set(request.url, [fold]);
    else atUrl.push(fold);
    const kept = protections(now);
    const lost = protections(old).filter((p) => !kept.includes(p));
    changes.push({
      request: words,
      before: was,
      after: is,
      ...(reachable(now) && lost.length > 0 ? { weakened: `without ${lost.join(', ')}` } : {}),
    });
  }
  return { changes, requests: requests.length };
}
