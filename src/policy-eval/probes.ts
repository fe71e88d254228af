/**
 * Requests that tell two policies apart, generated from what their guards test (read from the
 * parsed expressions, not from their text): every path a guard names, just inside and just
 * outside its prefix, logged in (with the e-mail addresses the guards name) and not; and from
 * the rules that differ between the policies, the hosts, methods, headers and query parameters
 * their guards name and each CIDR of a guard or a `restrict-ips` at its edges, on the guards'
 * paths. Deterministic and bounded (`MAX_PROBES`). Pure.
 */

import { CHECKED_KEPT, checkedCel } from '../hosted/cel.js';
import type { PolicyGiven } from '../manifest/policy/tests.js';
import type { PolicyRequest } from './evaluate.js';
import { cidrEdges, parseCidr, parseIp } from './ip.js';
import { numberRules, type RuleNumbers } from './rules.js';

export interface Probe {
  readonly request: PolicyRequest;
  readonly given: PolicyGiven;
}

/** What a probe not logged in is given: nothing (one object, never changed). */
const NOTHING_GIVEN: PolicyGiven = Object.freeze({});

/** Probes per endpoint at most: the preview's cost stays bounded whatever the policy. */
export const MAX_PROBES = 240;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT']);
const AUTH = new Set(['oauth', 'openid-connect', 'saml']);

interface Facts {
  readonly paths: Set<string>;
  readonly hosts: Set<string>;
  readonly methods: Set<string>;
  readonly ips: Set<string>;
  readonly emails: Set<string>;
  /** Header names, lower case. */
  readonly headers: Set<string>;
  readonly query: Set<string>;
  readonly values: Set<string>;
}

/** A node of the engine's syntax tree, as far as the probes read it. */
interface Node {
  readonly op: string;
  readonly args: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && 'op' in value && 'args' in value;

function stringConst(node: unknown): string | undefined {
  return isNode(node) && node.op === 'value' && typeof node.args === 'string'
    ? node.args
    : undefined;
}

function selectField(node: unknown): string | undefined {
  return isNode(node) && node.op === '.' ? (node.args as [unknown, string])[1] : undefined;
}

/** The literal start of a regex anchored at a path (`^/api/v[0-9]` -> `/api/v`). */
function regexPrefix(text: string): string | undefined {
  if (!text.startsWith('^/')) return undefined;
  const literal = /^[^.*+?()[\]{}|\\$^]*/.exec(text.slice(1))?.[0];
  return literal === undefined || literal === '' ? undefined : literal;
}

function classify(text: string, facts: Facts): void {
  const prefix = regexPrefix(text);
  if (prefix !== undefined) facts.paths.add(prefix);
  else if (text.startsWith('/')) facts.paths.add(text);
  else if (text.includes('/') && parseCidr(text) !== undefined) {
    for (const ip of cidrEdges(parseCidr(text) as NonNullable<ReturnType<typeof parseCidr>>))
      facts.ips.add(ip);
  } else if (parseIp(text) !== undefined) facts.ips.add(text);
  else if (METHODS.has(text.toUpperCase()) && text === text.toUpperCase()) facts.methods.add(text);
  else if (/^[^@\s]+@[^@\s]+$/.test(text)) facts.emails.add(text);
  else if (/^@[^@\s]+\.[a-z]{2,}$/i.test(text)) facts.emails.add(`someone${text}`);
  else if (/^([a-z0-9-]+\.)+[a-z]{2,}(:\d+)?$/i.test(text)) facts.hosts.add(text.toLowerCase());
  else facts.values.add(text);
}

/** What an expression names, in the order its tree is walked: a string, a header, a parameter. */
type Named = readonly (readonly ['text' | 'header' | 'query', string])[];

/**
 * What an expression names, read from its checked program (kept by text: `expressionFacts`):
 * every node of its tree, iteratively (the tree's depth is the input's), in one loop (no
 * callback: see "How the preview's code is written", ./impact.ts).
 */
function namesOf(expression: string): Named {
  const out: ['text' | 'header' | 'query', string][] = [];
  const checked = checkedCel(expression);
  // An expression that does not parse names nothing: validation reports it.
  if ('issue' in checked) return out;
  const stack: unknown[] = [checked.program.ast];
  while (stack.length > 0) {
    const item = stack.pop();
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) stack.push(item[i]);
      continue;
    }
    if (!isNode(item)) continue;
    if (item.op === 'value') {
      if (typeof item.args === 'string') out.push(['text', item.args]);
      continue;
    }
    if (Array.isArray(item.args)) stack.push(item.args);
    if (item.op !== 'call' && item.op !== '[]') continue;
    const [fn, args] =
      item.op === 'call' ? (item.args as [string, unknown[]]) : ['_[_]', item.args as unknown[]];
    const first = stringConst(args[0]);
    if (fn === 'getReqHeader' || fn === 'hasReqHeader') {
      if (first !== undefined) out.push(['header', first]);
    } else if (fn === 'getQueryParam' || fn === 'hasQueryParam') {
      if (first !== undefined) out.push(['query', first]);
    } else if (fn === '_[_]') {
      const key = stringConst(args[1]);
      const on = selectField(args[0]);
      if (key !== undefined && on === 'headers') out.push(['header', key]);
      if (key !== undefined && on === 'query_params') out.push(['query', key]);
    }
  }
  return out;
}

function readExpression(expression: string, facts: Facts): void {
  const named = namesOf(expression);
  for (let i = 0; i < named.length; i++) {
    const item = named[i] as Named[number];
    const text = item[1];
    if (item[0] === 'text') classify(text, facts);
    else if (item[0] === 'header') header(facts, text);
    else facts.query.add(text);
  }
}

function header(facts: Facts, name: string): void {
  facts.headers.add(name.toLowerCase());
}

type Json = Readonly<Record<string, unknown>>;

type RuleJson = { expressions?: unknown; actions?: unknown };

/**
 * Whether the rules every list has (by content) stand in the same order in each; when not,
 * every rule may decide otherwise, and every rule is read as changed.
 */
function commonInOrder(ids: readonly (readonly number[])[]): boolean {
  // Loops, not callbacks: see "How the preview's code is written" (./impact.ts).
  let first: number[] | undefined;
  for (let i = 0; i < ids.length; i++) {
    const own = ids[i] as readonly number[];
    const common: number[] = [];
    for (let r = 0; r < own.length; r++) {
      const id = own[r] as number;
      if (inAll(ids, id)) common.push(id);
    }
    first ??= common;
    if (!sameNumbers(common, first)) return false;
  }
  return true;
}

/** Whether every list of `ids` has `id`. */
function inAll(ids: readonly (readonly number[])[], id: number): boolean {
  for (let i = 0; i < ids.length; i++)
    if (!(ids[i] as readonly number[]).includes(id)) return false;
  return true;
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What one rule's actions name: the edges of its `restrict-ips` ranges. */
function readActions(rule: RuleJson, facts: Facts): void {
  const actions = listOf(rule?.actions);
  for (let i = 0; i < actions.length; i++) {
    const action = (actions[i] ?? {}) as { type?: unknown; config?: Json | null };
    const config = action.config;
    if (action.type !== 'restrict-ips' || typeof config !== 'object' || config === null) continue;
    readRanges(config.allow, facts);
    readRanges(config.deny, facts);
  }
}

/** The edges of each range of a `restrict-ips` list. */
function readRanges(list: unknown, facts: Facts): void {
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const c: unknown = list[i];
    const range = typeof c === 'string' ? parseCidr(c) : undefined;
    if (range === undefined) continue;
    const edges = cidrEdges(range);
    for (let e = 0; e < edges.length; e++) facts.ips.add(edges[e] as string);
  }
}

const emptyFacts = (): Facts => ({
  paths: new Set(),
  hosts: new Set(),
  methods: new Set(),
  ips: new Set(),
  emails: new Set(),
  headers: new Set(),
  query: new Set(),
  values: new Set(),
});

/** What one guard expression names, as lists (read in place: `merge`, `readRules`). */
interface ExpressionFacts {
  readonly paths: readonly string[];
  readonly hosts: readonly string[];
  readonly methods: readonly string[];
  readonly ips: readonly string[];
  readonly emails: readonly string[];
  /** Header names, lower case. */
  readonly headers: readonly string[];
  readonly query: readonly string[];
  readonly values: readonly string[];
}

/**
 * What each guard expression names, kept by its text (bounded like the parses): the same
 * guards are read for both policies of a preview, and plan after plan, whatever rule objects
 * carry them. Never changed: merged into the facts of a preview, in the order the rules and
 * their guards stand (the order a rule-by-rule reading gives).
 */
const factsByExpression = new Map<string, ExpressionFacts>();

function expressionFacts(expression: string): ExpressionFacts {
  let own = factsByExpression.get(expression);
  if (own === undefined) {
    const read = emptyFacts();
    readExpression(expression, read);
    own = {
      paths: Array.from(read.paths),
      hosts: Array.from(read.hosts),
      methods: Array.from(read.methods),
      ips: Array.from(read.ips),
      emails: Array.from(read.emails),
      headers: Array.from(read.headers),
      query: Array.from(read.query),
      values: Array.from(read.values),
    };
    if (factsByExpression.size >= CHECKED_KEPT)
      factsByExpression.delete(factsByExpression.keys().next().value as string);
    factsByExpression.set(expression, own);
  }
  return own;
}

function addEach(to: Set<string>, items: readonly string[]): void {
  for (let i = 0; i < items.length; i++) to.add(items[i] as string);
}

function merge(own: ExpressionFacts, facts: Facts): void {
  addEach(facts.paths, own.paths);
  addEach(facts.hosts, own.hosts);
  addEach(facts.methods, own.methods);
  addEach(facts.ips, own.ips);
  addEach(facts.emails, own.emails);
  addEach(facts.query, own.query);
  addEach(facts.values, own.values);
  addEach(facts.headers, own.headers);
}

/** A rule's guards or actions, as the probes read them: none unless a list. */
function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : NONE;
}

const NONE: readonly unknown[] = Object.freeze([]);

/** What every rule's guards reach: the paths and e-mail addresses they name, and a login. */
interface Reach {
  readonly paths: Set<string>;
  readonly emails: Set<string>;
  auth: boolean;
}

/**
 * What the rules name, in one reading of every rule of `lists` (each policy's, in order): into
 * `all`, what every rule adds to the probes whether it changed or not (the paths and e-mail
 * addresses its guards name, and whether one logs in; a rule alike in content to one read, in
 * the other version, names the same); into `facts`, all that the rules not in every list name
 * (all the rules when the common ones changed order, or for one policy alone), their actions
 * included.
 */
function readRules(
  lists: readonly (readonly RuleJson[])[],
  ids: readonly (readonly number[])[],
  all: Reach,
  facts: Facts,
): void {
  const everyRule = lists.length < 2 || !commonInOrder(ids);
  const read = new Set<number>();
  for (let i = 0; i < lists.length; i++) {
    const list = lists[i] as readonly RuleJson[];
    const own = ids[i] as readonly number[];
    for (let r = 0; r < list.length; r++) {
      const id = own[r] as number;
      const fresh = !read.has(id);
      if (fresh) read.add(id);
      const changed = everyRule || !inAll(ids, id);
      if (!fresh && !changed) continue;
      const rule = list[r] as RuleJson;
      const guards = listOf(rule?.expressions);
      for (let g = 0; g < guards.length; g++) {
        const e = guards[g];
        if (typeof e !== 'string') continue;
        const named = expressionFacts(e);
        if (fresh) {
          addEach(all.paths, named.paths);
          addEach(all.emails, named.emails);
        }
        if (changed) merge(named, facts);
      }
      if (fresh && !all.auth && logsIn(rule)) all.auth = true;
      if (changed) readActions(rule, facts);
    }
  }
}

function logsIn(rule: RuleJson): boolean {
  const actions = listOf(rule?.actions);
  for (let i = 0; i < actions.length; i++) {
    const type = (actions[i] as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && AUTH.has(type)) return true;
  }
  return false;
}

/** Around a path a guard names: it, just inside it, and just outside it (added to `out`). */
function pathsAround(path: string, out: Set<string>): void {
  out.add(path);
  out.add(`${path}x`);
  out.add(path.endsWith('/') ? `${path}x` : `${path}/x`);
  if (path.length > 1) out.add(path.slice(0, -1));
  const parent = path.slice(0, path.lastIndexOf('/') + 1);
  if (parent !== '') out.add(parent);
}

/**
 * The probes of an endpoint, as they are added: at most `MAX_PROBES`, each path's URL written
 * once (the variants of a path carry the same string, so the preview, which finds a request's
 * shared part by URL, reads it once).
 */
class ProbeList {
  readonly out: Probe[] = [];
  /**
   * The URLs of the probes that are a plain GET (no address, header or login): the one kind two
   * lists below can repeat (a guard's path with a query, a guard's host that is the endpoint's).
   * Every other probe is new by construction: each list is of distinct values (sets), and each
   * differs from the others in a field it alone sets.
   */
  readonly #plainUrls = new Set<string>();
  readonly #urls = new Map<string, string>();

  constructor(readonly base: string) {}

  add(request: PolicyRequest, given: PolicyGiven = NOTHING_GIVEN): void {
    if (this.out.length < MAX_PROBES) this.out.push({ request, given });
  }

  addPlain(request: PolicyRequest): void {
    if (this.#plainUrls.has(request.url)) return;
    this.#plainUrls.add(request.url);
    this.add(request);
  }

  urlOf(path: string): string {
    let url = this.#urls.get(path);
    if (url === undefined) {
      url = `${this.base}${path}`;
      this.#urls.set(path, url);
    }
    return url;
  }
}

/**
 * Each policy's rules (every list's, every phase's, in the policy's order) and their numbers,
 * read by the lists `numbers` keeps for it.
 */
function rulesInOrder(
  policies: readonly Json[],
  numbers: RuleNumbers,
): { lists: RuleJson[][]; ids: number[][] } {
  const lists: RuleJson[][] = [];
  const ids: number[][] = [];
  for (let p = 0; p < policies.length; p++) {
    const policy = policies[p] as Json;
    const rules: RuleJson[] = [];
    const own: number[] = [];
    for (const [key, numbered] of numbers[p] as ReadonlyMap<string, readonly number[]>) {
      const list = policy[key] as readonly RuleJson[];
      for (let i = 0; i < numbered.length; i++) {
        rules.push(list[i] as RuleJson);
        own.push(numbered[i] as number);
      }
    }
    lists.push(rules);
    ids.push(own);
  }
  return { lists, ids };
}

/**
 * The probes of an endpoint at `endpointUrl` for `policies` (the old and the new one): requests
 * built from what either one's guards test, at most `MAX_PROBES`, in a stable order.
 */
export function probesFor(
  endpointUrl: string,
  policies: readonly Json[],
  numbers: RuleNumbers = numberRules(policies),
): Probe[] {
  // Every guard's paths; the rest (methods, addresses, headers, logins) from the rules that
  // differ: what an unchanged rule tests decides alike before and after, but where it stands in
  // the path space is where a changed rule in front of it shows. Loops, not callbacks: see
  // "How the preview's code is written" (./impact.ts).
  const { lists, ids } = rulesInOrder(policies, numbers);
  const all: Reach = { paths: new Set(['/']), emails: new Set(), auth: false };
  // The root and a GET are always probed, first.
  const facts = emptyFacts();
  facts.paths.add('/');
  facts.methods.add('GET');
  readRules(lists, ids, all, facts);
  addAll(facts.paths, all.paths);
  addAll(facts.emails, all.emails);
  const endpoint = new URL(endpointUrl.replace(/^(tls|tcp):/, 'https:'));
  const probes = new ProbeList(`https://${endpoint.host}`);
  // Every path around a guard's; the other facts on the guards' own paths only: a method, an
  // address or a header that changes an outcome does so where a guard looks.
  const named = Array.from(facts.paths);
  const around = new Set<string>();
  for (let i = 0; i < named.length; i++) pathsAround(named[i] as string, around);
  // A path's logged-in variants are the same request (one object: the preview prepares it once).
  const plain: PolicyRequest[] = [];
  const aroundPaths = Array.from(around);
  for (let i = 0; i < aroundPaths.length; i++) {
    const p = aroundPaths[i] as string;
    if (p.startsWith('/')) plain.push({ method: 'GET', url: probes.urlOf(p) });
  }
  for (let i = 0; i < plain.length; i++) probes.addPlain(plain[i] as PolicyRequest);
  // Behind a login of any rule, a change shows only to a logged-in request.
  if (all.auth) {
    facts.emails.add('someone@example.com');
    const emails = Array.from(facts.emails);
    for (let e = 0; e < emails.length; e++) {
      const given = { identity: { email: emails[e] as string } };
      for (let i = 0; i < plain.length; i++) probes.add(plain[i] as PolicyRequest, given);
    }
  }
  // A GET on a guard's path is among the plain probes already.
  const methods = Array.from(facts.methods);
  for (let m = 0; m < methods.length; m++) {
    const method = methods[m] as string;
    if (method === 'GET') continue;
    for (let i = 0; i < named.length; i++)
      probes.add({ method, url: probes.urlOf(named[i] as string) });
  }
  const ips = Array.from(facts.ips);
  for (let a = 0; a < ips.length; a++) {
    const ip = ips[a] as string;
    for (let i = 0; i < named.length; i++)
      probes.add({ method: 'GET', url: probes.urlOf(named[i] as string), clientIp: ip });
  }
  facts.values.add('edgesync-probe');
  for (const name of facts.headers) {
    // Every value a guard names.
    for (const value of facts.values) {
      for (let i = 0; i < named.length; i++) {
        probes.add({
          method: 'GET',
          url: probes.urlOf(named[i] as string),
          headers: { [name]: [value] },
        });
      }
    }
  }
  for (const name of facts.query) {
    for (let i = 0; i < named.length; i++) {
      const query = `${named[i] as string}?${encodeURIComponent(name)}=1`;
      probes.addPlain({ method: 'GET', url: probes.urlOf(query) });
    }
  }
  for (const host of facts.hosts) {
    for (let i = 0; i < named.length; i++)
      probes.addPlain({ method: 'GET', url: `https://${host}${named[i] as string}` });
  }
  return probes.out;
}

/** Every item of `from` added to `to`. */
function addAll(to: Set<string>, from: ReadonlySet<string>): void {
  for (const item of from) to.add(item);
}
